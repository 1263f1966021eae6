/**
 * One identity in both modes (DESIGN.md §3, §5.2): a worktree and a sandbox of one name share
 * project, offset and ports; a clashing newcomer sandbox is pinned under the project lock; a busy
 * host port refuses before any pod exists. And cold vs stale caches at create (§5.1).
 */
import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import {readFileSync, renameSync} from 'node:fs'
import path from 'node:path'

import type {CacheStatus} from '../../../src/sdk/cache.js'

import {repoIdentity} from '../../../src/sdk/repo-identity.js'
import {ensureDefaultImage, sweep} from '../../support/podman.js'
import {addWorktree, cleanupTemp} from '../../support/repo.js'
import {yard} from '../../support/yard.js'
import {makeApp, makeUpstream, podExists, SANDBOX_TEST_PREFIX, type SandboxFixture} from './support.js'

const prefix = `${SANDBOX_TEST_PREFIX}p`

interface Ports {
  worktree: string
  kind: string
  project: string
  offset: number
  ports: Record<string, number>
  clashesWith: string[]
}

describe('sandboxes and worktrees: one identity (DESIGN.md §3.4, §5.2)', function () {
  this.timeout(240_000)
  let fixture: SandboxFixture
  let upstream: string
  const run = async (args: string[]) => yard(args, {cwd: fixture.app, env: fixture.env})

  before(async () => {
    sweep(SANDBOX_TEST_PREFIX)
    const image = await ensureDefaultImage()
    upstream = makeUpstream('app')
    const compose = [
      'services:',
      '  web:',
      `    image: ${image}`,
      `    command: ["sh", "-c", "trap 'exit 0' TERM; sleep 100000 & wait"]`,
      '    ports:',
      '      - "${WEB_PORT}:8080"',
      '',
    ].join('\n')
    fixture = makeApp(prefix, 'WEB_PORT = 38800', {'compose.yaml': compose})
    addWorktree(fixture.app, 'feat')
  })

  after(async () => {
    if (fixture) await run(['down', '--worktree', 'feat']).catch(() => undefined)
    sweep(SANDBOX_TEST_PREFIX)
    cleanupTemp()
  })

  it("with worktree feat's stack up, sandbox feat is refused (exit 3, busy port) before any pod exists, its leases released (acceptance 6)", async () => {
    const up = await run(['up', '--worktree', 'feat'])
    expect(up.exitCode, up.stderr).to.equal(0)
    const refused = await run(['sandbox', 'create', 'feat', '--repo', upstream])
    expect(refused.exitCode, refused.stderr).to.equal(3)
    expect(refused.stderr).to.include('host port 38859 (WEB_PORT) of sandbox feat is busy')
    expect(podExists(`${prefix}-feat`)).to.equal(false)
    const caches = (await run(['cache', 'list', '--json'])).json as CacheStatus[]
    expect(caches.find((cache) => cache.key === repoIdentity(upstream).key)?.borrowers).to.deep.equal([])
    const down = await run(['down', '--worktree', 'feat'])
    expect(down.exitCode, down.stderr).to.equal(0)
  })

  it('worktree feat and sandbox feat report the same project, offset and port through ports --worktree, ports --sandbox and sandbox list (acceptance 6)', async () => {
    const created = await run(['sandbox', 'create', 'feat', '--repo', upstream])
    expect(created.exitCode, created.stderr).to.equal(0)
    const worktree = (await run(['ports', '--worktree', 'feat', '--json'])).json as Ports
    const sandbox = (await run(['ports', '--sandbox', 'feat', '--json'])).json as Ports
    const listed = (await run(['sandbox', 'list', '--json'])).json as Array<{
      name: string
      project: string
      offset: number
      ports: Record<string, number>
    }>
    const expected = {project: `${prefix}-feat`, offset: 59, ports: {WEB_PORT: 38_859}}
    for (const row of [worktree, sandbox, listed.find((entry) => entry.name === 'feat')!]) {
      expect({project: row.project, offset: row.offset, ports: row.ports}).to.deep.equal(expected)
    }

    expect(sandbox.kind).to.equal('sandbox')
    expect(worktree.clashesWith).to.deep.equal([])
  })

  it('a sandbox alpha created while worktree feat exists (both hash to 59) is pinned to a free offset (acceptance 6)', async () => {
    const created = await run(['sandbox', 'create', 'alpha', '--repo', upstream, '--json'])
    expect(created.exitCode, created.stderr).to.equal(0)
    const result = created.json as {
      offset: number
      offsetSource: string
      pinned: {hashOffset: number; clashedWith: string[]}
    }
    expect(result.pinned).to.deep.equal({hashOffset: 59, clashedWith: ['feat']})
    expect(result).to.deep.include({offset: 1, offsetSource: 'pin'})
    expect(created.stderr).to.include('pinned alpha to offset 1')
    expect(readFileSync(path.join(fixture.app, 'yard.local.toml'), 'utf8')).to.match(
      /^alpha = 1 # yard: clash with feat$/m,
    )
    // The personal pin file is not left for `git add -A` to commit (the fixture has no .gitignore for it).
    expect(spawnSync('git', ['check-ignore', '-q', '--', 'yard.local.toml'], {cwd: fixture.app}).status).to.equal(0)
    expect(created.stderr).to.include('note: added /yard.local.toml to')
    const all = (await run(['ports', '--all', '--json'])).json as Ports[]
    expect(all.map((row) => [row.worktree, row.kind, row.offset, row.clashesWith])).to.deep.equal([
      ['main', 'main', 0, []],
      ['feat', 'worktree', 59, []],
      ['alpha', 'sandbox', 1, []],
    ])
  })

  it("a cold clone failure fails create fast with git's reason and leaves no pod (acceptance 7)", async () => {
    const missing = path.join(path.dirname(upstream), 'gone.git')
    const started = Date.now()
    const failed = await run(['sandbox', 'create', 'cold', '--repo', missing])
    expect(failed.exitCode).to.equal(1)
    expect(failed.stderr).to.include(`could not clone ${missing}`)
    expect(failed.stderr).to.match(/does not appear to be a git repository|does not exist/)
    // What to retry is the sandbox, not a cache command.
    expect(failed.stderr).to.include('then run yard sandbox create cold again').and.not.to.include('yard cache add')
    expect(Date.now() - started).to.be.below(30_000)
    expect(podExists(`${prefix}-cold`)).to.equal(false)
  })

  it('a warm cache whose remote vanished lets create succeed with a stale warning naming the cache and its last fetch (acceptance 7)', async () => {
    const warm = makeUpstream('warm')
    const {key} = repoIdentity(warm)
    expect((await run(['cache', 'add', warm])).exitCode).to.equal(0)
    const before = ((await run(['cache', 'list', '--json'])).json as CacheStatus[]).find((cache) => cache.key === key)!
    renameSync(warm, `${warm}-moved`)
    const created = await run(['sandbox', 'create', 'warm', '--repo', warm, '--json'])
    expect(created.exitCode, created.stderr).to.equal(0)
    expect(created.stderr).to.include(`the cache ${key} is stale since ${before.lastFetched}`)
    expect(Object.keys((created.json as {stale: Record<string, string>}).stale)).to.deep.equal(['warm'])
    expect(podExists(`${prefix}-warm`)).to.equal(true)
    const listed = (await run(['sandbox', 'list', '--json'])).json as Array<{
      name: string
      repos: Array<{stale: boolean}>
    }>
    expect(listed.find((row) => row.name === 'warm')!.repos[0].stale).to.equal(true)
  })
})
