/**
 * Warm pools on the kubernetes runtime (docs/sandboxes.md, "Warm pool"; kube-pool.ts): pool pods
 * are ordinary Pods made through the API, prepared by `kubectl exec` and marked ready on the pod;
 * a create takes one with a patch conditional on its resourceVersion and relabels it with exactly
 * a cold create's identity (issue 18, acceptance 2). The cluster is the in-process fake API
 * server, the node's cache agent the real one, and the kubelet plays each pod with real podman
 * (fake-kubelet.ts), so git runs in real containers. The exclusive take is also checked alone,
 * against the fake API only.
 */
import {expect} from 'chai'
import {existsSync, readdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import type {PoolRow} from '../../../src/core/sandbox/pool.js'
import type {CacheAgentPass} from '../../../src/sdk/cache.js'
import type {SandboxSpec} from '../../../src/sdk/sandbox.js'
import type {BackendContext, Target} from '../../../src/sdk/target.js'

import {openCacheDemand} from '../../../src/plugins/k8s-sandbox/cache-demand.js'
import {KubePool} from '../../../src/plugins/k8s-sandbox/kube-pool.js'
import {KubernetesRuntime} from '../../../src/plugins/k8s-sandbox/kubernetes-runtime.js'
import {poolPodManifest} from '../../../src/plugins/k8s-sandbox/pool-pod.js'
import {ProcessRunner} from '../../../src/sdk/process.js'
import {repoIdentity} from '../../../src/sdk/repo-identity.js'
import {type FakeKubeApi, type KubeObject, startFakeKubeApi} from '../../support/fake-kube-api/index.js'
import {FakeKubectl} from '../../support/fake-kubectl.js'
import {ensureDefaultImage, podman, sweep} from '../../support/podman.js'
import {cleanupTemp, tempDir} from '../../support/repo.js'
import {yard} from '../../support/yard.js'
import {harness} from '../git-cache/support.js'
import {playAsKubelet} from './fake-kubelet.js'
import {cliAsync, FakeCluster, K2_TEST_PREFIX, NAMESPACE} from './kubernetes-support.js'
import {makeApp, makeUpstream, type SandboxFixture} from './support.js'

const prefix = `${K2_TEST_PREFIX}p`
const NODE = 'node-a'
/** As in kubernetes-runtime.test.ts: a cluster fetches no local path, so the upstream is named as if hosted. */
const hosted = (dir: string) => `https://git.test${dir}`
const HOSTED_ENV = {GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'url./.insteadOf', GIT_CONFIG_VALUE_0: 'https://git.test/'}
const NO_TIMER_MS = 10 * 60_000

interface ListRow {
  name: string
  project: string
  offset: number
  start: string
  repos: Array<{lastFetched: string | null}>
}

describe('warm pools on the kubernetes runtime (fake API server, real agent, podman as kubelet)', function () {
  this.timeout(120_000)
  let fixture: SandboxFixture
  let cluster: FakeCluster
  let upstream: string
  let cacheRoot: string
  let poolId: string
  const stop = new AbortController()
  let agent: Promise<CacheAgentPass> | undefined
  const run = async (args: string[], env: Record<string, string | undefined> = {}) =>
    yard(args, {cwd: fixture.app, env: {...fixture.env, ...cluster.env, ...HOSTED_ENV, ...env}})
  const pools = async () => (await run(['sandbox', 'pool', 'list', '--json'])).json as PoolRow[]
  const pods = () => cluster.api.objects('pods', NAMESPACE)
  const poolPods = () => pods().filter((pod) => pod.metadata.labels?.['yard.dev/pool'] === poolId)
  const podOf = (project: string) => pods().find((pod) => pod.metadata.labels?.['yard.dev/project'] === project)

  /** Waits until the pool has `size` ready pods (the detached refill makes them). */
  async function untilReady(size: number): Promise<PoolRow> {
    const deadline = Date.now() + 60_000
    for (;;) {
      const row = (await pools()).find((pool) => pool.id === poolId)!
      if (row.ready === size && row.pods.length === size) return row
      if (Date.now() > deadline) throw new Error(`pool ${poolId} never got ${size} ready pods: ${JSON.stringify(row)}`)
      await new Promise((resolve) => setTimeout(resolve, 300))
    }
  }

  /** What a sandbox looks like from outside: its list row (no freshness time, no start), ports, git inside. */
  async function observe(name: string) {
    const listed = ((await run(['sandbox', 'list', '--json'])).json as ListRow[]).find((row) => row.name === name)!
    const {start, ...row} = listed
    const ports = (await run(['ports', '--sandbox', name, '--json'])).json
    const inside = await cliAsync(fixture, {...cluster.env, ...HOSTED_ENV}, [
      'exec',
      `${name}/wt/${name}`,
      '--',
      'sh',
      '-c',
      'git status --short --branch && git log -1 --format=%s && git remote get-url --push origin && git config user.email && pwd',
    ])
    expect(inside.status, inside.stderr).to.equal(0)
    return {start, row: {...row, repos: row.repos.map((repo) => ({...repo, lastFetched: null}))}, ports, inside}
  }

  before(async () => {
    sweep(prefix)
    await ensureDefaultImage()
    upstream = hosted(makeUpstream('app'))
    cacheRoot = path.join(tempDir('yard-node'), 'caches')
    fixture = makeApp(prefix, 'WEB_PORT = 39970')
    writeFileSync(
      path.join(fixture.app, 'yard.local.toml'),
      `[cluster]\nruntime = "kubernetes"\ncache-root = "${cacheRoot}"\nready-timeout-seconds = 60\ncache-timeout-seconds = 30\n`,
    )
    cluster = await FakeCluster.start()
    cluster.answerAsks = false
    cluster.fallback = {kind: 'ready', node: NODE, agent: 'silent'}
    cluster.kubelet = playAsKubelet
    // The node's real agent clones the caches the Repos ask for and answers the pods' asks.
    const demand = await openCacheDemand(
      {node: NODE, cacheRoot, namespace: NAMESPACE},
      {...process.env, KUBECONFIG: cluster.api.kubeconfigPath},
    )
    agent = harness({root: cacheRoot, env: HOSTED_ENV}).cache.agent(cacheRoot, {
      intervalMs: NO_TIMER_MS,
      pollMs: NO_TIMER_MS,
      once: false,
      signal: stop.signal,
      demand,
    })
  })

  after(async () => {
    // A refill still running must find the pool gone, not the API server.
    await run(['sandbox', 'pool', 'rm', poolId]).catch(() => undefined)
    stop.abort()
    await agent
    await cluster?.close()
    sweep(prefix)
    cleanupTemp()
  })

  it('refuses bad input with exit 2 and changes nothing: a url the nodes cannot fetch, no kubeconfig, a bad size', async () => {
    const local = await run([
      'sandbox',
      'pool',
      'set',
      '--repo',
      upstream.slice('https://git.test'.length),
      '--size',
      '2',
    ])
    expect(local.exitCode, local.stderr).to.equal(2)
    expect(local.stderr).to.include('cannot be fetched by the cluster')
    const noConfig = await run(['sandbox', 'pool', 'set', '--repo', upstream, '--size', '2'], {
      KUBECONFIG: path.join(tempDir('yard-nokube'), 'config'),
    })
    expect(noConfig.exitCode, noConfig.stderr).to.equal(2)
    expect(noConfig.stderr).to.include('no kubeconfig found')
    const size = await run(['sandbox', 'pool', 'set', '--repo', upstream, '--size', '0'])
    expect(size.exitCode, size.stderr).to.equal(2)
    expect(
      existsSync(path.join(fixture.state, 'pools')) ? readdirSync(path.join(fixture.state, 'pools')) : [],
    ).to.deep.equal([])
    expect(pods()).to.deep.equal([])
  })

  it('pool set fills the pool with ordinary pods, prepared and marked ready on the pod, with no identity', async () => {
    const set = await run(['sandbox', 'pool', 'set', '--repo', upstream, '--size', '2', '--json'])
    expect(set.exitCode, set.stderr).to.equal(0)
    poolId = (set.json as {id: string}).id
    const row = await untilReady(2)
    expect(row).to.deep.include({id: poolId, runtime: 'kubernetes', size: 2, ready: 2})
    expect(poolPods()).to.have.length(2)
    for (const pod of poolPods()) {
      const {name, labels} = pod.metadata as {name: string; labels: Record<string, string>}
      expect(name.startsWith(`${prefix}.pool-${poolId}-`)).to.equal(true)
      expect(labels).to.include({
        'app.kubernetes.io/managed-by': 'yard',
        'yard.dev/prefix': prefix,
        'yard.dev/pool': poolId,
        'yard.dev/pool-ready': 'true',
      })
      expect(labels).to.not.have.any.keys('yard.dev/name', 'yard.dev/offset', 'yard.dev/project', 'yard.dev/pool-taken')
      expect(pod.spec.containers[0].ports).to.equal(undefined)
      expect(
        podman('exec', `${name}-workspace`, 'git', '-C', '/work/app/default', 'rev-parse', '--abbrev-ref', 'HEAD'),
      ).to.equal('main')
      expect(podman('exec', `${name}-workspace`, 'git', '-C', '/work/app/.pool', 'status', '--short')).to.equal('')
    }

    // Pool pods are no sandboxes.
    expect((await run(['sandbox', 'list', '--json'])).json).to.deep.equal([])
  })

  let warm: Awaited<ReturnType<typeof observe>>
  let warmPod: KubeObject

  it("create claims a ready pod: relabelled with NAME's identity, marked warm, found by every command; the pool refills", async () => {
    const before = poolPods().map((pod) => pod.metadata.name as string)
    const created = await run(['sandbox', 'create', 'feat', '--repo', upstream, '--json'])
    expect(created.exitCode, created.stderr).to.equal(0)
    expect(created.json).to.deep.include({
      name: 'feat',
      project: `${prefix}-feat`,
      runtime: 'kubernetes',
      start: 'warm',
    })
    expect(pods().some((pod) => pod.metadata.name === `${prefix}-feat`)).to.equal(false)
    warmPod = podOf(`${prefix}-feat`)!
    expect(before).to.include(warmPod.metadata.name)
    expect(warmPod.metadata.labels).to.not.have.any.keys('yard.dev/pool', 'yard.dev/pool-ready', 'yard.dev/pool-taken')
    expect(warmPod.metadata.annotations['yard.dev/warm']).to.equal(poolId)
    warm = await observe('feat')
    expect(warm.start).to.equal('warm')
    expect(warm.row).to.deep.include({name: 'feat', project: `${prefix}-feat`, runtime: 'kubernetes', node: NODE})
    expect(warm.inside.stdout.trim().split('\n')).to.deep.equal([
      '## wt/feat',
      'second',
      upstream,
      'sandbox@example.com',
      '/work/app/wt-feat',
    ])
    // Its ports are forwarded to the claimed pod, as a cold one's are: no relay on a cluster.
    const {offset} = created.json as {offset: number}
    const forward = await run(['sandbox', 'forward', 'feat', '--dry-run', '--json'])
    expect(forward.exitCode, forward.stderr).to.equal(0)
    expect(JSON.stringify(forward.json))
      .to.include(`pod/${warmPod.metadata.name}`)
      .and.include(`${39_970 + offset}:39970`)
    const row = await untilReady(2)
    expect(row.pods.map((pod) => pod.name)).not.to.include(warmPod.metadata.name)
  })

  it('a claimed sandbox is removed like a cold one, and a cold create of the same name is indistinguishable but for the marker', async () => {
    const removed = await run(['sandbox', 'rm', 'feat'])
    expect(removed.exitCode, removed.stderr).to.equal(0)
    expect(pods().some((pod) => pod.metadata.name === warmPod.metadata.name)).to.equal(false)
    expect((await run(['sandbox', 'list', '--json'])).json).to.deep.equal([])
    // pool rm removes the unclaimed pods, so this create is cold.
    const poolRemoved = await run(['sandbox', 'pool', 'rm', poolId, '--json'])
    expect(poolRemoved.exitCode, poolRemoved.stderr).to.equal(0)
    expect((poolRemoved.json as {pods: string[]}).pods).to.have.length(2)
    expect(poolPods()).to.deep.equal([])
    expect(await pools()).to.deep.equal([])
    const created = await run(['sandbox', 'create', 'feat', '--repo', upstream, '--json'])
    expect(created.exitCode, created.stderr).to.equal(0)
    expect((created.json as {start: string}).start).to.equal('cold')
    const coldPod = podOf(`${prefix}-feat`)!
    expect(coldPod.metadata.name).to.equal(`${prefix}-feat`)
    const cold = await observe('feat')
    expect(cold.start).to.equal('cold')
    expect({row: cold.row, ports: cold.ports, inside: cold.inside.stdout}).to.deep.equal({
      row: warm.row,
      ports: warm.ports,
      inside: warm.inside.stdout,
    })
    expect(coldPod.metadata.labels).to.deep.equal(warmPod.metadata.labels)
    const {'yard.dev/warm': marker, ...annotations} = warmPod.metadata.annotations as Record<string, string>
    expect(marker).to.equal(poolId)
    expect(coldPod.metadata.annotations).to.deep.equal(annotations)
    expect((await run(['sandbox', 'rm', 'feat'])).exitCode).to.equal(0)
  })
})

describe('kubernetes pool take: exclusive through the resourceVersion, never a dead or unready pod', function () {
  this.timeout(30_000)
  const owner = {id: 'abcdef012345', prefix: 'app', owner: '0123456789ab'}
  const url = 'https://git.test/team/app.git'
  const {identity, key} = repoIdentity(url)
  const spec: SandboxSpec = {
    runtime: 'kubernetes',
    image: 'yard-dev:test',
    cacheRoot: '/var/lib/yard/caches',
    repos: [{slot: 'app', url, ref: null, identity, key}],
    branch: '',
    portBases: {},
  }
  let api: FakeKubeApi

  /** A pool of its own, as a separate process would have (its own connection). */
  function kubePool(): KubePool {
    const env = {...process.env, ...new FakeKubectl().env, KUBECONFIG: api.kubeconfigPath}
    const context: BackendContext = {
      runner: new ProcessRunner({env}),
      env,
      stateDir: tempDir('yard-state'),
      warn: () => undefined,
    }
    const runtime = new KubernetesRuntime(context, {
      namespace: NAMESPACE,
      cacheRoot: spec.cacheRoot,
      readyTimeoutMs: 5000,
      cacheTimeoutMs: 5000,
    })
    return new KubePool(() => runtime)
  }

  /** A pool pod as fill leaves it; `ready` false: not prepared; `phase` its status. */
  async function poolPod(
    name: string,
    options: {ready?: boolean; phase?: 'Running' | 'Failed' | 'NotReady'; fingerprint?: string} = {},
  ): Promise<void> {
    const manifest = poolPodManifest(owner, name, spec, options.fingerprint ?? 'f1') as KubeObject
    if (options.ready !== false) manifest.metadata.labels['yard.dev/pool-ready'] = 'true'
    await api.put({...manifest, metadata: {...manifest.metadata, namespace: NAMESPACE}})
    const phase = options.phase ?? 'Running'
    if (phase === 'Running') await api.setPodReady(NAMESPACE, name, {node: 'node-a'})
    else
      await api.put({
        ...api.get('pods', NAMESPACE, name)!,
        status: {phase: phase === 'Failed' ? 'Failed' : 'Running', conditions: [{type: 'Ready', status: 'False'}]},
      })
  }

  beforeEach(async () => {
    api = await startFakeKubeApi({namespaces: [NAMESPACE]})
  })

  afterEach(async () => {
    await api.close()
    cleanupTemp()
  })

  it('of eight creates racing for three ready pods, each pod goes to exactly one; dead, unready, other-spec and taken pods to none', async () => {
    for (const name of ['app.pool-a', 'app.pool-b', 'app.pool-c']) await poolPod(name)
    await poolPod('app.pool-dead', {phase: 'Failed'})
    await poolPod('app.pool-crashed', {phase: 'NotReady'})
    await poolPod('app.pool-preparing', {ready: false})
    await poolPod('app.pool-old', {fingerprint: 'f0'})
    const listed = await kubePool().pods(owner, 'kubernetes')
    expect(Object.fromEntries(listed.map((pod) => [pod.name, pod.phase]))).to.deep.include({
      'app.pool-dead': 'Failed',
      'app.pool-crashed': 'NotReady',
      'app.pool-a': 'Running',
    })
    const projects = Array.from({length: 8}, (_, index) => `app-s${index}`)
    const taken = await Promise.all(
      projects.map(async (project) => kubePool().take(owner, 'kubernetes', 'f1', project)),
    )
    const winners = taken.filter((pod): pod is string => pod !== undefined)
    expect([...winners].sort()).to.deep.equal(['app.pool-a', 'app.pool-b', 'app.pool-c'])
    for (const [index, pod] of taken.entries())
      if (pod) expect(api.get('pods', NAMESPACE, pod)!.metadata.labels['yard.dev/pool-taken']).to.equal(projects[index])
    // Nothing is left to take; a pod given back can be taken again.
    expect(await kubePool().take(owner, 'kubernetes', 'f1', 'app-late')).to.equal(undefined)
    await kubePool().untake(winners[0], 'kubernetes')
    expect(await kubePool().take(owner, 'kubernetes', 'f1', 'app-late')).to.equal(winners[0])
  })

  it('a claim applies only to the take that holds the pod: its labels become exactly the identity given', async () => {
    await poolPod('app.pool-a')
    const pool = kubePool()
    expect(await pool.take(owner, 'kubernetes', 'f1', 'app-feat')).to.equal('app.pool-a')
    const target = (name: string): Target => ({
      name,
      isMain: false,
      prefix: 'app',
      project: `app-${name}`,
      owner: owner.owner,
      offset: 7,
      offsetSource: 'hash',
      ports: {},
      checkoutPath: '/src/app',
      mainPath: '/src/app',
    })
    const sandbox = {...spec, branch: 'wt/feat'}
    let refused: unknown
    await pool.claim('app.pool-a', owner.id, target('other'), sandbox).catch((error: unknown) => (refused = error))
    expect(String(refused)).to.include('claim the pool pod app.pool-a')
    const claimed = await pool.claim('app.pool-a', owner.id, target('feat'), sandbox)
    expect(claimed).to.deep.include({project: 'app-feat', start: 'warm', offset: 7})
    const pod = api.get('pods', NAMESPACE, 'app.pool-a')!
    expect(pod.metadata.labels).to.deep.equal({
      'app.kubernetes.io/managed-by': 'yard',
      'yard.dev/project': 'app-feat',
      'yard.dev/name': 'feat',
      'yard.dev/owner': owner.owner,
      'yard.dev/offset': '7',
      'yard.dev/prefix': 'app',
    })
    expect(Object.keys(pod.metadata.annotations).sort()).to.deep.equal(['yard.dev/spec', 'yard.dev/warm'])
    // No longer the pool's: neither listed nor taken.
    expect(await pool.pods(owner, 'kubernetes')).to.deep.equal([])
  })
})
