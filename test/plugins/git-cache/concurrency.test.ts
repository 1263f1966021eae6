import {expect} from 'chai'
import {spawn, spawnSync} from 'node:child_process'
import {existsSync, readdirSync, readFileSync} from 'node:fs'
import os from 'node:os'
import path from 'node:path'

import {ProcessRunner, type RunOptions, type RunResult} from '../../../src/sdk/process.js'
import {cleanupTemp, tempDir} from '../../support/repo.js'
import {yard} from '../../support/yard.js'
import {commitTo, git, gitEnv, harness, makeUpstream} from './support.js'

interface Span {
  label: string
  start: number
  end: number
}

/**
 * Runners that record when each of their git calls made under a cache lock started and ended,
 * under a label. The lock's runner is the one `withGroupReporter` makes (store.ts); reads made
 * after the lock is released (a fetch's `.gitmodules` discovery) are not writes and not counted.
 */
function timedRunner(label: string, spans: Span[]): typeof ProcessRunner {
  return class extends ProcessRunner {
    override async run(file: string, args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
      if (!this.options.onGroup) return super.run(file, args, options)
      const start = performance.now()
      try {
        return await super.run(file, args, options)
      } finally {
        spans.push({label, start, end: performance.now()})
      }
    }
  }
}

/** From the first start to the last end of each label's calls. */
function extents(spans: Span[]): Map<string, {start: number; end: number}> {
  const result = new Map<string, {start: number; end: number}>()
  for (const span of spans) {
    const known = result.get(span.label)
    result.set(span.label, {
      start: Math.min(known?.start ?? Infinity, span.start),
      end: Math.max(known?.end ?? 0, span.end),
    })
  }

  return result
}

function overlapping(spans: Span[]): string[] {
  const list = [...extents(spans)].sort((a, b) => a[1].start - b[1].start)
  const pairs: string[] = []
  for (let index = 1; index < list.length; index++) {
    if (list[index][1].start < list[index - 1][1].end) pairs.push(`${list[index - 1][0]} and ${list[index][0]}`)
  }

  return pairs
}

/** Makes every fetch from `upstream` into `repo` take at least `seconds` (upload-pack starts late). */
function slowFetches(repo: string, seconds: number): void {
  git(repo, ['config', 'remote.origin.uploadpack', `sleep ${seconds}; git-upload-pack`])
}

describe('git-cache: one writer per cache (acceptance 5)', function () {
  this.timeout(60_000)

  afterEach(() => cleanupTemp())

  it('serialises a fetch and a maintenance started together on one cache', async () => {
    const upstream = makeUpstream()
    const spans: Span[] = []
    const fetcher = harness({Runner: timedRunner('fetch', spans)})
    const maintainer = harness({root: fetcher.root, Runner: timedRunner('maintain', spans)})
    await fetcher.cache.add(fetcher.root, upstream)
    spans.length = 0
    slowFetches(fetcher.paths(upstream).repo, 0.4)
    commitTo(upstream, 'main', 'b', 'new\n')
    const [fetched, maintained] = await Promise.all([
      fetcher.cache.fetch(fetcher.root, upstream),
      maintainer.cache.maintain(maintainer.root, upstream, {force: true}),
    ])
    expect(fetched.fetched).to.equal(true)
    expect(maintained.ran).to.equal(true)
    expect([...extents(spans).keys()].sort()).to.deep.equal(['fetch', 'maintain'])
    expect(overlapping(spans)).to.deep.equal([])
  })

  it('leaves a consistent cache after 5 concurrent fetches', async () => {
    const upstream = makeUpstream()
    const spans: Span[] = []
    const first = harness()
    await first.cache.add(first.root, upstream)
    const {repo} = first.paths(upstream)
    slowFetches(repo, 0.1)
    const fetchers = Array.from({length: 5}, (_, index) =>
      harness({root: first.root, Runner: timedRunner(`fetch ${index}`, spans)}),
    )
    for (let index = 0; index < 5; index++)
      commitTo(upstream, `topic-${index}`, 'f', `${index}\n`, git(upstream, ['rev-parse', 'main']))
    commitTo(upstream, 'main', 'g', 'tip\n')
    const results = await Promise.all(fetchers.map(async (h) => h.cache.fetch(h.root, upstream)))

    expect(results.map((result) => [result.fetched, result.error])).to.deep.equal(
      Array.from({length: 5}, () => [true, null]),
    )
    expect(overlapping(spans)).to.deep.equal([])
    expect(git(repo, ['for-each-ref', '--format=%(refname) %(objectname)'])).to.equal(
      git(upstream, ['for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads', 'refs/tags']),
    )
    expect(spawnSync('git', ['fsck', '--full'], {cwd: repo, env: gitEnv}).status).to.equal(0)
    const record = JSON.parse(readFileSync(first.paths(upstream).record, 'utf8')) as {
      lastError: null
      lastFetched: string
    }
    expect(record.lastError).to.equal(null)
    expect(readdirSync(first.paths(upstream).leases)).to.deep.equal([])
  })

  it('takes over a lock left by a killed process, with a warning', async () => {
    const upstream = makeUpstream()
    const h = harness()
    await h.cache.add(h.root, upstream)
    const {lock} = h.paths(upstream)
    // A process that takes the lock the way yard does, then is killed before releasing it.
    const holder = spawn(
      process.execPath,
      [
        '-e',
        String.raw`require('fs').writeFileSync(${JSON.stringify(lock)}, JSON.stringify({pid: process.pid, host: require('os').hostname(), started: new Date().toISOString(), purpose: 'cache fetch'}) + '\n', {flag: 'wx'}); setInterval(() => {}, 1000)`,
      ],
      {stdio: 'ignore'},
    )
    await new Promise<void>((resolve, reject) => {
      const started = Date.now()
      const poll = setInterval(() => {
        // The holder creates the file, then writes it: wait for the content, not just the file.
        if (existsSync(lock) && readFileSync(lock, 'utf8').endsWith('\n')) {
          clearInterval(poll)
          resolve()
        } else if (Date.now() - started > 10_000) {
          clearInterval(poll)
          reject(new Error('the lock holder never took the lock'))
        }
      }, 20)
    })
    holder.kill('SIGKILL')
    await new Promise((resolve) => holder.once('exit', resolve))
    expect(JSON.parse(readFileSync(lock, 'utf8'))).to.deep.include({pid: holder.pid, host: os.hostname()})

    const run = await yard(['cache', 'fetch', upstream], {cwd: tempDir('yard-cwd'), env: {YARD_CACHE_ROOT: h.root}})
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(run.stderr).to.include(`took over the stale lock ${lock}`)
    expect(run.stderr).to.include(`process ${holder.pid} is gone`)
    expect(existsSync(lock)).to.equal(false)
    expect(path.basename(lock)).to.equal('.lock')
  })
})
