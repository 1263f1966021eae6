import {expect} from 'chai'
import {existsSync, mkdirSync, readFileSync} from 'node:fs'
import path from 'node:path'

import {cleanupTemp} from '../../support/repo.js'
import {commitTo, git, harness, localConfig, makeUpstream, PIN_LINES} from './support.js'

/** The url positions in argv, each with whether `--` comes before it. */
function urlsGuarded(argvs: string[][], url: string): Array<{argv: string; guarded: boolean}> {
  return argvs
    .filter((argv) => argv.includes(url))
    .map((argv) => ({argv: argv.join(' '), guarded: argv.includes('--') && argv.indexOf('--') < argv.indexOf(url)}))
}

describe('git-cache: pins before any fetch (DESIGN.md §5.1; cases 9)', () => {
  afterEach(() => cleanupTemp())

  it("clones with the marker, and every pin is in the cache's config before the first fetch runs", async () => {
    const upstream = makeUpstream()
    const configAtFetch: string[][] = []
    let markerDuringClone: boolean | undefined
    const h = harness({
      onSpawn(argv) {
        // Look at the cache the moment git is asked to fetch into it, or to clone it.
        if (argv[1] === 'fetch') configAtFetch.push(localConfig(h.paths(upstream).repo))
        if (argv[1] === 'clone') markerDuringClone = existsSync(h.paths(upstream).marker)
      },
    })
    const added = await h.cache.add(h.root, upstream)
    expect(added.action).to.equal('cloned')
    expect(markerDuringClone).to.equal(true)
    expect(existsSync(h.paths(upstream).marker)).to.equal(false)
    expect(h.argvs.some((argv) => argv[1] === 'fetch')).to.equal(false)
    expect(localConfig(added.path)).to.include.members([...PIN_LINES, `remote.origin.url=${upstream}`])

    commitTo(upstream, 'main', 'b', 'second\n')
    const fetched = await h.cache.fetch(h.root, upstream)
    expect(fetched).to.deep.include({fetched: true, stale: false})
    expect(configAtFetch).to.have.length(1)
    expect(configAtFetch[0]).to.include.members(PIN_LINES)
    // Exactly two refspecs, in order, and nothing else pins pruning.
    expect(configAtFetch[0].filter((line) => line.startsWith('remote.origin.fetch='))).to.deep.equal(
      PIN_LINES.filter((line) => line.startsWith('remote.origin.fetch=')),
    )
    expect(configAtFetch[0].some((line) => line.startsWith('fetch.prune'))).to.equal(false)
    expect(git(added.path, ['rev-parse', 'main'])).to.equal(git(upstream, ['rev-parse', 'main']))
  })

  it('puts -- before the url in every git call that carries it (clone, remote url)', async () => {
    const upstream = makeUpstream()
    const h = harness()
    await h.cache.add(h.root, upstream)
    // Drift the url to another spelling of the same repository, so that the refresh writes it again.
    git(h.paths(upstream).repo, ['config', 'remote.origin.url', `file://${upstream}`])
    await h.cache.fetch(h.root, upstream)
    const calls = urlsGuarded(h.argvs, upstream)
    expect(calls.map((call) => call.argv.split(' ', 2)[1])).to.deep.equal(['clone', 'config'])
    expect(calls.filter((call) => !call.guarded)).to.deep.equal([])
  })

  it('re-applies the pins on every refresh: a hand-changed gc.auto is back to 0 before git fetch runs', async () => {
    const upstream = makeUpstream()
    let gcAutoAtFetch: string | undefined
    const h = harness({
      onSpawn: (argv) => argv[1] === 'fetch' && (gcAutoAtFetch = git(h.paths(upstream).repo, ['config', 'gc.auto'])),
    })
    await h.cache.add(h.root, upstream)
    git(h.paths(upstream).repo, ['config', 'gc.auto', '1'])
    git(h.paths(upstream).repo, ['config', '--unset-all', 'remote.origin.fetch'])
    await h.cache.fetch(h.root, upstream)
    expect(gcAutoAtFetch).to.equal('0')
    expect(localConfig(h.paths(upstream).repo)).to.include.members(PIN_LINES)
  })

  it('reads the config once per refresh or adoption when everything is in place: the origin check and the pins share it', async () => {
    const upstream = makeUpstream()
    const h = harness()
    await h.cache.add(h.root, upstream)
    const configCalls = () =>
      h.argvs.filter((argv) => argv[1] === 'config' && !argv.includes('--blob')).map((argv) => argv.slice(1).join(' '))
    for (const step of [
      async () => h.cache.fetch(h.root, upstream),
      async () => h.cache.add(h.root, upstream, {submodules: false}),
    ]) {
      h.argvs.length = 0
      await step()
      expect(configCalls()).to.deep.equal(['config --local --null --list'])
    }

    // A foreign origin is still refused from that one read.
    git(h.paths(upstream).repo, ['config', 'remote.origin.url', 'https://example.com/other/repo.git'])
    let refused: unknown
    await h.cache.fetch(h.root, upstream).catch((error: unknown) => (refused = error))
    expect(refused).to.have.property('code', 3)
  })

  it('adopts a hand-made bare repository at the cache path: pins it, sets origin, does not fetch', async () => {
    const upstream = makeUpstream()
    const h = harness()
    const {repo} = h.paths(upstream)
    mkdirSync(h.root, {recursive: true})
    git(h.root, ['clone', '-q', '--bare', '--', upstream, repo])
    git(repo, ['config', 'gc.auto', '6700'])
    git(repo, ['config', 'gc.pruneExpire', 'now'])
    const before = git(repo, ['rev-parse', 'main'])
    commitTo(upstream, 'main', 'later', 'not fetched\n')

    const added = await h.cache.add(h.root, upstream)
    expect(added.action).to.equal('adopted')
    expect(localConfig(repo)).to.include.members([...PIN_LINES, `remote.origin.url=${upstream}`])
    expect(localConfig(repo)).to.not.include('gc.pruneexpire=now')
    expect(h.argvs.filter((argv) => ['clone', 'fetch'].includes(argv[1]))).to.deep.equal([])
    expect(git(repo, ['rev-parse', 'main'])).to.equal(before)
    const record = JSON.parse(readFileSync(h.paths(upstream).record, 'utf8')) as {url: string; identity: string}
    expect(record).to.deep.include({url: upstream, identity: upstream.replace(/\.git$/, '')})
    // The root got its marker, so the agent may sweep it later.
    expect(existsSync(path.join(h.root, '.yard-cache-root'))).to.equal(true)
  })
})
