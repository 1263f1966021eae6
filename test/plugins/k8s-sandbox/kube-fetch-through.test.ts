/**
 * Fetch-through on the kubernetes runtime (issue 18, acceptance 3; sdk/fetch-through.ts,
 * cluster-asks.ts): the pod asks its node's cache agent through its asks directory on the node,
 * the agent fetches the cache from the remote and answers, the pod reads the cache. The cluster
 * is the in-process fake API server, the node's agent the real one (its watches, its git), and
 * the kubelet plays the pod exactly as created with real podman (fake-kubelet.ts): its hostPath
 * volumes are this machine's directories.
 */
import {expect} from 'chai'
import {existsSync, renameSync, statSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import type {CacheAgentPass} from '../../../src/sdk/cache.js'

import {openCacheDemand} from '../../../src/plugins/k8s-sandbox/cache-demand.js'
import {clusterAsksRoot} from '../../../src/plugins/k8s-sandbox/cluster-asks.js'
import {repoIdentity} from '../../../src/sdk/repo-identity.js'
import {ensureDefaultImage, sweep} from '../../support/podman.js'
import {cleanupTemp, tempDir} from '../../support/repo.js'
import {yard} from '../../support/yard.js'
import {commitTo, harness} from '../git-cache/support.js'
import {playAsKubelet} from './fake-kubelet.js'
import {cliAsync, FakeCluster, K2_TEST_PREFIX, NAMESPACE} from './kubernetes-support.js'
import {inPodTry, makeApp, makeUpstream, type SandboxFixture} from './support.js'

const prefix = `${K2_TEST_PREFIX}f`
const pod = `${prefix}-ft`
const NODE = 'node-a'
/** As in kubernetes-runtime.test.ts: a cluster fetches no local path, so the upstream is named as if hosted. */
const hosted = (dir: string) => `https://git.test${dir}`
const HOSTED_ENV = {GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'url./.insteadOf', GIT_CONFIG_VALUE_0: 'https://git.test/'}
const NO_TIMER_MS = 10 * 60_000

describe("sandbox fetch-through on the kubernetes runtime: the node's cache agent answers the pod's asks", function () {
  this.timeout(120_000)
  let fixture: SandboxFixture
  let cluster: FakeCluster
  let upstream: string
  let key: string
  let cacheRoot: string
  let stop = new AbortController()
  let agent: Promise<CacheAgentPass> | undefined
  /** The node's agent, watching the fake cluster, as a loop in this process. */
  async function startAgent(): Promise<void> {
    stop = new AbortController()
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
  }

  const inSandbox = async (...argv: string[]) =>
    cliAsync(fixture, {...cluster.env, ...HOSTED_ENV}, ['exec', 'ft/wt-ft', '--', ...argv])

  before(async () => {
    sweep(prefix)
    await ensureDefaultImage()
    upstream = makeUpstream('app')
    key = repoIdentity(hosted(upstream)).key
    cacheRoot = path.join(tempDir('yard-node'), 'caches')
    fixture = makeApp(prefix, 'WEB_PORT = 39960\n\n[cache]\nfetch-through-seconds = 8')
    writeFileSync(
      path.join(fixture.app, 'yard.local.toml'),
      `[cluster]\nruntime = "kubernetes"\ncache-root = "${cacheRoot}"\nready-timeout-seconds = 60\ncache-timeout-seconds = 30\n`,
    )
    cluster = await FakeCluster.start()
    // The real agent reports and answers; the scripted cluster only schedules and plays the pod.
    cluster.answerAsks = false
    cluster.fallback = {kind: 'ready', node: NODE, agent: 'silent'}
    cluster.kubelet = playAsKubelet
    await startAgent()
    const created = await yard(['sandbox', 'create', 'ft', '--repo', hosted(upstream)], {
      cwd: fixture.app,
      env: {...fixture.env, ...cluster.env, ...HOSTED_ENV},
    })
    expect(created.exitCode, created.stderr).to.equal(0)
  })

  after(async () => {
    stop.abort()
    await agent
    await cluster?.close()
    sweep(prefix)
    cleanupTemp()
  })

  it('the pod gets its own asks directory on the node, beside the cache root, and nothing else of the node writable', () => {
    const made = cluster.api.get('pods', NAMESPACE, pod)!
    const mounts = made.spec.containers[0].volumeMounts as Array<{name: string; mountPath: string; readOnly?: boolean}>
    const hostPaths = new Map(
      (made.spec.volumes as Array<{name: string; hostPath?: {path: string}}>)
        .filter((volume) => volume.hostPath)
        .map((volume) => [volume.name, volume.hostPath!.path]),
    )
    const writable = mounts
      .filter((mount) => hostPaths.has(mount.name) && !mount.readOnly)
      .map((mount) => [hostPaths.get(mount.name), mount.mountPath])
    expect(writable).to.deep.equal([[path.join(clusterAsksRoot(cacheRoot), pod, key), `/yard/asks/${key}`]])
    // The agent opened it to whatever user the image runs as.
    expect(statSync(path.join(clusterAsksRoot(cacheRoot), pod, key)).mode & 0o777).to.equal(0o777)
  })

  it('a commit pushed after create is origin/main after yard exec … git fetch origin, with no stale note', async () => {
    const entry = () =>
      cluster.api.get('repos.yard.dev', NAMESPACE, key)?.status?.nodes?.[NODE] as
        {present?: boolean; lastFetched?: string; lastError?: string | null} | undefined
    const before = entry()?.lastFetched
    const later = commitTo(upstream, 'main', 'later', 'pushed after the sandbox exists\n')
    const fetched = await inSandbox('git', 'fetch', 'origin')
    expect(fetched.status, fetched.stderr).to.equal(0)
    expect(fetched.stderr).not.to.include('yard:')
    const log = await inSandbox('git', 'log', '-1', '--format=%H', 'origin/main')
    expect(log.stdout.trim(), log.stderr).to.equal(later)
    // Served by the node's agent, reported in its entry of the Repo.
    expect(entry()?.present).to.equal(true)
    expect(entry()?.lastError ?? null).to.equal(null)
    expect(entry()?.lastFetched).to.be.a('string').and.not.equal(before)
  })

  it('with the upstream unreachable the fetch reads the cache and prints one stale line', async () => {
    renameSync(upstream, `${upstream}.away`)
    try {
      const fetched = await inSandbox('git', 'fetch', 'origin')
      expect(fetched.status, fetched.stderr).to.equal(0)
      const notes = fetched.stderr.split('\n').filter((line) => line.startsWith('yard: '))
      expect(notes, fetched.stderr).to.have.length(1)
      expect(notes[0]).to.match(
        new RegExp(
          String.raw`^yard: the cache ${key} is stale since \S+ \(\d+[smhd] ago\): .*; reading what the cache holds$`,
        ),
      )
    } finally {
      renameSync(`${upstream}.away`, upstream)
    }
  })

  it('the pod still cannot write the cache or create a file under /repos', async () => {
    for (const target of [`/repos/${key}/intruder`, `/repos/${key}/refs/heads/intruder`]) {
      const touched = inPodTry(pod, 'touch', target)
      expect(touched.status, `touch ${target}`).not.to.equal(0)
      expect(touched.stderr).to.match(/Read-only file system/)
    }

    expect(existsSync(path.join(cacheRoot, key, 'intruder'))).to.equal(false)
  })

  it("with the node's agent stopped, the fetch waits fetch-through-seconds, says so, then reads the cache", async () => {
    stop.abort()
    await agent
    const started = Date.now()
    const fetched = inPodTry(pod, 'git', '-C', '/work/app/wt-ft', 'fetch', 'origin')
    const seconds = (Date.now() - started) / 1000
    expect(fetched.status, fetched.stderr).to.equal(0)
    expect(fetched.stderr).to.include(
      `yard: the cache ${key} did not answer within 8s (its fetch takes longer, or the node's cache agent is not running)`,
    )
    expect(seconds).to.be.within(7.5, 16)
  })

  it("once the pod is gone from the node, its agent removes the pod's asks directory", async () => {
    await startAgent()
    const removed = await yard(['sandbox', 'rm', 'ft'], {
      cwd: fixture.app,
      env: {...fixture.env, ...cluster.env, ...HOSTED_ENV},
    })
    expect(removed.exitCode, removed.stderr).to.equal(0)
    const dir = path.join(clusterAsksRoot(cacheRoot), pod)
    const deadline = Date.now() + 10_000
    while (existsSync(dir) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100))
    expect(existsSync(dir)).to.equal(false)
    expect(existsSync(path.join(cacheRoot, key, 'HEAD')), 'the cache stays').to.equal(true)
  })
})
