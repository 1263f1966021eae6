/**
 * Stacks on a podman machine (DESIGN.md §4.2, §4.3) with the FAKE `podman` of test/support/: a
 * started fake machine is a real `podman system service` on the socket it reports, so
 * podman-compose and the engine calls run for real through CONTAINER_HOST. Read and teardown
 * verbs never create or start the machine; `up` and `worktree add` do, once; `up` warns about
 * binds outside the machine's two mounts.
 */
import {expect} from 'chai'
import net from 'node:net'
import path from 'node:path'

import {FakePodmanMachine} from '../../support/fake-podman-machine.js'
import {
  ensureBusyboxImage,
  fetchText,
  podman,
  podmanEnv,
  projectObjects,
  sweep,
  webService,
} from '../../support/podman.js'
import {cleanupTemp, makeRepo} from '../../support/repo.js'
import {yard} from '../../support/yard.js'

const PREFIX = 'yardtest-m'
const IMAGE = 'localhost/yardtest-m-busybox:1'
const WEB_PORT = 38_800
const MACHINE = `yard-${PREFIX}1`

/** The tests' own busybox service image (no registry here). */
const ensureImage = async () => ensureBusyboxImage(IMAGE)

const web = (text: string, published: string, extra: string[] = []) =>
  ['services:', '  web:', webService(text, published).replace(/image: .*/, `image: ${IMAGE}`), ...extra, ''].join('\n')

