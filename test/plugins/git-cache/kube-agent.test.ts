/**
 * `yard cache agent --kubernetes --once` (issue 7, acceptance 4; DESIGN.md §5.1, §5.2): the
 * agent's git side runs for real on local upstreams and a temporary node cache root; the cluster
 * is the in-process fake API server (test/support/fake-kube-api), which records every call the
 * agent makes. No podman objects are made here.
 */
import {expect} from 'chai'
import {existsSync, mkdirSync, readdirSync} from 'node:fs'
import path from 'node:path'

import type {CacheAgentPass} from '../../../src/sdk/cache.js'
import type {SandboxSpec} from '../../../src/sdk/sandbox.js'
import type {Target} from '../../../src/sdk/target.js'

import {AGENT_API_CALLS, mountedCacheKeys, openCacheDemand} from '../../../src/plugins/k8s-sandbox/cache-demand.js'
import {agentRoleRules} from '../../../src/plugins/k8s-sandbox/cluster-objects.js'
import {podManifest} from '../../../src/plugins/k8s-sandbox/manifest.js'
import {repoCrd, repoObject} from '../../../src/plugins/k8s-sandbox/repo-resource.js'
import {repoIdentity} from '../../../src/sdk/repo-identity.js'
import {
  allowedBy,
  type FakeKubeApi,
  type FakeKubeCall,
  type KubeObject,
  startFakeKubeApi,
} from '../../support/fake-kube-api/index.js'
import {cleanupTemp, tempDir} from '../../support/repo.js'
import {yard, type YardRun} from '../../support/yard.js'
import {commitTo, git, harness, localConfig, makeUpstream, PIN_LINES} from './support.js'

