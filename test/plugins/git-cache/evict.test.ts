import {expect} from 'chai'
import {spawn} from 'node:child_process'
import {existsSync, readdirSync, rmSync, utimesSync} from 'node:fs'
import path from 'node:path'

import type {CacheEvictResult, CacheStatus} from '../../../src/sdk/cache.js'

import {PROBE_GRACE_MS} from '../../../src/plugins/git-cache/leases.js'
import {RefusedError} from '../../../src/sdk/errors.js'
import {cleanupTemp, tempDir} from '../../support/repo.js'
import {yard} from '../../support/yard.js'
import {git, harness, type Harness, makeUpstream} from './support.js'

describe('git-cache: leases and eviction (acceptance 7)', function () {
  this.timeout(30_000)
  let h: Harness
  let upstream: string
  let cwd: string
  let env: Record<string, string>

  beforeEach(async () => {
    upstream = makeUpstream()
    h = harness()
    await h.cache.add(h.root, upstream)
    cwd = tempDir('yard-cwd')
    env = {YARD_CACHE_ROOT: h.root}
  })

  afterEach(() => cleanupTemp())

  const entries = () => readdirSync(h.root).sort()

  it('refuses (exit 3, naming the borrower) while a lease exists; --dry-run removes nothing; after release the whole cache goes', async () => {
    const {key} = h.paths(upstream)
    await h.cache.lease(h.root, upstream, {kind: 'sandbox', name: 'feat'})
    const listed = ((await yard(['cache', 'list', '--json'], {cwd, env})).json as CacheStatus[])[0]
    expect(listed.borrowers.map((lease) => [lease.kind, lease.name])).to.deep.equal([['sandbox', 'feat']])

    const refused = await yard(['cache', 'evict', upstream], {cwd, env})
    expect(refused.exitCode).to.equal(3)
    expect(refused.stderr).to.include('is borrowed by sandbox feat (since')
    expect(refused.stderr).to.not.include('--force')
    const dryRefused = await yard(['cache', 'evict', upstream, '--dry-run'], {cwd, env})
    expect(dryRefused.exitCode).to.equal(3)
    expect(entries()).to.deep.equal(['.yard-cache-root', key, `${key}.json`, `${key}.leases`])

    expect(await h.cache.release(h.root, upstream, {kind: 'sandbox', name: 'feat'})).to.equal(true)
    const dry = await yard(['cache', 'evict', upstream, '--dry-run', '--json'], {cwd, env})
    expect(dry.exitCode).to.equal(0)
    expect((dry.json as CacheEvictResult).removed).to.deep.equal([
      path.join(h.root, key),
      path.join(h.root, `${key}.json`),
      path.join(h.root, `${key}.leases`),
    ])
    expect(entries()).to.deep.equal(['.yard-cache-root', key, `${key}.json`, `${key}.leases`])
    expect(existsSync(path.join(h.root, key, 'HEAD'))).to.equal(true)

    const evicted = await yard(['cache', 'evict', upstream], {cwd, env})
    expect(evicted.exitCode, evicted.stderr).to.equal(0)
    expect(evicted.stdout).to.include(`removed ${path.join(h.root, key)}`)
    expect(entries()).to.deep.equal(['.yard-cache-root'])
    expect(h.argvs.filter((argv) => argv[1] === 'gc' || argv[1] === 'prune')).to.deep.equal([])

    const again = await yard(['cache', 'evict', upstream], {cwd, env})
    expect(again.exitCode).to.equal(2)
    expect(again.stderr).to.include('there is no cache')
  })

  it('clears leases whose holders are provably gone (clone directory removed, process dead, probe) and keeps the rest', async () => {
    const clone = path.join(tempDir('yard-borrower'), 'clone')
    git(path.dirname(clone), ['clone', '-q', '--shared', '--', h.paths(upstream).repo, clone])
    await h.cache.lease(h.root, upstream, {kind: 'clone', name: 'scratch', path: clone})
    const child = spawn(process.execPath, ['-e', '0'])
    await new Promise((resolve) => child.once('exit', resolve))
    await h.cache.lease(h.root, upstream, {kind: 'job', name: 'nightly', pid: child.pid})
    await h.cache.lease(h.root, upstream, {kind: 'sandbox', name: 'old'})
    await h.cache.lease(h.root, upstream, {kind: 'sandbox', name: 'live'})
    await h.cache.lease(h.root, upstream, {kind: 'sandbox', name: 'fresh'})
    // A lease written within the grace is not put to the probe (a create leases before its pod exists).
    const aged = new Date(Date.now() - PROBE_GRACE_MS - 60_000)
    utimesSync(path.join(h.paths(upstream).leases, 'sandbox.old'), aged, aged)
    const probe = async (lease: {kind: string; name: string}) =>
      lease.kind === 'sandbox' && lease.name !== 'live' ? `sandbox ${lease.name} no longer exists` : undefined

    // The clone still exists, sandbox live has no proof against it, fresh is within the grace: refused, naming them.
    let refused: unknown
    await h.cache.evict(h.root, upstream, {dryRun: false, probe}).catch((error) => (refused = error))
    expect(refused).to.be.instanceOf(RefusedError)
    expect((refused as Error).message)
      .to.include('clone scratch')
      .and.include('sandbox live')
      .and.include('sandbox fresh')
      .and.not.include('job nightly')
      .and.not.include('sandbox old')
    expect(readdirSync(h.paths(upstream).leases).sort()).to.deep.equal([
      'clone.scratch',
      'sandbox.fresh',
      'sandbox.live',
    ])

    await h.cache.release(h.root, upstream, {kind: 'sandbox', name: 'live'})
    await h.cache.release(h.root, upstream, {kind: 'sandbox', name: 'fresh'})
    rmSync(clone, {recursive: true, force: true})
    const result = await h.cache.evict(h.root, upstream, {dryRun: false, probe})
    expect(result.clearedLeases.map((cleared) => [cleared.borrower.name, cleared.reason])).to.deep.equal([
      ['scratch', `its clone ${clone} no longer exists`],
    ])
    expect(entries()).to.deep.equal(['.yard-cache-root'])
  })

  it('refuses a lease on a cache that is not present, and a borrower name that is not a label', async () => {
    let missing: Error | undefined
    await h.cache
      .lease(h.root, '/srv/not-added.git', {kind: 'sandbox', name: 'feat'})
      .catch((error: Error) => (missing = error))
    expect(missing?.message).to.include('there is no cache')
    let bad: Error | undefined
    await h.cache.lease(h.root, upstream, {kind: 'sandbox', name: '../etc'}).catch((error: Error) => (bad = error))
    expect(bad?.message).to.include('invalid borrower name')
    expect(readdirSync(h.paths(upstream).leases)).to.deep.equal([])
  })
})
