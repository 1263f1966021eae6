import {expect} from 'chai'
import {chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import type {CacheStatus} from '../../../src/sdk/cache.js'

import {cleanupTemp, tempDir} from '../../support/repo.js'
import {yard} from '../../support/yard.js'
import {commitTo, git, harness, makeUpstream} from './support.js'

/** Resolves once no process has `pid` (a killed process may take a moment to be reaped). */
async function gone(pid: number): Promise<boolean> {
  for (let tries = 0; tries < 100; tries++) {
    try {
      process.kill(pid, 0)
    } catch {
      return true
    }

    await new Promise((resolve) => setTimeout(resolve, 20))
  }

  return false
}

async function pidFrom(file: string): Promise<number> {
  for (let tries = 0; tries < 100 && !existsSync(file); tries++) await new Promise((resolve) => setTimeout(resolve, 20))
  return Number(readFileSync(file, 'utf8').trim())
}

describe('git-cache: stale vs cold (acceptance 6) and time budgets', function () {
  this.timeout(60_000)
  let cwd: string

  beforeEach(() => {
    cwd = tempDir('yard-cwd')
  })

  afterEach(() => cleanupTemp())

  it("cold failure: exits non-zero with git's reason, leaves an empty directory (same inode), no HEAD, no marker; a later add works", async () => {
    const url = path.join(tempDir('yard-nowhere'), 'missing', 'app.git')
    const h = harness()
    const {repo, marker} = h.paths(url)
    // As a pod's hostPath volume (DirectoryOrCreate) would have made it.
    mkdirSync(repo, {recursive: true})
    const inode = statSync(repo).ino
    const env = {YARD_CACHE_ROOT: h.root}

    const failed = await yard(['cache', 'add', url], {cwd, env})
    expect(failed.exitCode).to.equal(1)
    expect(failed.stderr).to.include(`could not clone ${url}`)
    expect(failed.stderr).to.match(/does not appear to be a git repository|does not exist/)
    expect(existsSync(path.join(repo, 'HEAD'))).to.equal(false)
    expect(existsSync(marker)).to.equal(false)
    expect(readdirSync(repo)).to.deep.equal([])
    expect(statSync(repo).ino).to.equal(inode)
    const listed = (await yard(['cache', 'list', '--json'], {cwd, env})).json as CacheStatus[]
    expect(listed.map((row) => [row.present, row.stale, row.lastError !== null])).to.deep.equal([[false, false, true]])

    // The repository appears where the url points: an add (here spelled as a file url) now works,
    // and that spelling is the one later fetches use.
    mkdirSync(path.dirname(url), {recursive: true})
    git(path.dirname(url), ['init', '-q', '--bare', '-b', 'main', url])
    commitTo(url, 'main', 'README', 'now it exists\n', null)
    const added = await yard(['cache', 'add', `file://${url}`], {cwd, env})
    expect(added.exitCode, added.stderr).to.equal(0)
    expect(git(repo, ['rev-parse', 'main'])).to.equal(git(url, ['rev-parse', 'main']))
    const row = ((await yard(['cache', 'list', '--json'], {cwd, env})).json as CacheStatus[])[0]
    expect(row).to.deep.include({present: true, stale: false, lastError: null, url: `file://${url}`})
    expect((await yard(['cache', 'fetch', url], {cwd, env})).exitCode).to.equal(0)
  })

  it('warm failure: fetch exits 1 with "stale since <time>", list shows stale: true, a --shared clone still works', async () => {
    const upstream = makeUpstream()
    const h = harness()
    const env = {YARD_CACHE_ROOT: h.root}
    expect((await yard(['cache', 'add', upstream], {cwd, env})).exitCode).to.equal(0)
    const before = ((await yard(['cache', 'list', '--json'], {cwd, env})).json as CacheStatus[])[0]
    expect(before.lastFetched).to.be.a('string')

    renameSync(upstream, `${upstream}.moved`)
    const fetched = await yard(['cache', 'fetch', upstream], {cwd, env})
    expect(fetched.exitCode).to.equal(1)
    expect(fetched.stderr).to.include(`is stale since ${before.lastFetched}`)
    expect(fetched.stderr).to.include('does not appear to be a git repository')

    const after = ((await yard(['cache', 'list', '--json'], {cwd, env})).json as CacheStatus[])[0]
    expect(after).to.deep.include({present: true, stale: true, lastFetched: before.lastFetched})
    expect(after.lastError).to.include('does not appear to be a git repository')
    const clone = path.join(tempDir('yard-borrower'), 'clone')
    git(path.dirname(clone), ['clone', '-q', '--shared', '--', h.paths(upstream).repo, clone])
    expect(readFileSync(path.join(clone, 'README'), 'utf8')).to.equal('first\n')
  })

  it('a fetch past its budget is killed with its whole process group; the cache is stale, the error names the budget', async () => {
    const upstream = makeUpstream()
    const h = harness({budgets: {fetchMs: 1500, onDemandMs: 1000}})
    await h.cache.add(h.root, upstream)
    const pidFile = path.join(tempDir('yard-pid'), 'upload-pack.pid')
    git(h.paths(upstream).repo, [
      'config',
      'remote.origin.uploadpack',
      `sh -c 'echo $$ > ${pidFile}; exec sleep 30' --`,
    ])

    const result = await h.cache.fetch(h.root, upstream)
    expect(result).to.deep.include({fetched: false, stale: true})
    expect(result.error).to.include('fetch budget of 1.5 s')
    expect(await gone(await pidFrom(pidFile))).to.equal(true)

    const onDemand = await h.cache.fetch(h.root, upstream, {onDemand: true})
    expect(onDemand.error).to.include('on-demand fetch budget of 1 s')
  })

  it('a clone past its budget is killed with its process group (ssh included) and leaves no half clone', async () => {
    const dir = tempDir('yard-ssh')
    const pidFile = path.join(dir, 'ssh.pid')
    const fakeSsh = path.join(dir, 'fake-ssh')
    writeFileSync(fakeSsh, `#!/bin/sh\necho $$ > ${pidFile}\nexec sleep 30\n`)
    chmodSync(fakeSsh, 0o755)
    const h = harness({budgets: {cloneMs: 1500}, env: {GIT_SSH: fakeSsh, GIT_SSH_VARIANT: 'simple'}})
    const url = 'ssh://git.invalid/org/app.git'

    let caught: Error | undefined
    await h.cache.add(h.root, url).catch((error: Error) => (caught = error))
    expect(caught?.message).to.include('could not clone')
    expect((caught as {why?: string}).why).to.include('clone budget of 1.5 s')
    expect(await gone(await pidFrom(pidFile))).to.equal(true)
    expect(readdirSync(h.paths(url).repo)).to.deep.equal([])
    expect(existsSync(h.paths(url).marker)).to.equal(false)
  })
})