/** Resolves once `condition` holds; rejects after `ms`. */
async function until(condition: () => boolean, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`still waiting after ${ms} ms`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const NAMESPACE = 'yard'
const NODE = 'node-a'
const OTHER_NODE = 'node-b'
const REPOS = 'repos.yard.dev'

describe('git-cache: the agent on a cluster (yard cache agent --kubernetes)', function () {
  this.timeout(60_000)
  let api: FakeKubeApi
  let root: string
  /** Every call the agent runs made (the tests' own seeding is not recorded). */
  let agentCalls: FakeKubeCall[]

  beforeEach(async () => {
    api = await startFakeKubeApi({namespaces: [NAMESPACE], crds: [repoCrd()]})
    root = path.join(tempDir('yard-node'), 'caches')
    agentCalls = []
  })

  afterEach(async () => {
    await api.close()
    cleanupTemp()
  })

  /** One `--once --json` pass of the agent of NODE (or `node`). */
  async function agent(
    env: Record<string, string | undefined> = {},
  ): Promise<YardRun & {pass: Required<CacheAgentPass>}> {
    const before = api.calls.length
    const run = await yard(['cache', 'agent', '--kubernetes', '--once', '--json'], {
      cwd: tempDir('yard-cwd'),
      env: {
        KUBECONFIG: api.kubeconfigPath,
        NODE_NAME: NODE,
        YARD_NAMESPACE: NAMESPACE,
        YARD_CACHE_ROOT: root,
        YARD_KUBE_CONTEXT: undefined,
        ...env,
      },
    })
    agentCalls.push(...api.calls.slice(before))
    return {...run, pass: run.json as Required<CacheAgentPass>}
  }

  /** A Repo named by the cache key of `url`; returns the key. */
  async function declare(url: string, spec: {refreshInterval?: string; askedAt?: string} = {}): Promise<string> {
    const {key} = repoIdentity(url)
    await api.put(repoObject(key, NAMESPACE, {url, ...spec}))
    return key
  }

  /** A sandbox pod (the manifest `yard sandbox create` makes) mounting `urls`, on `node`, in `phase`. */
  async function sandboxPod(
    name: string,
    urls: string[],
    node: string,
    phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed' = 'Running',
  ): Promise<void> {
    const target: Target = {
      name,
      isMain: false,
      prefix: 'app',
      project: `app-${name}`,
      owner: '0123456789ab',
      offset: 7,
      offsetSource: 'hash',
      ports: {},
      checkoutPath: '/src/app',
      mainPath: '/src/app',
    }
    const repos = urls.map((url) => ({
      slot: path.basename(url, '.git'),
      url,
      ref: null,
      identity: repoIdentity(url).identity,
      key: repoIdentity(url).key,
    }))
    const spec: SandboxSpec = {
      runtime: 'kubernetes',
      image: 'yard-dev:test',
      cacheRoot: root,
      repos,
      branch: `wt/${name}`,
      portBases: {},
    }
    const pod = podManifest(target, spec) as KubeObject
    await api.put({
      ...pod,
      metadata: {...pod.metadata, namespace: NAMESPACE},
      spec: {...pod.spec, nodeName: node},
      status: {phase},
    })
  }

  async function setPhase(name: string, phase: 'Succeeded' | 'Failed'): Promise<void> {
    await api.patchStatus('pods', NAMESPACE, `app-${name}`, {phase})
  }

  const statusOf = (key: string) =>
    api.get(REPOS, NAMESPACE, key)?.status?.nodes as Record<string, Record<string, unknown>> | undefined
  const present = (key: string) => existsSync(path.join(root, key, 'HEAD'))
  const patches = () =>
    agentCalls.filter((call) => call.verb !== 'get' && call.verb !== 'list' && call.verb !== 'watch')

  it('clones a Repo that a pod on its node mounts, and reports it present in its own entry', async () => {
    const upstream = makeUpstream('app')
    const key = await declare(upstream)
    await sandboxPod('feat', [upstream], NODE)

    const run = await agent()
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(run.pass.cloned).to.deep.equal([key])
    expect(run.pass.failed).to.deep.equal([])
    expect(present(key)).to.equal(true)
    expect(git(path.join(root, key), ['rev-parse', 'main'])).to.equal(git(upstream, ['rev-parse', 'main']))
    const entry = statusOf(key)?.[NODE]
    expect(entry).to.include({present: true})
    expect(Date.parse(String(entry?.lastFetched))).to.be.closeTo(Date.now(), 60_000)
    expect(entry?.lastError ?? null).to.equal(null)
  })

  it('fetches a present cache when a newer ask appears, and not before', async () => {
    const upstream = makeUpstream('app')
    const key = await declare(upstream)
    await sandboxPod('feat', [upstream], NODE)
    expect((await agent()).pass.cloned).to.deep.equal([key])
    const first = statusOf(key)?.[NODE]?.lastFetched
    const later = commitTo(upstream, 'main', 'later', 'a new upstream commit\n')

    // Within the interval and without an ask, a pass leaves it as it is.
    const quiet = await agent()
    expect(quiet.exitCode, quiet.stderr).to.equal(0)
    expect(quiet.pass.fetched).to.deep.equal([])
    expect(git(path.join(root, key), ['rev-parse', 'main'])).to.not.equal(later)

    await declare(upstream, {askedAt: new Date().toISOString()})
    const asked = await agent()
    expect(asked.exitCode, asked.stderr).to.equal(0)
    expect(asked.pass.fetched).to.deep.equal([key])
    expect(git(path.join(root, key), ['rev-parse', 'main'])).to.equal(later)
    const entry = statusOf(key)?.[NODE]
    expect(entry).to.include({present: true})
    expect(Date.parse(String(entry?.lastFetched))).to.be.greaterThan(Date.parse(String(first)))

    // The ask was served: the next pass does not fetch again.
    expect((await agent()).pass.fetched).to.deep.equal([])
  })

  it("fetches a present cache on its Repo's refreshInterval, and others on --interval", async () => {
    const quick = makeUpstream('quick')
    const slow = makeUpstream('slow')
    const quickKey = await declare(quick, {refreshInterval: '1s'})
    const slowKey = await declare(slow)
    await sandboxPod('feat', [quick, slow], NODE)
    expect((await agent()).pass.cloned.sort()).to.deep.equal([quickKey, slowKey].sort())
    const quickTip = commitTo(quick, 'main', 'later', 'quick\n')
    const slowTip = commitTo(slow, 'main', 'later', 'slow\n')
    // Past 1 s +20 % since the clone.
    await new Promise((resolve) => setTimeout(resolve, 1300))

    const run = await agent()
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(run.pass.fetched).to.deep.equal([quickKey])
    expect(git(path.join(root, quickKey), ['rev-parse', 'main'])).to.equal(quickTip)
    expect(git(path.join(root, slowKey), ['rev-parse', 'main'])).to.not.equal(slowTip)
  })

  it('with --once, an API failure exits 1 naming the call and changes nothing; the loop warns and goes on', async () => {
    const upstream = makeUpstream('app')
    const key = await declare(upstream)
    await sandboxPod('feat', [upstream], NODE)
    api.inject(
      {verb: 'list', resource: 'repos'},
      {code: 403, reason: 'Forbidden', message: 'repos.yard.dev is forbidden'},
    )
    const once = await agent()
    expect(once.exitCode).to.equal(1)
    expect(JSON.stringify(once.json)).to.include('list the Repos').and.include('forbidden')
    expect(present(key)).to.equal(false)

    api.inject({verb: 'list', resource: 'pods'}, {code: 503, reason: 'ServiceUnavailable', message: 'try later'}, 2)
    const h = harness({root})
    const demand = await openCacheDemand(
      {node: NODE, cacheRoot: root, namespace: NAMESPACE},
      {...process.env, KUBECONFIG: api.kubeconfigPath},
    )
    const stop = new AbortController()
    const running = h.cache.agent(root, {
      intervalMs: 10 * 60_000,
      once: false,
      signal: stop.signal,
      pollMs: 100,
      demand,
    })
    try {
      await until(() => statusOf(key)?.[NODE]?.present === true)
    } finally {
      stop.abort()
    }

    expect((await running).cloned).to.deep.equal([key])
    // Watching, one warning per outage: the informer retries with backoff by itself.
    expect(h.warnings).to.have.length(1)
    expect(h.warnings[0]).to.include('lost its watch').and.include('503')
  })

  it("adopts a repository found in the root (pinned), refreshes it from its Repo's url and reports it present", async () => {
    const upstream = makeUpstream('app')
    const key = await declare(upstream)
    mkdirSync(root, {recursive: true})
    git(root, ['clone', '-q', '--bare', '--', upstream, key])
    const later = commitTo(upstream, 'main', 'later', 'after the copy\n')

    const run = await agent()
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(run.pass).to.deep.include({adopted: [key], fetched: [key], cloned: [], evicted: []})
    expect(localConfig(path.join(root, key))).to.include.members(PIN_LINES)
    expect(git(path.join(root, key), ['rev-parse', 'main'])).to.equal(later)
    expect(statusOf(key)?.[NODE]).to.include({present: true})
  })

  it('leaves un-cloned a Repo that no pod on its node needs: pods on other nodes and pods that ended do not count', async () => {
    const elsewhere = makeUpstream('elsewhere')
    const ended = makeUpstream('ended')
    const unused = makeUpstream('unused')
    const keys = [await declare(elsewhere), await declare(ended), await declare(unused)]
    await sandboxPod('other', [elsewhere], OTHER_NODE)
    await sandboxPod('done', [ended], NODE, 'Succeeded')
    await sandboxPod('broken', [ended], NODE, 'Failed')

    const run = await agent()
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(run.pass).to.deep.include({cloned: [], fetched: [], failed: []})
    for (const key of keys) {
      expect(present(key), key).to.equal(false)
      expect(statusOf(key)?.[NODE], key).to.equal(undefined)
    }

    expect(patches()).to.deep.equal([])
  })

  it('evicts a cache only once its Repo is gone and no pod on its node that has not ended mounts it', async () => {
    const upstream = makeUpstream('app')
    const kept = makeUpstream('kept')
    const key = await declare(upstream)
    const keptKey = await declare(kept)
    await sandboxPod('feat', [upstream], NODE)
    await sandboxPod('keep', [kept], NODE)
    expect((await agent()).pass.cloned.sort()).to.deep.equal([key, keptKey].sort())

    // The Repo is gone, but a running pod still mounts the cache: it stays.
    api.remove(REPOS, NAMESPACE, key)
    const held = await agent()
    expect(held.exitCode, held.stderr).to.equal(0)
    expect(held.pass.evicted).to.deep.equal([])
    expect(present(key)).to.equal(true)

    // The pod ended (and another that mounts it failed): nothing holds it any more.
    await setPhase('feat', 'Succeeded')
    await sandboxPod('crashed', [upstream], NODE, 'Failed')
    // A Repo whose pod is gone keeps its cache: the Repo still wants it.
    api.remove('pods', NAMESPACE, 'app-keep')
    const gone = await agent()
    expect(gone.exitCode, gone.stderr).to.equal(0)
    expect(gone.pass.evicted).to.deep.equal([key])
    expect(readdirSync(root).filter((name) => name.startsWith(key))).to.deep.equal([])
    expect(present(keptKey)).to.equal(true)
    expect(statusOf(keptKey)?.[NODE]).to.include({present: true})
  })

  it("keeps the directory a pod's hostPath volume made for a cache it is waiting for", async () => {
    const upstream = makeUpstream('app')
    const {key} = repoIdentity(upstream)
    // The kubelet made the (empty) directory; no Repo yet: nothing to clone from, nothing to remove.
    mkdirSync(path.join(root, key), {recursive: true})
    await sandboxPod('feat', [upstream], NODE, 'Pending')
    const run = await agent()
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(run.pass).to.deep.include({removed: [], evicted: [], cloned: []})
    expect(existsSync(path.join(root, key))).to.equal(true)
  })

  it("writes only its own node's entry of a Repo's status, with merge patches on the status subresource", async () => {
    const upstream = makeUpstream('app')
    const broken = path.join(tempDir('yard-missing'), 'gone.git')
    const key = await declare(upstream)
    const brokenKey = await declare(broken)
    const theirs = {present: true, lastFetched: '2026-01-02T03:04:05Z'}
    await api.patchStatus(REPOS, NAMESPACE, key, {nodes: {[OTHER_NODE]: theirs}})
    await sandboxPod('feat', [upstream, broken], NODE)

    const run = await agent()
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(run.pass.cloned).to.deep.equal([key])
    expect(run.pass.failed).to.deep.equal([brokenKey])
    expect(statusOf(key)?.[OTHER_NODE]).to.deep.equal(theirs)
    expect(Object.keys(statusOf(key) ?? {}).sort()).to.deep.equal([NODE, OTHER_NODE])
    // A failed clone is reported, so a sandbox waiting on it fails with git's words.
    expect(statusOf(brokenKey)?.[NODE]).to.include({present: false})
    expect(String(statusOf(brokenKey)?.[NODE]?.lastError))
      .to.match(/^git clone .*failed/)
      .and.include(broken)

    const writes = patches()
    expect(writes.map((call) => `${call.verb} ${call.resource}/${call.subresource} ${call.name}`).sort()).to.deep.equal(
      [`patch repos/status ${brokenKey}`, `patch repos/status ${key}`].sort(),
    )
    for (const call of writes) {
      expect(call.contentType).to.equal('application/merge-patch+json')
      expect(call.body).to.have.all.keys('status')
      expect((call.body as {status: {nodes: object}}).status).to.have.all.keys('nodes')
      expect((call.body as {status: {nodes: object}}).status.nodes).to.have.all.keys(NODE)
    }

    // Nothing changed: the next pass writes nothing.
    const before = patches().length
    expect((await agent()).exitCode).to.equal(0)
    expect(patches().length).to.equal(before)
  })

  it('makes only the calls the rendered Role allows', async () => {
    const upstream = makeUpstream('app')
    const key = await declare(upstream)
    await sandboxPod('feat', [upstream], NODE)
    await agent()
    await declare(upstream, {askedAt: new Date().toISOString()})
    await agent()
    api.remove(REPOS, NAMESPACE, key)
    await setPhase('feat', 'Failed')
    expect((await agent()).pass.evicted).to.deep.equal([key])

    const rules = agentRoleRules()
    expect(agentCalls.length).to.be.greaterThan(0)
    for (const call of agentCalls)
      expect(
        allowedBy(rules, call),
        `${call.verb} ${call.group}/${call.resource}${call.subresource ? `/${call.subresource}` : ''}`,
      ).to.equal(true)
    expect(agentCalls.every((call) => call.namespace === NAMESPACE)).to.equal(true)
    // Pods are read on this node only.
    expect(agentCalls.filter((call) => call.resource === 'pods').map((call) => call.fieldSelector)).to.satisfy(
      (selectors: string[]) =>
        selectors.length > 0 && selectors.every((selector) => selector === `spec.nodeName=${NODE}`),
    )
    // And the calls it makes are among the ones it declares (cache-demand.ts); --once lists, never watches.
    const made = new Set(
      agentCalls.map(
        (call) =>
          `${call.group}|${call.subresource ? `${call.resource}/${call.subresource}` : call.resource}|${call.verb}`,
      ),
    )
    expect([...made].sort()).to.deep.equal(
      AGENT_API_CALLS.filter((call) => call.verb !== 'watch')
        .map((call) => `${call.apiGroup}|${call.resource}|${call.verb}`)
        .sort(),
    )
  })

  it('running as a loop, clones for a pod that appears, serves an ask, evicts, clones again at once when wanted again, and stops when told', async () => {
    const upstream = makeUpstream('app')
    const h = harness({root})
    const demand = await openCacheDemand(
      {node: NODE, cacheRoot: root, namespace: NAMESPACE},
      {...process.env, KUBECONFIG: api.kubeconfigPath},
    )
    const stop = new AbortController()
    const running = h.cache.agent(root, {
      intervalMs: 10 * 60_000,
      once: false,
      signal: stop.signal,
      pollMs: 100,
      demand,
    })
    try {
      const key = await declare(upstream)
      await sandboxPod('feat', [upstream], NODE)
      await until(() => statusOf(key)?.[NODE]?.present === true)
      expect(present(key)).to.equal(true)
      const later = commitTo(upstream, 'main', 'later', 'a new upstream commit\n')
      await declare(upstream, {askedAt: new Date().toISOString()})
      await until(() => present(key) && git(path.join(root, key), ['rev-parse', 'main']) === later)
      // Unwanted, evicted; wanted again by a new pod: cloned at once, not an interval later.
      api.remove(REPOS, NAMESPACE, key)
      await setPhase('feat', 'Succeeded')
      await until(() => !existsSync(path.join(root, key)))
      await declare(upstream)
      await sandboxPod('again', [upstream], NODE)
      await until(() => present(key), 10_000)
    } finally {
      stop.abort()
    }

    const pass = await running
    expect(pass.cloned).to.have.length(2)
    expect(pass.fetched).to.have.length(1)
    expect(pass.evicted).to.have.length(1)
    expect(h.warnings).to.deep.equal([])
  })

  it('refuses to start without NODE_NAME (exit 2) and touches nothing', async () => {
    const run = await agent({NODE_NAME: undefined})
    expect(run.exitCode).to.equal(2)
    expect(JSON.stringify(run.json)).to.include('NODE_NAME')
    expect(existsSync(root)).to.equal(false)
    expect(agentCalls).to.deep.equal([])
  })
})

describe('git-cache: which caches a pod mounts (cluster mode)', () => {
  const pod = (paths: string[], phase?: string) => ({
    spec: {volumes: [...paths.map((hostPath) => ({hostPath: {path: hostPath}})), {emptyDir: {}} as never]},
    status: {phase},
  })

  it('reads hostPath volumes directly under the cache root named like caches, of pods that have not ended', () => {
    const cases: Array<[string, Parameters<typeof mountedCacheKeys>[0], string[]]> = [
      ['a sandbox pod', [pod(['/var/lib/yard/yard/caches/app-0123abcd'], 'Running')], ['app-0123abcd']],
      [
        'a pending pod, a trailing slash, a dot segment',
        [pod(['/var/lib/yard/yard/caches/app-0123abcd/', '/var/lib/yard/yard/./caches/lib-89abcdef'], 'Pending')],
        ['app-0123abcd', 'lib-89abcdef'],
      ],
      ['no phase yet', [pod(['/var/lib/yard/yard/caches/app-0123abcd'])], ['app-0123abcd']],
      [
        'pods that ended',
        [
          pod(['/var/lib/yard/yard/caches/app-0123abcd'], 'Succeeded'),
          pod(['/var/lib/yard/yard/caches/lib-89abcdef'], 'Failed'),
        ],
        [],
      ],
      [
        'elsewhere, deeper, the root itself, not a cache name',
        [
          pod(
            [
              '/var/lib/other/app-0123abcd',
              '/var/lib/yard/yard/caches/app-0123abcd/objects',
              '/var/lib/yard/yard/caches',
              '/var/lib/yard/yard/caches/notes',
            ],
            'Running',
          ),
        ],
        [],
      ],
    ]
    for (const [name, pods, keys] of cases)
      expect([...mountedCacheKeys(pods, '/var/lib/yard/yard/caches/')].sort(), name).to.deep.equal(keys)
  })
})
