/**
 * examples/procfile-stack as a user meets it (DESIGN.md §7): built by the project's build,
 * linked or installed into a temporary XDG_DATA_HOME, selected with `[stack] backend`, and
 * driven through the normal commands of the built CLI, with real processes and real HTTP.
 */
import {expect} from 'chai'
import {spawn, spawnSync} from 'node:child_process'
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import net from 'node:net'
import path from 'node:path'

import type {BackendEntry} from '../../src/core/registry/registry.js'
import type {StackContainer} from '../../src/sdk/stack.js'

import {builtPackage} from '../support/built-package.js'
import {fixturePluginRoot} from '../support/oclif-config.js'
import {cleanupTemp} from '../support/repo.js'
import {
  FEAT_OFFSET,
  freePortBase,
  freshHomes,
  groupAlive,
  httpText,
  killRecorded,
  procfileRepo,
  recordedPids,
  refused,
  userPlugins,
  yardIn,
} from './support.js'

describe('examples/procfile-stack, a third-party stack backend (DESIGN.md §7)', function () {
  this.timeout(120_000)
  let root: string
  let example: string

  before(async function () {
    this.timeout(300_000)
    root = await builtPackage()
    example = path.join(root, 'examples', 'procfile-stack')
  })

  afterEach(() => {
    killRecorded()
    cleanupTemp()
  })

  it('is listed by yard backends --json as an ok stack backend of its plugin once linked', () => {
    const homes = freshHomes()
    const linked = yardIn(root, homes, ['plugins', 'link', example])
    expect(linked.stderr).to.not.match(/error/i)
    const entries = yardIn(root, homes, ['backends', '--json']).json as BackendEntry[]
    expect(entries.find((entry) => entry.id === 'procfile-stack')).to.deep.equal({
      id: 'procfile-stack',
      kind: 'stack',
      plugin: 'procfile-stack',
      version: '1.0.0',
      contract: 1,
      status: 'ok',
    })
    expect(userPlugins(yardIn(root, homes, ['plugins', '--json']).json)).to.deep.equal([['procfile-stack', 'link']])
  })

  it('gets the SDK subpath @yard-dev/cli/backend from the built package: contract version, factory schema, errors', () => {
    const script = `
      import * as sdk from '@yard-dev/cli/backend'
      import hook from './dist/index.js'
      const [factory] = await hook()
      console.log(JSON.stringify({
        contract: sdk.CONTRACT_VERSION,
        kinds: sdk.BACKEND_KINDS,
        schema: sdk.backendFactorySchema.safeParse(factory).success,
        bad: sdk.backendFactorySchema.safeParse({...factory, kind: 'database'}).success,
        check: sdk.checkFactory({...factory, contract: '2.x'}, 1, 'p').status,
        codes: [new sdk.InputError('x').code, new sdk.RefusedError('x').code, new sdk.OperationError('x').code, sdk.ExitCode.execFailed],
      }))`
    const child = spawnSync(process.execPath, ['--input-type=module', '--eval', script], {
      cwd: example,
      encoding: 'utf8',
    })
    expect(child.status, child.stderr).to.equal(0)
    expect(JSON.parse(child.stdout)).to.deep.equal({
      contract: 1,
      kinds: ['machine', 'stack', 'cache', 'sandbox'],
      schema: true,
      bad: false,
      check: 'incompatible',
      codes: [2, 3, 1, 125],
    })
  })

  it('runs main and feat on base and base + offset; ps shows them, logs reads them, down leaves no process, exec has no box (125)', async () => {
    const homes = freshHomes()
    const base = await freePortBase()
    const {repo, feat} = procfileRepo(base)
    yardIn(root, homes, ['plugins', 'link', example])

    expect(yardIn(root, homes, ['up'], {cwd: repo}).stdout).to.include(`is up: APP_PORT=${base}`)
    expect(yardIn(root, homes, ['up'], {cwd: feat}).stdout).to.include(`is up: APP_PORT=${base + FEAT_OFFSET}`)
    expect(await httpText(base)).to.equal(`web of main on ${base}`)
    expect(await httpText(base + FEAT_OFFSET)).to.equal(`web of feat on ${base + FEAT_OFFSET}`)

    const mainRows = yardIn(root, homes, ['ps', '--json'], {cwd: repo}).json as StackContainer[]
    const featRows = yardIn(root, homes, ['ps', '--json', '--worktree', 'feat'], {cwd: repo}).json as StackContainer[]
    const pids = recordedPids(homes.state)
    expect(mainRows).to.deep.equal([
      {service: 'web', container: `pid ${pids.app[0]}`, state: 'running', ports: [{host: base, container: base}]},
      {service: 'worker', container: `pid ${pids.app[1]}`, state: 'running', ports: []},
    ])
    expect(featRows.map((row) => [row.service, row.state, row.ports])).to.deep.equal([
      ['web', 'running', [{host: base + FEAT_OFFSET, container: base + FEAT_OFFSET}]],
      ['worker', 'running', []],
    ])
    const logs = yardIn(root, homes, ['logs', 'web'], {cwd: feat}).stdout
    expect(logs).to.equal(`web | listening on ${base + FEAT_OFFSET}\n`)

    // A second up is a no-op: the same processes keep running.
    yardIn(root, homes, ['up'], {cwd: repo})
    expect(recordedPids(homes.state).app).to.deep.equal(pids.app)

    const exec = yardIn(root, homes, ['exec', 'feat', '--', 'true'], {cwd: repo, expected: 125})
    expect(exec.stderr).to.include('the stack backend "procfile-stack" has no box')

    const mainDown = yardIn(root, homes, ['down', '--json'], {cwd: repo}).json as {removed: string[]}
    expect(mainDown.removed).to.deep.equal([`process web (pid ${pids.app[0]})`, `process worker (pid ${pids.app[1]})`])
    yardIn(root, homes, ['down'], {cwd: feat})
    for (const pid of [...pids.app, ...pids['app-feat']])
      expect(groupAlive(pid), `process group ${pid}`).to.equal(false)
    expect(await refused(base)).to.equal(true)
    expect(await refused(base + FEAT_OFFSET)).to.equal(true)
    expect(yardIn(root, homes, ['ps', '--json'], {cwd: repo}).json).to.deep.equal([])
    expect(existsSync(path.join(homes.state, 'procfile-stack', 'app', 'web.log')), 'logs stay after down').to.equal(
      true,
    )
  })

  it('lists plugins whose hook throws, whose backend is malformed or whose contract major differs, and keeps every other command working', async () => {
    const homes = freshHomes()
    const base = await freePortBase()
    const {repo} = procfileRepo(base)
    for (const fixture of ['throwing', 'malformed', 'future'])
      yardIn(root, homes, ['plugins', 'link', '--no-install', fixturePluginRoot(fixture)])
    yardIn(root, homes, ['plugins', 'link', example])

    const entries = yardIn(root, homes, ['backends', '--json']).json as BackendEntry[]
    const byPlugin = (plugin: string) =>
      entries.filter((entry) => entry.plugin === plugin).map((entry) => [entry.id, entry.status, entry.error])
    expect(byPlugin('yard-fixture-throwing')).to.deep.equal([
      [null, 'broken', 'its yard:backends hook threw: license server unreachable'],
      [null, 'broken', 'its yard:backends hook threw: no licence key configured'],
    ])
    expect(byPlugin('yard-fixture-malformed').map(([, status]) => status)).to.deep.equal([
      'broken',
      'broken',
      'broken',
      'broken',
      'broken',
    ])
    expect(byPlugin('yard-fixture-malformed')[1][2]).to.equal(
      'malformed backend factory: create: must be a function, got undefined',
    )
    expect(byPlugin('yard-fixture-future')).to.deep.equal([
      [
        'future-machine',
        'incompatible',
        'implements backend contract 2, but this yard supports contract 1: install a release of yard-fixture-future made for contract 1, or a yard that supports contract 2',
      ],
    ])
    expect(byPlugin('procfile-stack')).to.deep.equal([['procfile-stack', 'ok', undefined]])

    const table = yardIn(root, homes, ['backends']).stdout
    expect(table).to.match(/future-machine +machine +yard-fixture-future +2\.0\.0 +2\.0 +incompatible/)
    expect(yardIn(root, homes, ['ports', '--json'], {cwd: repo}).json).to.deep.include({
      worktree: 'main',
      ports: {APP_PORT: base},
    })
    yardIn(root, homes, ['up'], {cwd: repo})
    expect(await httpText(base)).to.equal(`web of main on ${base}`)
    yardIn(root, homes, ['down'], {cwd: repo})
    expect(await refused(base)).to.equal(true)
  })

  it('is gone after yard plugins uninstall: selecting it is exit 2 naming the backend and how to install it', () => {
    const homes = freshHomes()
    const {repo} = procfileRepo(20_000)
    yardIn(root, homes, ['plugins', 'link', example])
    yardIn(root, homes, ['plugins', 'uninstall', 'procfile-stack'])
    expect(userPlugins(yardIn(root, homes, ['plugins', '--json']).json)).to.deep.equal([])
    const entries = yardIn(root, homes, ['backends', '--json']).json as BackendEntry[]
    expect(entries.map((entry) => entry.id)).to.not.include('procfile-stack')
    for (const verb of ['up', 'ps']) {
      const result = yardIn(root, homes, [verb], {cwd: repo, expected: 2})
      expect(result.stderr).to.include('unknown stack backend "procfile-stack"')
      expect(result.stderr).to.include('yard plugins install')
      expect(result.stderr).to.include('[stack] backend')
    }

    expect(recordedPids(homes.state)).to.deep.equal({})
  })

  it("follows a service's log with logs -f until interrupted, and nuke removes processes, logs and state", async () => {
    const homes = freshHomes()
    const base = await freePortBase()
    const {repo} = procfileRepo(base)
    yardIn(root, homes, ['plugins', 'link', '--no-install', example])
    yardIn(root, homes, ['up'], {cwd: repo})
    const env = {...process.env, ...homes.env}
    delete env.NODE_ENV
    for (const [key, value] of Object.entries(homes.env)) if (value === undefined) delete env[key]
    const follower = spawn(process.execPath, [path.join(root, 'bin', 'run.js'), 'logs', '-f', 'worker'], {
      cwd: repo,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let seen = ''
    try {
      // The worker prints a tick a second: three lines prove lines written after the start arrive.
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no third tick; got: ${seen}`)), 30_000)
        follower.stdout.on('data', (chunk: Buffer) => {
          seen += chunk.toString()
          if (seen.split('\n').filter((line) => line === 'worker | tick').length >= 3) {
            clearTimeout(timer)
            resolve()
          }
        })
      })
    } finally {
      follower.kill('SIGINT')
    }

    expect(seen).to.not.include('web |')
    const dir = path.join(homes.state, 'procfile-stack', 'app')
    const pids = recordedPids(homes.state).app
    expect(yardIn(root, homes, ['nuke', '--dry-run', '--json'], {cwd: repo}).stdout).to.include(`logs and state ${dir}`)
    expect(existsSync(dir)).to.equal(true)
    yardIn(root, homes, ['nuke'], {cwd: repo})
    expect(existsSync(dir)).to.equal(false)
    for (const pid of pids) expect(groupAlive(pid), `process group ${pid}`).to.equal(false)
  })

  it('refuses a project name whose processes another clone started (exit 3), saying to set a distinct prefix', async () => {
    const homes = freshHomes()
    const base = await freePortBase()
    // Two clones in directories of the same name: the same prefix and project, other owners.
    const first = procfileRepo(base).repo
    const second = procfileRepo(base).repo
    yardIn(root, homes, ['plugins', 'link', '--no-install', example])
    yardIn(root, homes, ['up'], {cwd: first})
    const pids = recordedPids(homes.state).app
    const clash = yardIn(root, homes, ['up'], {cwd: second, expected: 3})
    expect(clash.stderr).to.include(`the project name app is in use by another checkout (${first})`)
    expect(clash.stderr).to.include('set a distinct [project] prefix')
    expect(recordedPids(homes.state).app).to.deep.equal(pids)
    expect(await httpText(base)).to.equal(`web of main on ${base}`)
  })

  it('refuses a malformed Procfile (exit 2) and a busy port (exit 3) before starting anything', async () => {
    const homes = freshHomes()
    const base = await freePortBase()
    const {feat} = procfileRepo(base)
    yardIn(root, homes, ['plugins', 'link', example])

    const procfile = path.join(feat, 'Procfile')
    const good = readFileSync(procfile, 'utf8')
    writeFileSync(procfile, `${good}web: echo twice\nthis line has no name\n`)
    const malformed = yardIn(root, homes, ['up'], {cwd: feat, expected: 2})
    expect(malformed.stderr).to.include(`${procfile} is not a valid Procfile`)
    expect(malformed.stderr).to.include('line 4: process type "web" is already defined on line 2')
    expect(malformed.stderr).to.include('line 5: "this line has no name" is not "name: command"')
    expect(recordedPids(homes.state)).to.deep.equal({})
    writeFileSync(procfile, good)

    const holder = net.createServer()
    await new Promise<void>((resolve) => holder.listen(base + FEAT_OFFSET, '127.0.0.1', resolve))
    try {
      const busy = yardIn(root, homes, ['up'], {cwd: feat, expected: 3})
      expect(busy.stderr).to.include(`port ${base + FEAT_OFFSET} (APP_PORT) is busy, so web cannot listen on it`)
    } finally {
      holder.close()
    }

    expect(recordedPids(homes.state)['app-feat']).to.equal(undefined)
  })
})
