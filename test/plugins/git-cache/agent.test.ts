import {expect} from 'chai'
import {existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import type {CacheAgentEvent, CacheAgentPass} from '../../../src/sdk/cache.js'

import {jitteredInterval} from '../../../src/plugins/git-cache/scheduler.js'
import {ProcessRunner, type RunOptions, type RunResult} from '../../../src/sdk/process.js'
import {repoIdentity} from '../../../src/sdk/repo-identity.js'
import {cleanupTemp, tempDir} from '../../support/repo.js'
import {yard} from '../../support/yard.js'
import {commitTo, git, harness, localConfig, makeUpstream, PIN_LINES} from './support.js'

/** Resolves once `condition` holds; rejects after `ms`. */
async function until(condition: () => boolean, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`still waiting after ${ms} ms`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe('git-cache: the agent (acceptance 8)', function () {
  this.timeout(60_000)

  afterEach(() => cleanupTemp())

  /**
   * A hand-made bare repository at its cache's path (`git clone --bare URL <root>/<key>`), whose
   * upstream has moved on since; `name` puts it elsewhere.
   */
  function strayRepository(root: string, name?: string): {repo: string; tip: string; key: string} {
    const upstream = makeUpstream('stray')
    const key = name ?? repoIdentity(upstream).key
    const repo = path.join(root, key)
    git(root, ['clone', '-q', '--bare', '--', upstream, repo])
    git(repo, ['config', 'remote.origin.fetch', '+refs/heads/*:refs/heads/*'])
    git(repo, ['config', 'gc.auto', '6700'])
    const tip = git(repo, ['rev-parse', 'main'])
    commitTo(upstream, 'main', 'later', 'must not be fetched\n')
    return {repo, tip, key}
  }

  it('--once adopts an unknown repository (pinned, not fetched), removes an unborrowed cache-named directory, leaves the rest', async () => {
    const h = harness()
    const known = makeUpstream()
    await h.cache.add(h.root, known)
    const stray = strayRepository(h.root)
    mkdirSync(path.join(h.root, 'junk-0badc0de', 'objects'), {recursive: true})
    writeFileSync(path.join(h.root, 'junk-0badc0de', 'objects', 'x'), 'half a clone\n')
    writeFileSync(path.join(h.root, 'orphan-0000beef.cloning'), '')
    // Not a repository either, but borrowed: kept.
    mkdirSync(path.join(h.root, 'held-00c0ffee.leases'), {recursive: true})
    mkdirSync(path.join(h.root, 'held-00c0ffee'))
    writeFileSync(
      path.join(h.root, 'held-00c0ffee.leases', 'sandbox.feat'),
      JSON.stringify({kind: 'sandbox', name: 'feat', started: new Date().toISOString()}),
    )
    writeFileSync(path.join(h.root, 'notes.txt'), 'mine\n')
    mkdirSync(path.join(h.root, 'scratch'))

    const run = await yard(['cache', 'agent', '--once', '--json'], {
      cwd: tempDir('yard-cwd'),
      env: {YARD_CACHE_ROOT: h.root},
    })
    expect(run.exitCode, run.stderr).to.equal(0)
    const pass = run.json as CacheAgentPass
    expect(pass.adopted).to.deep.equal([stray.key])
    expect(pass.removed.sort()).to.deep.equal(['junk-0badc0de', 'orphan-0000beef.cloning'])
    expect(pass.fetched).to.deep.equal([])

    expect(localConfig(stray.repo)).to.include.members(PIN_LINES)
    expect(git(stray.repo, ['rev-parse', 'main'])).to.equal(stray.tip)
    expect(existsSync(path.join(stray.repo, 'FETCH_HEAD'))).to.equal(false)
    expect(JSON.parse(readFileSync(path.join(h.root, `${stray.key}.json`), 'utf8'))).to.deep.include({
      url: null,
      identity: null,
    })
    const left = readdirSync(h.root).sort()
    expect(left).to.include.members([
      'notes.txt',
      'scratch',
      'held-00c0ffee',
      'held-00c0ffee.leases',
      h.paths(known).key,
    ])
    expect(left).to.not.include.members(['junk-0badc0de', 'orphan-0000beef.cloning', 'junk-0badc0de.leases'])
  })

  it('adopts no repository whose origin names another repository than its key', async () => {
    const h = harness()
    // A marked root (the first add makes it), and a repository cloned to another's key.
    await h.cache.add(h.root, makeUpstream())
    const foreign = strayRepository(h.root, 'app-1234abcd')
    const run = await yard(['cache', 'agent', '--once', '--json'], {
      cwd: tempDir('yard-cwd'),
      env: {YARD_CACHE_ROOT: h.root},
    })
    expect(run.exitCode, run.stderr).to.equal(0)
    expect((run.json as CacheAgentPass).adopted).to.deep.equal([])
    expect(localConfig(foreign.repo)).to.include('gc.auto=6700')
    expect(existsSync(path.join(h.root, 'app-1234abcd.json'))).to.equal(false)
  })

  it('in a root without the marker it deletes nothing and adopts nothing, and says so', async () => {
    const root = path.join(tempDir('yard-foreign'), 'caches')
    mkdirSync(path.join(root, 'junk-0badc0de'), {recursive: true})
    writeFileSync(path.join(root, 'notes.txt'), 'mine\n')
    const stray = strayRepository(root)
    const before = readdirSync(root).sort()

    const run = await yard(['cache', 'agent', '--once', '--json'], {
      cwd: tempDir('yard-cwd'),
      env: {YARD_CACHE_ROOT: root},
    })
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(run.json).to.deep.equal({adopted: [], removed: [], fetched: [], failed: []})
    expect(run.stderr).to.include('no .yard-cache-root')
    expect(readdirSync(root).sort()).to.deep.equal(before)
    expect(localConfig(stray.repo)).to.include('gc.auto=6700')
  })

  it('refreshes known caches on the interval, serves an ask on demand, and runs at most 4 fetches at once', async () => {
    let running = 0
    let most = 0
    const fetches: Array<{onDemand: boolean}> = []
    class CountingRunner extends ProcessRunner {
      override async run(file: string, args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
        const fetching = args[0] === 'fetch'
        if (fetching) {
          most = Math.max(most, ++running)
          fetches.push({onDemand: options.budget === 'on-demand fetch'})
        }

        try {
          return await super.run(file, args, options)
        } finally {
          if (fetching) running--
        }
      }
    }
    const h = harness({Runner: CountingRunner})
    const upstreams = Array.from({length: 6}, (_, index) => makeUpstream(`repo${index}`))
    for (const upstream of upstreams) {
      await h.cache.add(h.root, upstream)
      git(h.paths(upstream).repo, ['config', 'remote.origin.uploadpack', 'sleep 0.6; git-upload-pack'])
    }

    // Every cache is due 0.8 × 100 ms after its clone: one pass fetches all six, four at a time.
    const once = await h.cache.agent(h.root, {intervalMs: 100, once: true, pollMs: 20})
    expect(once.fetched.sort()).to.deep.equal(upstreams.map((upstream) => h.paths(upstream).key).sort())
    expect(most).to.equal(4)

    // A loop with a long interval: nothing is due until a borrower asks.
    fetches.length = 0
    const events: CacheAgentEvent[] = []
    const stop = new AbortController()
    const loop = h.cache.agent(h.root, {
      intervalMs: 3_600_000,
      once: false,
      pollMs: 20,
      signal: stop.signal,
      onEvent: (event) => events.push(event),
    })
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(fetches).to.deep.equal([])
    await h.cache.lease(h.root, upstreams[0], {kind: 'sandbox', name: 'feat'})
    await h.cache.ask(h.root, upstreams[0], {kind: 'sandbox', name: 'feat'})
    await until(() => events.some((event) => event.action === 'fetched'))
    stop.abort()
    const totals = await loop
    expect(totals.fetched).to.deep.equal([h.paths(upstreams[0]).key])
    expect(fetches).to.deep.equal([{onDemand: true}])
    expect(events.find((event) => event.action === 'fetched')?.detail).to.include('on demand')

    // A short interval: the same cache is refreshed again and again.
    const first = h.paths(upstreams[0]).key
    const again = new AbortController()
    const seen: string[] = []
    const refreshing = h.cache.agent(h.root, {
      intervalMs: 200,
      once: false,
      pollMs: 20,
      signal: again.signal,
      onEvent: (event) => event.action === 'fetched' && seen.push(event.key),
    })
    await until(() => seen.filter((key) => key === first).length >= 3)
    again.abort()
    const refreshed = await refreshing
    expect(refreshed.fetched.filter((key) => key === first).length).to.be.at.least(3)
    expect(refreshed.failed).to.deep.equal([])
  })

  it('draws each wait from the interval ±20 %', () => {
    expect(jitteredInterval(300_000, () => 0)).to.equal(240_000)
    expect(jitteredInterval(300_000, () => 0.5)).to.equal(300_000)
    expect(jitteredInterval(300_000, () => 0.999999)).to.equal(360_000)
    for (let index = 0; index < 100; index++) expect(jitteredInterval(1000)).to.be.within(800, 1200)
  })
})