describe('stacks on a podman machine (DESIGN.md §4.3)', function () {
  this.timeout(180_000)
  const fakes: FakePodmanMachine[] = []
  const machineFake = () => {
    const fake = new FakePodmanMachine()
    fakes.push(fake)
    return fake
  }

  const toml = (n: number, port: number) =>
    `[project]\nprefix = "${PREFIX}${n}"\n\n[machine]\nbackend = "podman-machine"\n\n[ports]\nWEB_PORT = ${port}\n`

  before(async () => {
    sweep(PREFIX)
    await ensureImage()
  })

  after(() => {
    for (const fake of fakes) fake.stopServices()
    sweep(PREFIX)
    cleanupTemp()
  })

  it('down, nuke, ps and box down say nothing to do and start nothing; up creates and starts the machine once and compose runs on its socket', async () => {
    const repo = makeRepo({
      'yard.toml': toml(1, WEB_PORT),
      'compose.yaml': web('hello from the machine', '${WEB_PORT}:8080'),
    })
    const fake = machineFake()
    const env = {...podmanEnv(), ...fake.env}
    const run = async (...args: string[]) => yard(args, {cwd: repo, env})

    const down = await run('down')
    expect(down.exitCode, down.stderr).to.equal(0)
    expect(down.stdout).to.include('nothing runs, nothing to do')
    expect(down.stderr).to.include(`machine ${MACHINE} (podman-machine) is not running`)
    const nuke = await run('nuke')
    expect(nuke.exitCode, nuke.stderr).to.equal(0)
    expect(nuke.stdout).to.include('nothing to remove, nothing to do')
    expect((await run('ps', '--json')).json).to.deep.equal([])
    expect((await run('box', 'down')).exitCode).to.equal(0)
    expect(fake.machineCalls('init')).to.deep.equal([])
    expect(fake.machineCalls('start')).to.deep.equal([])
    // Nothing reached the host's engine either: only `podman machine` was asked.
    expect(fake.calls().filter((call) => call.argv[0] !== 'machine')).to.deep.equal([])

    const before = fake.calls().length
    const up = await run('up')
    expect(up.exitCode, up.stderr).to.equal(0)
    const verbs = fake
      .machineCalls()
      .map((argv) => argv[0])
      .filter((verb) => verb === 'init' || verb === 'start')
    expect(verbs).to.deep.equal(['init', 'start'])
    const socket = `unix://${fake.socketPath(MACHINE)}`
    const engineCalls = fake
      .calls()
      .slice(before)
      .filter((call) => call.argv[0] !== 'machine')
    // podman-compose's own podman calls (those creating the project's containers) carry the socket…
    const composeCalls = engineCalls.filter(
      (call) =>
        ['create', 'run'].includes(call.argv[0]) &&
        call.argv.some((word) => word.includes(`com.docker.compose.project=${PREFIX}1`)),
    )
    expect(composeCalls, JSON.stringify(engineCalls.map((call) => call.argv.slice(0, 2)))).to.not.be.empty
    // …and so does every other engine call of `up`: none fell back to the host's socket.
    for (const call of engineCalls)
      expect({argv: call.argv.slice(0, 3), host: call.CONTAINER_HOST, docker: call.DOCKER_HOST}).to.deep.equal({
        argv: call.argv.slice(0, 3),
        host: socket,
        docker: socket,
      })
    expect(await fetchText(WEB_PORT)).to.equal('hello from the machine')
    expect(projectObjects(`${PREFIX}1`).containers).to.have.length(1)

    const again = await run('up')
    expect(again.exitCode, again.stderr).to.equal(0)
    expect(fake.machineCalls('init')).to.have.length(1)
    expect(fake.machineCalls('start')).to.have.length(1)

    const downAgain = await run('down')
    expect(downAgain.exitCode, downAgain.stderr).to.equal(0)
    expect(downAgain.stdout).to.include('removed container')
    expect(projectObjects(`${PREFIX}1`).containers).to.deep.equal([])
  })

  it('up warns about a bind outside both mounts, naming the path, and not about one inside the checkout', async () => {
    const port = WEB_PORT + 100
    const repo = makeRepo({
      'yard.toml': toml(2, port),
      'compose.yaml': web('binds', '${WEB_PORT}:8080', [
        '    volumes:',
        '      - /srv/data:/data',
        '      - ./data:/inside',
      ]),
    })
    const fake = machineFake()
    // A busy port makes `up` stop (exit 3) after the check and before anything is created, so no
    // provider makes /srv/data on this host.
    const blocker = net.createServer()
    await new Promise<void>((resolve) => blocker.listen(port, '0.0.0.0', resolve))
    try {
      const up = await yard(['up'], {cwd: repo, env: {...podmanEnv(), ...fake.env}})
      expect(up.exitCode, up.stderr).to.equal(3)
      expect(up.stderr).to.match(
        /service web \(.*compose\.yaml\) binds \/srv\/data, outside machine yard-yardtest-m2's mounts/,
      )
      expect(up.stderr).to.not.include(path.join(repo, 'data'))
      expect(projectObjects(`${PREFIX}2`).containers).to.deep.equal([])
    } finally {
      await new Promise((resolve) => blocker.close(resolve))
    }
  })

  it('box up creates and starts an absent machine once and runs the box through its socket; box down takes it away', async () => {
    const repo = makeRepo({'yard.toml': `${toml(4, WEB_PORT + 300)}\n[box]\nimage = "${IMAGE}"\n`})
    const fake = machineFake()
    const env = {...podmanEnv(), ...fake.env}
    const up = await yard(['box', 'up'], {cwd: repo, env})
    expect(up.exitCode, up.stderr).to.equal(0)
    expect(
      fake
        .machineCalls()
        .map((argv) => argv[0])
        .filter((verb) => verb === 'init' || verb === 'start'),
    ).to.deep.equal(['init', 'start'])
    const socket = `unix://${fake.socketPath(`yard-${PREFIX}4`)}`
    const run = fake.calls().find((call) => call.argv[0] === 'run')
    expect(run?.argv).to.include(`${PREFIX}4-box`)
    expect(run?.CONTAINER_HOST).to.equal(socket)
    expect(podman('ps', '--filter', `name=^${PREFIX}4-box$`, '--format', '{{.Status}}')).to.match(/^Up /)
    const down = await yard(['box', 'down'], {cwd: repo, env})
    expect(down.exitCode, down.stderr).to.equal(0)
    expect(podman('ps', '--all', '--filter', `name=^${PREFIX}4-box$`, '--format', '{{.Names}}')).to.equal('')
    expect(fake.machineCalls('start')).to.have.length(1)
  })

  it('worktree add creates and starts an absent machine once; a second add finds it running', async () => {
    const repo = makeRepo({'yard.toml': toml(3, WEB_PORT + 200)})
    const fake = machineFake()
    const env = {...podmanEnv(), ...fake.env}
    const first = await yard(['worktree', 'add', 'feat', '--no-fetch'], {cwd: repo, env})
    expect(first.exitCode, first.stderr).to.equal(0)
    expect(first.stderr).to.include(`creating machine yard-${PREFIX}3`)
    const second = await yard(['worktree', 'add', 'fix', '--no-fetch'], {cwd: repo, env})
    expect(second.exitCode, second.stderr).to.equal(0)
    expect(fake.machineCalls('init')).to.have.length(1)
    expect(fake.machineCalls('start')).to.have.length(1)
    const mounts = fake.machineCalls('init')[0].filter((word, index, argv) => argv[index - 1] === '--volume')
    expect(mounts).to.deep.equal([`${repo}:${repo}`, `${repo}-worktrees:${repo}-worktrees`])
  })
})
