/**
 * `yard machine init | start | stop | status | rm` with the podman-machine backend (DESIGN.md
 * §4.3) against the FAKE `podman` of test/support/ (a VM cannot boot here): the argv yard hands
 * podman, the one-VM rule, a dead socket, moved mounts, and the confirmation of `rm`.
 */
import {expect} from 'chai'
import path from 'node:path'

import type {MachineStatus} from '../../../src/sdk/machine.js'

import {FakePodmanMachine} from '../../support/fake-podman-machine.js'
import {podmanEnv} from '../../support/podman.js'
import {cleanupTemp, makeRepo} from '../../support/repo.js'
import {yard} from '../../support/yard.js'

const TOML =
  '[project]\nprefix = "yardtest-m0"\n\n[machine]\nbackend = "podman-machine"\ncpus = 3\nmemory-mib = 3072\ndisk-gib = 30\n'

describe('yard machine with the podman-machine backend (DESIGN.md §4.3)', function () {
  this.timeout(60_000)
  const fakes: FakePodmanMachine[] = []
  let repo: string
  let root: string
  let fake: FakePodmanMachine
  let env: Record<string, string | undefined>

  beforeEach(() => {
    repo = makeRepo({'yard.toml': TOML})
    root = `${repo}-worktrees`
    fake = new FakePodmanMachine()
    fakes.push(fake)
    env = {...podmanEnv(), ...fake.env, YARD_MACHINE_BACKEND: undefined}
  })

  afterEach(() => {
    for (const started of fakes.splice(0)) started.stopServices()
  })

  after(cleanupTemp)

  const run = async (...args: string[]) => yard(args, {cwd: repo, env})

  it('init runs exactly one podman machine init: the configured sizes and the two path:path volumes, nothing else', async () => {
    const before = await run('machine', 'status', '--json')
    expect(before.exitCode, before.stderr).to.equal(0)
    expect(before.json).to.deep.equal({
      backend: 'podman-machine',
      name: 'yard-yardtest-m0',
      state: 'absent',
      socket: null,
      mounts: [],
      cpus: null,
      memoryMiB: null,
      diskGiB: null,
    })

    const init = await run('machine', 'init')
    expect(init.exitCode, init.stderr).to.equal(0)
    expect(init.stdout).to.include('created machine yard-yardtest-m0')
    expect(fake.machineCalls('init')).to.deep.equal([
      [
        'init',
        '--cpus',
        '3',
        '--memory',
        '3072',
        '--disk-size',
        '30',
        '--volume',
        `${repo}:${repo}`,
        '--volume',
        `${root}:${root}`,
        'yard-yardtest-m0',
      ],
    ])

    const again = await run('machine', 'init')
    expect(again.exitCode, again.stderr).to.equal(0)
    expect(again.stdout).to.include('already exists (stopped): nothing to do')
    expect(fake.machineCalls('init')).to.have.length(1)

    const status = await run('machine', 'status', '--json')
    expect(status.json).to.deep.equal({
      backend: 'podman-machine',
      name: 'yard-yardtest-m0',
      state: 'stopped',
      socket: `unix://${fake.socketPath('yard-yardtest-m0')}`,
      mounts: [repo, root],
      cpus: 3,
      memoryMiB: 3072,
      diskGiB: 30,
    })
    expect(status.stderr).to.equal('')
    expect(fake.machineCalls('start')).to.deep.equal([])
  })

  it('start refuses (exit 3) while another podman machine runs, naming it and both ways out, without podman machine start', async () => {
    fake.seed('podman-machine-default', {running: true})
    expect((await run('machine', 'init')).exitCode).to.equal(0)
    const start = await run('machine', 'start')
    expect(start.exitCode, start.stderr).to.equal(3)
    expect(start.stderr).to.include('podman machine podman-machine-default is running')
    expect(start.stderr).to.include('podman machine stop podman-machine-default')
    expect(start.stderr).to.include('[machine] name = "podman-machine-default"')
    expect(fake.machineCalls('start')).to.deep.equal([])
    const status = (await run('machine', 'status', '--json')).json as MachineStatus
    expect(status.state).to.equal('stopped')
  })

  it('start waits for the socket to answer; stop stops; status and yard env follow', async () => {
    expect((await run('machine', 'init')).exitCode).to.equal(0)
    const stopped = await run('env', '--format', 'json')
    expect(stopped.exitCode, stopped.stderr).to.equal(0)
    expect(stopped.json).to.not.have.property('CONTAINER_HOST')
    expect(stopped.stderr).to.include('machine yard-yardtest-m0 is not running')
    const start = await run('machine', 'start')
    expect(start.exitCode, start.stderr).to.equal(0)
    expect(start.stdout).to.include('started machine yard-yardtest-m0')
    expect(((await run('machine', 'status', '--json')).json as MachineStatus).state).to.equal('running')
    const socket = `unix://${fake.socketPath('yard-yardtest-m0')}`
    expect((await run('env', '--format', 'json')).json).to.deep.include({CONTAINER_HOST: socket, DOCKER_HOST: socket})
    const second = await run('machine', 'start')
    expect(second.stdout).to.include('already running')
    expect(fake.machineCalls('start')).to.deep.equal([['start', 'yard-yardtest-m0']])
    const stop = await run('machine', 'stop')
    expect(stop.exitCode, stop.stderr).to.equal(0)
    expect(fake.machineCalls('stop')).to.deep.equal([['stop', 'yard-yardtest-m0']])
    expect(((await run('machine', 'status', '--json')).json as MachineStatus).state).to.equal('stopped')
  })

  it("status --json says unresponsive when the machine runs by podman's word but its socket accepts no connection, with the fix", async () => {
    fake.seed('yard-yardtest-m0', {running: true, mounts: [repo, root]})
    const status = await run('machine', 'status', '--json')
    expect(status.exitCode, status.stderr).to.equal(0)
    expect(status.json).to.deep.include({
      state: 'unresponsive',
      socket: `unix://${fake.socketPath('yard-yardtest-m0')}`,
    })
    expect(status.stderr).to.include('yard machine stop && yard machine start')
    // Teardown verbs say the same instead of a raw dial error, and start nothing.
    const down = await run('down')
    expect(down.exitCode).to.equal(1)
    expect(down.stderr).to.include('does not answer').and.include('yard machine stop && yard machine start')
    expect(fake.machineCalls('start')).to.deep.equal([])
  })

  it('status warns, with the recreate command, when the mounts are not the main checkout and the worktrees root', async () => {
    fake.seed('yard-yardtest-m0', {running: false, mounts: [repo, '/old/worktrees']})
    const status = await run('machine', 'status', '--json')
    expect(status.exitCode).to.equal(0)
    expect((status.json as MachineStatus).mounts).to.deep.equal([repo, '/old/worktrees'])
    expect(status.stderr).to.include(`needs exactly ${repo} and ${root}`)
    expect(status.stderr).to.include('yard machine rm --yes && yard machine init && yard machine start')
  })

  it('rm refuses without --yes and a terminal (exit 3), --dry-run removes nothing, --yes removes', async () => {
    expect((await run('machine', 'init')).exitCode).to.equal(0)
    const refused = await run('machine', 'rm')
    expect(refused.exitCode, refused.stderr).to.equal(3)
    expect(refused.stderr).to.include('--yes')
    const dry = await run('machine', 'rm', '--dry-run')
    expect(dry.exitCode, dry.stderr).to.equal(0)
    expect(dry.stdout).to.include('would remove machine yard-yardtest-m0')
    expect(fake.machineCalls('rm')).to.deep.equal([])
    const removed = await run('machine', 'rm', '--yes')
    expect(removed.exitCode, removed.stderr).to.equal(0)
    expect(fake.machineCalls('rm')).to.deep.equal([['rm', '--force', 'yard-yardtest-m0']])
    expect(((await run('machine', 'status', '--json')).json as MachineStatus).state).to.equal('absent')
    const nothing = await run('machine', 'rm', '--yes')
    expect(nothing.stdout).to.include('there is no machine yard-yardtest-m0: nothing to do')
  })

  it('with the native backend the verbs have nothing to do and never run podman machine', async () => {
    const native = makeRepo({'yard.toml': '[machine]\nbackend = "native"\n'}, 'native')
    for (const verb of ['init', 'start', 'stop']) {
      const result = await yard(['machine', verb], {cwd: native, env})
      expect(result.exitCode, result.stderr).to.equal(0)
      expect(result.stdout).to.include("the native machine is the host's podman (no VM): nothing to")
    }

    expect(fake.machineCalls()).to.deep.equal([])
  })

  it('a machine name that would pass for an option is refused (exit 2) before podman is asked', async () => {
    const bad = makeRepo(
      {'yard.toml': TOML.replace('backend = "podman-machine"', 'backend = "podman-machine"\nname = "--now"')},
      'bad',
    )
    const init = await yard(['machine', 'init'], {cwd: bad, env})
    expect(init.exitCode, init.stderr).to.equal(2)
    // Refused when the config is read, naming the file and key (the backend checks the name again).
    expect(init.stderr).to.include(
      `${path.join(bad, 'yard.toml')}: invalid value at machine.name: must not start with "-"`,
    )
    expect(fake.machineCalls()).to.deep.equal([])
  })
})
