/**
 * The compose-stack backend on real podman and podman-compose (DESIGN.md §4.2): main and two
 * worktrees run at once, each on its own ports and volumes; a busy port and a second `up`;
 * a worktree running its own compose file; teardown after its directory is gone; ports that
 * collide between worktrees (cases/README.md case 6).
 */
import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import {rmSync} from 'node:fs'
import net from 'node:net'
import path from 'node:path'

import type {StackContainer} from '../../../src/sdk/stack.js'

import {hashOffset} from '../../../src/core/identity/identity.js'
import {
  dataService,
  fetchText,
  podman,
  podmanEnv,
  podmanTry,
  prepareStackTests,
  projectObjects,
  sweep,
  webService,
} from '../../support/podman.js'
import {cleanupTemp, git, makeRepo, writeFile} from '../../support/repo.js'
import {projectRoot, yard} from '../../support/yard.js'

const PREFIX = 'yardtest-s1'
const WEB_BASE = 38_200

function compose(page: string): string {
  return [
    'services:',
    '  web:',
    webService(page, '${WEB_PORT:-38200}:8080'),
    '  store:',
    dataService('data'),
    'volumes:',
    '  data:',
    '',
  ].join('\n')
}

describe('compose-stack: every checkout its own stack (DESIGN.md §4.2)', function () {
  this.timeout(180_000)
  let repo: string
  let env: Record<string, string | undefined>
  const worktree = (name: string) => path.join(`${repo}-worktrees`, name)
  const run = async (args: string[]) => yard(args, {cwd: repo, env})

  before(async () => {
    await prepareStackTests()
    repo = makeRepo({
      'yard.toml': `[project]\nprefix = "${PREFIX}"\n\n[ports]\nWEB_PORT = ${WEB_BASE}\n`,
      'compose.yaml': compose('hello ${WORKTREE:-main}'),
    })
    for (const name of ['feat', 'fix', 'alpha']) git(repo, 'worktree', 'add', '-q', '-b', `wt/${name}`, worktree(name))
    // fix's own compose file differs from main's (DESIGN.md §3.5: files resolve against the targeted checkout).
    writeFile(worktree('fix'), 'compose.yaml', compose('own file of ${WORKTREE:-main}'))
    env = podmanEnv()
  })

  after(() => {
    sweep(PREFIX)
    cleanupTemp()
  })

  it('refuses a busy port (exit 3, port and key) and starts nothing', async () => {
    const port = WEB_BASE + hashOffset('feat')
    const listener = net.createServer()
    await new Promise<void>((resolve) => listener.listen(port, '0.0.0.0', resolve))
    try {
      const refused = await run(['up', '--worktree', 'feat'])
      expect(refused.exitCode, refused.stderr).to.equal(3)
      expect(refused.stderr).to.include(`port ${port} (WEB_PORT) is in use`)
      expect(projectObjects(`${PREFIX}-feat`).containers).to.deep.equal([])
    } finally {
      await new Promise((resolve) => listener.close(resolve))
    }
  })

  it('runs main, feat and fix at once, each on base + offset with its own name, its own file and its own volume', async () => {
    for (const target of ['main', 'feat', 'fix']) {
      const up = await run(['up', '--worktree', target])
      expect(up.exitCode, up.stderr).to.equal(0)
      expect(up.stderr, 'WEB_PORT is in [ports]: no fixed-port warning').not.to.include('warning')
    }

    expect(await fetchText(WEB_BASE)).to.equal('hello main')
    expect(await fetchText(WEB_BASE + hashOffset('feat'))).to.equal('hello feat')
    expect(await fetchText(WEB_BASE + hashOffset('fix'))).to.equal('own file of fix')

    podman('exec', `${PREFIX}-feat_store_1`, 'sh', '-c', 'echo written-in-feat > /data/value')
    expect(podman('exec', `${PREFIX}-feat_store_1`, 'cat', '/data/value')).to.equal('written-in-feat')
    expect(podmanTry('exec', `${PREFIX}_store_1`, 'cat', '/data/value').status).not.to.equal(0)

    const ps = await run(['ps', '--worktree', 'feat', '--json'])
    expect(ps.exitCode).to.equal(0)
    const rows = ps.json as StackContainer[]
    expect(rows.map((row) => Object.keys(row))).to.deep.equal([
      ['service', 'container', 'state', 'ports'],
      ['service', 'container', 'state', 'ports'],
    ])
    expect(rows.map((row) => [row.service, row.state])).to.deep.equal([
      ['store', 'running'],
      ['web', 'running'],
    ])
    expect(rows[1].ports).to.deep.equal([{host: WEB_BASE + hashOffset('feat'), container: 8080}])
  })

  it('leaves a running stack as it is on a second up', async () => {
    const ids = () => {
      const names = podman(
        'ps',
        '--all',
        '--filter',
        `label=com.docker.compose.project=${PREFIX}-feat`,
        '--format',
        '{{.Names}}',
      ).split('\n')
      return podman('container', 'inspect', '--format', '{{.Id}} {{.State.Status}} {{.State.StartedAt}}', ...names)
        .split('\n')
        .sort()
    }

    const before = ids()
    const again = await run(['up', '--worktree', 'feat'])
    expect(again.exitCode, again.stderr).to.equal(0)
    expect(before).to.have.length(2)
    expect(ids()).to.deep.equal(before)
  })

  it('starts a stopped service again on up, keeping its container', async () => {
    const id = podman('container', 'inspect', '--format', '{{.Id}}', `${PREFIX}-feat_web_1`)
    podman('stop', '--time', '0', `${PREFIX}-feat_web_1`)
    const up = await run(['up', '--worktree', 'feat'])
    expect(up.exitCode, up.stderr).to.equal(0)
    expect(podman('container', 'inspect', '--format', '{{.Id}} {{.State.Status}}', `${PREFIX}-feat_web_1`)).to.equal(
      `${id} running`,
    )
    expect(await fetchText(WEB_BASE + hashOffset('feat'))).to.equal('hello feat')
  })

  it('refuses a worktree whose offset another running worktree holds, naming it (case 6)', async () => {
    expect(hashOffset('alpha')).to.equal(hashOffset('feat'))
    const clash = await run(['up', '--worktree', 'alpha'])
    expect(clash.exitCode).to.equal(3)
    expect(clash.stderr).to.match(
      new RegExp(
        String.raw`port ${WEB_BASE + hashOffset('feat')} \(WEB_PORT\) is in use by yard checkout ${PREFIX}-feat`,
      ),
    )
    expect(projectObjects(`${PREFIX}-alpha`).containers).to.deep.equal([])
  })

  it("logs shows a service's output through the provider", () => {
    const childEnv: NodeJS.ProcessEnv = {...process.env}
    for (const [key, value] of Object.entries(env)) {
      if (value === undefined) delete childEnv[key]
      else childEnv[key] = value
    }

    const logs = spawnSync(
      process.execPath,
      [path.join(projectRoot, 'bin', 'dev.js'), 'logs', 'web', '--worktree', 'feat'],
      {cwd: repo, env: childEnv, encoding: 'utf8'},
    )
    expect(logs.status, logs.stderr).to.equal(0)
    expect(logs.stdout).to.include('serving hello feat')
    expect(logs.stdout).not.to.include('serving hello main')
  })

  it('nukes a worktree whose directory was deleted by hand: containers, network and volumes', async () => {
    expect(projectObjects(`${PREFIX}-fix`).volumes).to.deep.equal([`${PREFIX}-fix_data`])
    rmSync(worktree('fix'), {recursive: true, force: true})
    const nuke = await run(['nuke', '--worktree', 'fix'])
    expect(nuke.exitCode, nuke.stderr).to.equal(0)
    expect(nuke.stdout).to.include(`removed volume ${PREFIX}-fix_data`)
    expect(projectObjects(`${PREFIX}-fix`)).to.deep.equal({containers: [], volumes: [], networks: []})
    expect(projectObjects(`${PREFIX}-feat`).containers).to.have.length(2)
  })

  it('down keeps volumes; teardown verbs with nothing running say so and exit 0', async () => {
    const down = await run(['down', '--worktree', 'feat'])
    expect(down.exitCode).to.equal(0)
    expect(down.stdout).to.include(`removed network ${PREFIX}-feat_default`)
    expect(projectObjects(`${PREFIX}-feat`)).to.deep.equal({
      containers: [],
      volumes: [`${PREFIX}-feat_data`],
      networks: [],
    })
    const again = await run(['down', '--worktree', 'feat'])
    expect(again.exitCode).to.equal(0)
    expect(again.stdout).to.include('nothing to do')
    const ps = await run(['ps', '--worktree', 'feat', '--json'])
    expect(ps.json).to.deep.equal([])
  })
})

describe('compose-stack: a box-only checkout (DESIGN.md §4.2)', () => {
  after(cleanupTemp)

  it('up says the checkout is box-only and exits 0, touching nothing', async () => {
    const repo = makeRepo({'yard.toml': `[project]\nprefix = "${PREFIX}-bo"\n`})
    const up = await yard(['up'], {cwd: repo, env: podmanEnv()})
    expect(up.exitCode, up.stderr).to.equal(0)
    expect(up.stdout).to.include('box-only')
  })
})
