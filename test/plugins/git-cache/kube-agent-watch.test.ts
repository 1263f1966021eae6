/**
 * The cluster cache agent as a loop watches the cluster (informers on its node's pods and on the
 * Repos; DESIGN.md §5.1, docs/cluster.md): it acts on a change at once with its resync far away,
 * survives `410 Gone` by listing again, and an API server restart by reconnecting from its
 * resourceVersion. The cluster is the in-process fake API server; git runs for real.
 */
import {expect} from 'chai'
import {existsSync} from 'node:fs'
import path from 'node:path'

import type {CacheAgentPass} from '../../../src/sdk/cache.js'

import {openCacheDemand} from '../../../src/plugins/k8s-sandbox/cache-demand.js'
import {agentRoleRules} from '../../../src/plugins/k8s-sandbox/cluster-objects.js'
import {repoCrd, repoObject} from '../../../src/plugins/k8s-sandbox/repo-resource.js'
import {repoIdentity} from '../../../src/sdk/repo-identity.js'
import {allowedBy, type FakeKubeApi, startFakeKubeApi} from '../../support/fake-kube-api/index.js'
import {cleanupTemp, tempDir} from '../../support/repo.js'
import {commitTo, git, harness, type Harness, makeUpstream} from './support.js'

const NAMESPACE = 'yard'
const NODE = 'node-a'
const REPOS = 'repos.yard.dev'
/** Far beyond every wait here: whatever the agent does, a change made it do. */
const NO_TIMER_MS = 10 * 60_000

