import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import {existsSync, mkdirSync} from 'node:fs'
import path from 'node:path'

import {objectCounts} from '../../../src/plugins/git-cache/layout.js'
import {cleanupTemp, tempDir} from '../../support/repo.js'
import {yard} from '../../support/yard.js'
import {
  chainCommits,
  commitTo,
  git,
  gitEnv,
  harness,
  hasObject,
  localConfig,
  makeUpstream,
  PIN_LINES,
} from './support.js'

const FETCHES = 60

interface Scenario {
  upstream: string
  cacheRepo: string
  clone: string
  /** The commit the clone checked out, force-pushed away upstream. */
  orphan: string
  /** A blob written into the cache that nothing reaches. */
  strayBlob: string
}

/**
 * Case 8: a `--shared` clone checks out commit C; upstream force-pushes C away; FETCHES fetches
 * into the cache follow, one new commit each. `makeCache` clones the cache, `fetchCache` fetches it.
 */
async function forcePushScenario(
  makeCache: (upstream: string) => Promise<string>,
  fetchCache: () => Promise<void>,
): Promise<Scenario> {
  const upstream = makeUpstream()
  const base = git(upstream, ['rev-parse', 'main'])
  const orphan = commitTo(upstream, 'main', 'feature', 'work that will be force-pushed away\n')
  const cacheRepo = await makeCache(upstream)
  const clone = path.join(tempDir('yard-borrower'), 'clone')
  git(path.dirname(clone), ['clone', '-q', '--shared', '--', cacheRepo, clone])
  expect(git(clone, ['rev-parse', 'HEAD'])).to.equal(orphan)
  // The clone borrows: it has no object of its own.
  expect(existsSync(path.join(clone, '.git', 'objects', 'info', 'alternates'))).to.equal(true)
  expect(await objectCounts(path.join(clone, '.git'))).to.deep.equal({packs: 0, looseObjects: 0})

  const rewritten = commitTo(upstream, 'main', 'rewritten', 'history rewritten\n', base)
  const strayBlob = git(cacheRepo, ['hash-object', '-w', '--stdin'], 'a blob nothing reaches\n')
  for (const next of chainCommits(upstream, rewritten, FETCHES)) {
    git(upstream, ['update-ref', 'refs/heads/main', next])
    await fetchCache()
  }

  expect(git(cacheRepo, ['rev-parse', 'main'])).to.equal(git(upstream, ['rev-parse', 'main']))
  expect(git(cacheRepo, ['merge-base', '--is-ancestor', base, 'main'])).to.equal('')
  return {upstream, cacheRepo, clone, orphan, strayBlob}
}

function fsck(repo: string): {status: number | null; output: string} {
  const result = spawnSync('git', ['fsck', '--full'], {cwd: repo, env: gitEnv, encoding: 'utf8'})
  return {status: result.status, output: result.stdout + result.stderr}
}

describe('git-cache: borrowed objects survive force-pushes, fetches and maintenance (case 8, acceptance 3)', function () {
  this.timeout(120_000)

  afterEach(() => cleanupTemp())

  it(`keeps C readable after a force-push, ${FETCHES} fetches and yard cache maintain --force; the clone stays sound`, async () => {
    const h = harness()
    let url = ''
    const scenario = await forcePushScenario(
      async (upstream) => {
        url = upstream
        return (await h.cache.add(h.root, upstream)).path
      },
      async () => {
        const result = await h.cache.fetch(h.root, url)
        expect(result.error).to.equal(null)
      },
    )
    // C is unreachable in the cache now: only -k keeps it through maintenance.
    expect(git(scenario.cacheRepo, ['branch', '--contains', scenario.orphan])).to.equal('')

    const run = await yard(['cache', 'maintain', url, '--force'], {
      cwd: tempDir('yard-cwd'),
      env: {YARD_CACHE_ROOT: h.root},
    })
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(run.stdout).to.include('maintained')

    expect(await objectCounts(scenario.cacheRepo)).to.deep.equal({packs: 1, looseObjects: 0})
    expect(existsSync(path.join(scenario.cacheRepo, 'packed-refs'))).to.equal(true)
    expect(hasObject(scenario.cacheRepo, scenario.orphan)).to.equal(true)
    expect(hasObject(scenario.cacheRepo, scenario.strayBlob)).to.equal(true)
    expect(localConfig(scenario.cacheRepo)).to.include.members(PIN_LINES)
    const checked = fsck(scenario.clone)
    expect(checked.status, checked.output).to.equal(0)
    expect(git(scenario.clone, ['log', '--format=%H', '-1', scenario.orphan])).to.equal(scenario.orphan)

    // Even a person's plain `git gc` in the pinned cache prunes nothing (gc.pruneExpire=never).
    git(scenario.cacheRepo, ['gc', '--quiet'])
    expect(hasObject(scenario.cacheRepo, scenario.orphan)).to.equal(true)
    expect(fsck(scenario.clone).status).to.equal(0)
  })

  it('negative control: the same scenario over an unpinned cache, then git gc --prune=now, breaks the clone', async () => {
    let cacheRepo = ''
    const scenario = await forcePushScenario(
      async (upstream) => {
        cacheRepo = path.join(tempDir('yard-unpinned'), 'cache.git')
        mkdirSync(cacheRepo)
        git(cacheRepo, ['clone', '-q', '--bare', '--', upstream, cacheRepo])
        // Refspecs only (so fetches move the refs), none of the pins.
        git(cacheRepo, ['config', '--add', 'remote.origin.fetch', '+refs/heads/*:refs/heads/*'])
        return cacheRepo
      },
      async () => {
        git(cacheRepo, ['fetch', '-q', 'origin'])
      },
    )
    expect(fsck(scenario.clone).status).to.equal(0)
    git(scenario.cacheRepo, ['gc', '--quiet', '--prune=now'])
    expect(hasObject(scenario.cacheRepo, scenario.orphan)).to.equal(false)
    expect(hasObject(scenario.cacheRepo, scenario.strayBlob)).to.equal(false)
    const checked = fsck(scenario.clone)
    expect(checked.status).to.not.equal(0)
    expect(checked.output).to.match(/missing|bad object|unable to read/i)
  })
})
