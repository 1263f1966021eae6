/**
 * Untrusted worktrees on a podman machine (docs/worktrees.md, "Untrusted worktrees") with the
 * FAKE `podman` of test/support/: `worktree add --untrusted` records it in yard.local.toml; its
 * first `up` creates a second machine `yard-<prefix>-<name>` with exactly two volumes (the
 * worktree read-write, the git common dir read-only) while the shared machine keeps its two;
 * `worktree remove` removes that machine; the one-VM rule refuses `up` while the shared machine
 * runs, and `--stop-shared` stops it first, listing the stacks that went down.
 */
import {expect} from 'chai'
import {readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {FakePodmanMachine} from '../../support/fake-podman-machine.js'
import {ensureBusyboxImage, fetchText, podman, podmanEnv, sweep, webService} from '../../support/podman.js'
import {cleanupTemp, makeRepo} from '../../support/repo.js'
import {yard} from '../../support/yard.js'

const PREFIX = 'yardtest-u'
const IMAGE = 'localhost/yardtest-u-busybox:1'
const WEB_PORT = 38_500

const web = (text: string) =>
  ['services:', '  web:', webService(text, '${WEB_PORT}:8080').replace(/image: .*/, `image: ${IMAGE}`), ''].join('\n')

/** The on-disk config the fake keeps for a machine (podman's `<ConfigDir>/<name>.json`). */
function machineConfig(
  fake: FakePodmanMachine,
  name: string,
): {Mounts: Array<{Source: string; Target: string; ReadOnly: boolean}>} {
  return JSON.parse(readFileSync(path.join(fake.dir, 'machine', 'applehv', `${name}.json`), 'utf8'))
}

describe('untrusted worktrees on a podman machine (docs/worktrees.md)', function () {
  this.timeout(240_000)
  const fakes: FakePodmanMachine[] = []
  const machineFake = () => {
    const fake = new FakePodmanMachine()
    fakes.push(fake)
    return fake
  }

  const toml = (n: number, port: number) =>
    `[project]\nprefix = "${PREFIX}${n}"\n\n[machine]\nbackend = "podman-machine"\n\n[ports]\nWEB_PORT = ${port}\n\n[box]\nimage = "${IMAGE}"\n`

  before(async () => {
    sweep(PREFIX)
    await ensureBusyboxImage(IMAGE)
  })

  after(() => {
    for (const fake of fakes) fake.stopServices()
    sweep(PREFIX)
    cleanupTemp()
  })

  it('add --untrusted records it; its first up creates yard-<prefix>-pr-123 with exactly the worktree rw and the common dir ro; the shared machine keeps its mounts; remove removes that machine', async () => {
    const repo = makeRepo({
      'yard.toml': toml(1, WEB_PORT),
      'compose.yaml': web('hello from pr-123'),
      '.gitignore': 'yard.local.toml\n',
    })
    const fake = machineFake()
    const env = {...podmanEnv(), ...fake.env}
    const run = async (...args: string[]) => yard(args, {cwd: repo, env})
    const shared = `yard-${PREFIX}1`
    const own = `yard-${PREFIX}1-pr-123`
    const worktree = path.join(`${repo}-worktrees`, 'pr-123')
    const common = path.join(repo, '.git')

    expect((await run('machine', 'init')).exitCode).to.equal(0)
    const sharedMounts = machineConfig(fake, shared).Mounts
    expect(sharedMounts.map((mount) => [mount.Source, mount.ReadOnly])).to.deep.equal([
      [repo, false],
      [`${repo}-worktrees`, false],
    ])

    const add = await run('worktree', 'add', 'pr-123', '--untrusted', '--no-fetch')
    expect(add.exitCode, add.stderr).to.equal(0)
    expect(add.stdout).to.include(`untrusted: its stack and box run on machine ${own}`)
    expect(readFileSync(path.join(repo, 'yard.local.toml'), 'utf8')).to.include(
      '[worktrees.pr-123]\ntrust = "untrusted"\n',
    )
    // Its machine is made on its first `up`, and the shared one is not started for it.
    expect(fake.machineCalls('init').map((argv) => argv.at(-1))).to.deep.equal([shared])
    expect(fake.machineCalls('start')).to.deep.equal([])

    const list = await run('worktree', 'list', '--json')
    expect(list.exitCode, list.stderr).to.equal(0)
    expect((list.json as Array<{name: string; trust: string}>).map((row) => [row.name, row.trust])).to.deep.equal([
      ['main', 'trusted'],
      ['pr-123', 'untrusted'],
    ])

    const up = await run('up', '--worktree', 'pr-123')
    expect(up.exitCode, up.stderr).to.equal(0)
    const inits = fake.machineCalls('init')
    expect(inits.map((argv) => argv.at(-1))).to.deep.equal([shared, own])
    expect(inits[1].filter((_, index, argv) => argv[index - 1] === '--volume')).to.deep.equal([
      `${worktree}:${worktree}`,
      `${common}:${common}:ro`,
    ])
    expect(machineConfig(fake, own).Mounts.map((mount) => [mount.Source, mount.ReadOnly])).to.deep.equal([
      [worktree, false],
      [common, true],
    ])
    expect(machineConfig(fake, shared).Mounts).to.deep.equal(sharedMounts)
    expect(fake.machineCalls('start').map((argv) => argv.at(-1))).to.deep.equal([own])
    // The stack runs on its own machine's engine, at its own offset.
    const {offset} = (list.json as Array<{name: string; offset: number}>)[1]
    expect(await fetchText(WEB_PORT + offset)).to.equal('hello from pr-123')
    const socket = `unix://${fake.socketPath(own)}`
    const hosts = fake
      .calls()
      .filter((call) => call.argv[0] === 'create' || call.argv[0] === 'run')
      .map((call) => call.CONTAINER_HOST)
    expect(hosts).to.not.be.empty
    expect(new Set(hosts)).to.deep.equal(new Set([socket]))

    // Its box sees exactly what its machine mounts, and `yard exec` reminds whose box it is.
    const box = await run('box', 'up', '--worktree', 'pr-123')
    expect(box.exitCode, box.stderr).to.equal(0)
    const mounts = JSON.parse(podman('inspect', '--format', '{{json .Mounts}}', `${PREFIX}1-pr-123-box`)) as Array<{
      Source: string
      RW: boolean
    }>
    expect(mounts.map((mount) => [mount.Source, mount.RW]).sort()).to.deep.equal(
      [
        [common, false],
        [worktree, true],
      ].sort(),
    )
    const exec = await run('exec', 'pr-123', '--', 'sh', '-c', 'echo in-box > in-box.txt')
    expect(exec.exitCode, exec.stderr).to.equal(0)
    expect(exec.stderr).to.include(`note: worktree pr-123 is untrusted: its box runs on machine ${own}`)
    expect(readFileSync(path.join(worktree, 'in-box.txt'), 'utf8')).to.equal('in-box\n')
    expect((await run('exec', 'pr-123', '--', 'sh', '-c', `ls ${path.join(repo, 'README')}`)).exitCode).to.not.equal(0)
    const config = readFileSync(path.join(common, 'config'), 'utf8')
    expect(
      (await run('exec', 'pr-123', '--', 'sh', '-c', `echo '[core]' >> ${path.join(common, 'config')}`)).exitCode,
    ).to.not.equal(0)
    expect(readFileSync(path.join(common, 'config'), 'utf8')).to.equal(config)
    // The worktree has new files now: remove snapshots them (and would refuse without --force).

    const status = await run('machine', 'status', '--worktree', 'pr-123', '--json')
    expect(status.exitCode, status.stderr).to.equal(0)
    expect(status.json).to.include({name: own, state: 'running'})

    const remove = await run('worktree', 'remove', 'pr-123', '--yes', '--force')
    expect(remove.exitCode, remove.stderr).to.equal(0)
    expect(remove.stdout).to.include(`removed machine ${own}`)
    expect(fake.machineCalls('rm')).to.deep.equal([['rm', '--force', own]])
    expect(readFileSync(path.join(repo, 'yard.local.toml'), 'utf8')).to.not.include('pr-123')
    const sharedStatus = await run('machine', 'status', '--json')
    expect(sharedStatus.exitCode, sharedStatus.stderr).to.equal(0)
    expect(sharedStatus.json).to.deep.include({name: shared, mounts: [repo, `${repo}-worktrees`]})
  })

  it('up of an untrusted worktree while the shared machine runs exits 3 naming it and --stop-shared; with it the shared machine stops first and the stacks that went down are listed', async () => {
    const port = WEB_PORT + 100
    const repo = makeRepo({'yard.toml': toml(2, port), 'compose.yaml': web('main'), '.gitignore': 'yard.local.toml\n'})
    const fake = machineFake()
    const env = {...podmanEnv(), ...fake.env}
    const run = async (...args: string[]) => yard(args, {cwd: repo, env})
    const shared = `yard-${PREFIX}2`
    const own = `yard-${PREFIX}2-pr-9`

    const upMain = await run('up')
    expect(upMain.exitCode, upMain.stderr).to.equal(0)
    expect((await run('worktree', 'add', 'pr-9', '--untrusted', '--no-fetch')).exitCode).to.equal(0)

    const refused = await run('up', '--worktree', 'pr-9')
    expect(refused.exitCode, refused.stderr).to.equal(3)
    expect(refused.stderr).to.include(`machine ${shared} is running`)
    expect(refused.stderr).to.include('--stop-shared')
    expect(refused.stderr).to.include(`these stacks go down with it: ${PREFIX}2`)
    expect(fake.machineCalls('init').map((argv) => argv.at(-1))).to.deep.equal([shared])
    expect(fake.machineCalls('stop')).to.deep.equal([])

    const before = fake.machineCalls().length
    const up = await run('up', '--worktree', 'pr-9', '--stop-shared', '--json')
    expect(up.exitCode, up.stderr).to.equal(0)
    expect((up.json as {stoppedShared: unknown}).stoppedShared).to.deep.equal({machine: shared, stacks: [`${PREFIX}2`]})
    const text = await run('up', '--worktree', 'pr-9')
    expect(text.exitCode, text.stderr).to.equal(0)
    expect(text.stdout).to.not.include('stopped the shared machine')
    // The shared machine stopped before the untrusted one was created and started.
    const verbs = fake
      .machineCalls()
      .slice(before)
      .filter((argv) => ['init', 'start', 'stop'].includes(argv[0]))
      .map((argv) => `${argv[0]} ${argv.at(-1)}`)
    expect(verbs).to.deep.equal([`stop ${shared}`, `init ${own}`, `start ${own}`])

    // The way back: a trusted checkout's up names the untrusted machine to stop, never to share.
    const back = await run('up')
    expect(back.exitCode, back.stderr).to.equal(3)
    expect(back.stderr).to.include(`podman machine ${own} is running`)
    expect(back.stderr).to.not.include('[machine] name')
    // `yard machine rm --worktree NAME` removes that machine alone; the worktree and its record stay.
    const rm = await run('machine', 'rm', '--worktree', 'pr-9', '--yes')
    expect(rm.exitCode, rm.stderr).to.equal(0)
    expect(fake.machineCalls('rm')).to.deep.equal([['rm', '--force', own]])
    expect(readFileSync(path.join(repo, 'yard.local.toml'), 'utf8')).to.include('[worktrees.pr-9]')
  })

  it('the --stop-shared line lists the stacks in text output; an env_file outside the worktree is refused (exit 3)', async () => {
    const port = WEB_PORT + 200
    const repo = makeRepo({'yard.toml': toml(3, port), 'compose.yaml': web('main'), '.gitignore': 'yard.local.toml\n'})
    const fake = machineFake()
    const env = {...podmanEnv(), ...fake.env}
    const run = async (...args: string[]) => yard(args, {cwd: repo, env})
    expect((await run('up')).exitCode).to.equal(0)
    expect((await run('worktree', 'add', 'pr-7', '--untrusted', '--no-fetch')).exitCode).to.equal(0)
    const up = await run('up', '--worktree', 'pr-7', '--stop-shared')
    expect(up.exitCode, up.stderr).to.equal(0)
    expect(up.stdout).to.include(`stopped the shared machine yard-${PREFIX}3 first; these stacks went down: ${PREFIX}3`)
    // yard renders on the host: an env_file outside the worktree is refused even on a VM.
    writeFileSync(
      path.join(`${repo}-worktrees`, 'pr-7', 'compose.yaml'),
      web('pr-7').replace('    ports:', '    env_file: [/etc/hostname]\n    ports:'),
    )
    const envFile = await run('up', '--worktree', 'pr-7')
    expect(envFile.exitCode, envFile.stderr).to.equal(3)
    expect(envFile.stderr).to.include('its stack reaches beyond it: service web reads env_file /etc/hostname')
  })
})