async function until(condition: () => boolean, ms = 8000): Promise<void> {
  const deadline = Date.now() + ms
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`still waiting after ${ms} ms`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

describe('git-cache: the cluster agent watches (informers)', function () {
  this.timeout(60_000)
  let api: FakeKubeApi
  let root: string
  let h: Harness
  let stop: AbortController
  let running: Promise<CacheAgentPass> | undefined

  beforeEach(async () => {
    api = await startFakeKubeApi({namespaces: [NAMESPACE], crds: [repoCrd()]})
    root = path.join(tempDir('yard-node'), 'caches')
    h = harness({root})
    stop = new AbortController()
    running = undefined
  })

  afterEach(async () => {
    stop.abort()
    await running
    await api.close()
    cleanupTemp()
  })

  /** Starts the loop and resolves once both watches are open. */
  async function startAgent(): Promise<void> {
    const demand = await openCacheDemand(
      {node: NODE, cacheRoot: root, namespace: NAMESPACE},
      {...process.env, KUBECONFIG: api.kubeconfigPath},
    )
    running = h.cache.agent(root, {
      intervalMs: NO_TIMER_MS,
      pollMs: NO_TIMER_MS,
      once: false,
      signal: stop.signal,
      demand,
    })
    await until(() => api.openWatches() === 2)
  }

  async function declare(url: string, spec: {askedAt?: string; prefetch?: boolean} = {}): Promise<string> {
    const {key} = repoIdentity(url)
    await api.put(repoObject(key, NAMESPACE, {url, ...spec}))
    return key
  }

  /** Cloned and reported: HEAD alone appears before the clone has its refs. */
  const present = (key: string) =>
    existsSync(path.join(root, key, 'HEAD')) && api.get(REPOS, NAMESPACE, key)?.status?.nodes?.[NODE]?.present === true
  const count = (verb: string, resource: string) =>
    api.calls.filter((call) => call.verb === verb && call.resource === resource && call.subresource === undefined)
      .length

  it('clones a Repo declared ahead, serves an ask, evicts a removed Repo, each on the change, with its resync 10 minutes away', async () => {
    const upstream = makeUpstream('app')
    await startAgent()
    expect([
      count('list', 'pods'),
      count('list', 'repos'),
      count('watch', 'pods'),
      count('watch', 'repos'),
    ]).to.deep.equal([1, 1, 1, 1])

    const key = await declare(upstream, {prefetch: true})
    await until(() => present(key) && api.get(REPOS, NAMESPACE, key)?.status?.nodes?.[NODE]?.present === true)
    const later = commitTo(upstream, 'main', 'later', 'a new upstream commit\n')
    const asked = new Date().toISOString()
    await declare(upstream, {prefetch: true, askedAt: asked})
    await until(
      () =>
        git(path.join(root, key), ['rev-parse', 'main']) === later &&
        api.get(REPOS, NAMESPACE, key)?.status?.nodes?.[NODE]?.lastAsked === asked,
    )
    api.remove(REPOS, NAMESPACE, key)
    await until(() => !existsSync(path.join(root, key)))

    // No polling: the watches stayed open; the pods were listed once more, right before the eviction.
    expect([
      count('list', 'pods'),
      count('list', 'repos'),
      count('watch', 'pods'),
      count('watch', 'repos'),
    ]).to.deep.equal([2, 1, 1, 1])
    const pods = api.calls.filter((call) => call.resource === 'pods')
    expect(pods.every((call) => call.fieldSelector === `spec.nodeName=${NODE}`)).to.equal(true)
    for (const call of api.calls)
      expect(allowedBy(agentRoleRules(), call), `${call.verb} ${call.resource}`).to.equal(true)
    stop.abort()
    expect(await running).to.deep.include({cloned: [key], fetched: [key], evicted: [key]})
    expect(h.warnings).to.deep.equal([])
  })

  it("fetches on its Repo's refreshInterval while watching, woken for the refresh due, not by the resync", async () => {
    const upstream = makeUpstream('app')
    await startAgent()
    const {key} = repoIdentity(upstream)
    await api.put(repoObject(key, NAMESPACE, {url: upstream, prefetch: true, refreshInterval: '2s'}))
    await until(() => present(key))
    const later = commitTo(upstream, 'main', 'later', 'fetched on the interval\n')
    await until(() => git(path.join(root, key), ['rev-parse', 'main']) === later, 6000)
  })

  it('survives 410 Gone: a watch from a compacted resourceVersion lists again and goes on watching', async () => {
    const upstream = makeUpstream('app')
    await startAgent()
    // While the server is away, a Repo arrives and the log is compacted past what the agent saw.
    const restarting = api.restart({downMs: 1500})
    const key = await declare(upstream, {prefetch: true})
    api.compact()
    await restarting
    await until(() => present(key), 15_000)
    // Each informer retries on its own backoff; both list again once.
    await until(() => api.openWatches() === 2 && count('list', 'pods') === 2, 15_000)
    expect(count('list', 'repos')).to.equal(2)
    const gone = api.calls.filter((call) => call.verb === 'watch').length

    // Still watching: an ask is served at once.
    const later = commitTo(upstream, 'main', 'later', 'after the relist\n')
    await declare(upstream, {prefetch: true, askedAt: new Date().toISOString()})
    await until(() => git(path.join(root, key), ['rev-parse', 'main']) === later)
    expect(api.calls.filter((call) => call.verb === 'watch').length).to.equal(gone)
    expect([count('list', 'pods'), count('list', 'repos')]).to.deep.equal([2, 2])
    // One warning per watch cut (pods, Repos), none for each retry.
    expect(h.warnings).to.have.length(2)
    expect(h.warnings.every((warning) => warning.includes('lost its watch'))).to.equal(true)
  })

  it('reconnects after an API server restart from its resourceVersion, seeing what changed meanwhile without a relist', async () => {
    const upstream = makeUpstream('app')
    await startAgent()
    const restarting = api.restart({downMs: 1500})
    const key = await declare(upstream, {prefetch: true})
    await restarting
    await until(() => present(key), 15_000)
    await until(() => api.openWatches() === 2)
    expect([count('list', 'pods'), count('list', 'repos')]).to.deep.equal([1, 1])
    expect(count('watch', 'pods')).to.be.at.least(2)
    expect(count('watch', 'repos')).to.be.at.least(2)
  })
})
