/**
 * The cluster cache agent's load on the API server (docs/cluster.md, "The agent's API load"):
 * BENCH_NODES (default 50) nodes' agents run in this process, each with its own informers
 * (its node's pods, the Repos) and its own cache root, against the fake API server
 * (test/support/fake-kube-api), which records every request. Time runs BENCH_TIME_SCALE (default
 * 60) times faster on both sides — the server's watch timeouts, the agents' watch timers,
 * backoffs and resyncs — so a simulated minute takes a real second.
 *
 * Rows: (a) idle for BENCH_IDLE_MINUTES simulated minutes (default 30) with nothing to cache:
 * the watches' reconnects only; target ≤ 1 request per node per minute. (b) a burst of
 * BENCH_CREATES (default 100) sandbox creates: each declares one of 5 Repos and starts a pod
 * mounting it on node (k mod U) of U nodes used; the agents clone on first demand and report.
 * Run on all N nodes, on N/5 of N nodes, and on N/5 of N/5 nodes: requests follow the (node,
 * repository) pairs the creates make, at most one report per create, not the number of nodes (watch
 * reconnects during the burst are counted apart: they
 * follow the clock, at the idle row's rate).
 * A row's figure is its phase's wall-clock time; the request counts are in its note and under
 * `requests` in results.json.
 */
import {execFileSync} from 'node:child_process'
import {mkdirSync} from 'node:fs'
import {join} from 'node:path'

import type {CacheAgentPass} from '../src/sdk/cache.js'
import type {SandboxSpec} from '../src/sdk/sandbox.js'
import type {BackendContext, Target} from '../src/sdk/target.js'

import {GitCache} from '../src/plugins/git-cache/cache.js'
import {DEFAULT_BUDGETS} from '../src/plugins/git-cache/repository.js'
import {openCacheDemand} from '../src/plugins/k8s-sandbox/cache-demand.js'
import {podManifest} from '../src/plugins/k8s-sandbox/manifest.js'
import {repoCrd, repoObject} from '../src/plugins/k8s-sandbox/repo-resource.js'
import {ProcessRunner} from '../src/sdk/process.js'
import {repoIdentity} from '../src/sdk/repo-identity.js'
import {type FakeKubeApi, type KubeObject, startFakeKubeApi} from '../test/support/fake-kube-api/index.js'
import {makeScratchDir, reportBench, type RowResult} from './lib.js'

const log = (line: string) => process.stderr.write(`cluster-agent: ${line}\n`)
const NAMESPACE = 'yard'
const REPOS = 5

function setting(name: string, fallback: number): number {
  const text = process.env[name]
  if (text === undefined || text === '') return fallback
  const value = Number(text)
  if (!Number.isInteger(value) || value < 1) {
    process.stderr.write(`cluster-agent: ${name} must be a whole number ≥ 1, not ${JSON.stringify(text)}\n`)
    process.exit(2)
  }

  return value
}

const nodes = setting('BENCH_NODES', 50)
const creates = setting('BENCH_CREATES', 100)
const idleMinutes = setting('BENCH_IDLE_MINUTES', 30)
const scale = setting('BENCH_TIME_SCALE', 60)
const gitEnv = {
  ...process.env,
  LC_ALL: 'C',
  GIT_TERMINAL_PROMPT: '0',
  GIT_AUTHOR_NAME: 'Bench',
  GIT_AUTHOR_EMAIL: 'b@example.com',
  GIT_COMMITTER_NAME: 'Bench',
  GIT_COMMITTER_EMAIL: 'b@example.com',
}

async function until(condition: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`still waiting for ${what} after ${ms} ms`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** Small local upstreams, one commit each. */
async function upstreams(dir: string): Promise<string[]> {
  return Array.from({length: REPOS}, (_, index) => {
    const bare = join(dir, `repo${index}.git`)
    const work = join(dir, `work${index}`)
    execFileSync('git', ['init', '-q', '-b', 'main', work], {env: gitEnv})
    execFileSync('git', ['-C', work, 'commit', '-q', '--allow-empty', '-m', 'first'], {env: gitEnv})
    execFileSync('git', ['clone', '-q', '--bare', '--', work, bare], {env: gitEnv})
    return bare
  })
}

interface Cluster {
  api: FakeKubeApi
  roots: string[]
  stop: AbortController
  agents: Array<Promise<CacheAgentPass>>
}

/** The fake API server and `count` nodes' agents, each watching; resolves once every watch is open. */
async function startCluster(count: number, dir: string): Promise<Cluster> {
  const api = await startFakeKubeApi({namespaces: [NAMESPACE], crds: [repoCrd()], timeScale: scale})
  const stop = new AbortController()
  const roots: string[] = []
  const agents: Array<Promise<CacheAgentPass>> = []
  for (let index = 0; index < count; index++) {
    const root = join(dir, `node-${index}`, 'caches')
    mkdirSync(root, {recursive: true})
    roots.push(root)
    const context: BackendContext = {
      runner: new ProcessRunner({env: gitEnv}),
      env: gitEnv,
      stateDir: join(dir, `node-${index}`),
      warn: (message) => log(`node-${index}: ${message}`),
    }
    const demand = await openCacheDemand(
      {
        node: `node-${index}`,
        cacheRoot: root,
        namespace: NAMESPACE,
        timing: {timeoutSeconds: [300, 600], timeScale: scale},
      },
      {...process.env, KUBECONFIG: api.kubeconfigPath},
    )
    // The refresh interval is a day: fetches and their reports are another load than watching.
    agents.push(
      new GitCache(context, DEFAULT_BUDGETS).agent(root, {
        intervalMs: 24 * 3_600_000,
        pollMs: 60_000 / scale,
        once: false,
        signal: stop.signal,
        demand,
      }),
    )
  }

  await until(() => api.openWatches() === 2 * count, 60_000, `${2 * count} watches`)
  return {api, roots, stop, agents}
}

async function stopCluster(cluster: Cluster): Promise<void> {
  cluster.stop.abort()
  await Promise.all(cluster.agents)
  await cluster.api.close()
}

/** A sandbox create as the cluster sees it: its Repo declared (made when missing), then its pod on `node`. */
async function create(api: FakeKubeApi, index: number, url: string, node: string, cacheRoot: string): Promise<void> {
  const {key, identity} = repoIdentity(url)
  if (!api.get('repos.yard.dev', NAMESPACE, key)) await api.put(repoObject(key, NAMESPACE, {url}))
  const target: Target = {
    name: `s${index}`,
    isMain: false,
    prefix: 'bench',
    project: `bench-s${index}`,
    owner: '0123456789ab',
    offset: index,
    offsetSource: 'hash',
    ports: {},
    checkoutPath: '/src/bench',
    mainPath: '/src/bench',
  }
  const spec: SandboxSpec = {
    runtime: 'kubernetes',
    image: 'yard-dev:bench',
    cacheRoot,
    repos: [{slot: 'app', url, ref: null, identity, key}],
    branch: `wt/s${index}`,
    portBases: {},
  }
  const pod = podManifest(target, spec) as KubeObject
  await api.put({
    ...pod,
    metadata: {...pod.metadata, namespace: NAMESPACE},
    spec: {...pod.spec, nodeName: node},
    status: {phase: 'Running'},
  })
}

const requestsSince = (api: FakeKubeApi, from: number) => {
  const calls = api.calls.slice(from)
  return {
    total: calls.length,
    list: calls.filter((call) => call.verb === 'list').length,
    watch: calls.filter((call) => call.verb === 'watch').length,
    patch: calls.filter((call) => call.verb === 'patch').length,
  }
}

const row = (label: string, ms: number, note: string, requests: object): RowResult & {requests: object} => ({
  label,
  runs: 1,
  medianMs: ms,
  minMs: ms,
  p90Ms: ms,
  ratio: null,
  note,
  requests,
})

const dir = await makeScratchDir('cluster-agent')
const urls = await upstreams(join(dir, 'upstreams'))
const rows: Array<RowResult & {requests: object}> = []

{
  log(`${nodes} nodes idle for ${idleMinutes} simulated minutes (${((idleMinutes * 60) / scale).toFixed(0)} s)`)
  const cluster = await startCluster(nodes, join(dir, 'idle'))
  const from = cluster.api.calls.length
  const started = Date.now()
  await new Promise((resolve) => setTimeout(resolve, (idleMinutes * 60_000) / scale))
  const requests = requestsSince(cluster.api, from)
  const perNodeMinute = requests.total / nodes / idleMinutes
  rows.push(
    row(
      `idle, ${nodes} nodes, ${idleMinutes} min`,
      Date.now() - started,
      `${perNodeMinute.toFixed(2)} requests per node per minute (target ≤ 1: ${perNodeMinute <= 1 ? 'met' : 'NOT met'}); ${requests.watch} watch reconnects, ${requests.list} lists`,
      {...requests, perNodeMinute},
    ),
  )
  await stopCluster(cluster)
}

const fifth = Math.max(1, Math.round(nodes / 5))
// [nodes running an agent, nodes the creates land on]
const bursts: Array<[number, number]> = [
  [nodes, nodes],
  [nodes, fifth],
  [fifth, fifth],
]
for (const [count, used] of bursts) {
  log(`a burst of ${creates} creates on ${used} of ${count} nodes`)
  const cluster = await startCluster(count, join(dir, `burst-${count}-${used}`))
  const from = cluster.api.calls.length
  const started = Date.now()
  const pairs = new Set<string>()
  for (let index = 0; index < creates; index++) {
    const node = index % used
    pairs.add(`${node}/${index % REPOS}`)
    await create(cluster.api, index, urls[index % REPOS], `node-${node}`, cluster.roots[node])
  }

  // Every (node, repository) pair a create made is reported present by that node.
  const presentPairs = () =>
    [...pairs].filter((pair) => {
      const [node, repo] = pair.split('/').map(Number)
      return (
        cluster.api.get('repos.yard.dev', NAMESPACE, repoIdentity(urls[repo]).key)?.status?.nodes?.[`node-${node}`]
          ?.present === true
      )
    }).length
  await until(() => presentPairs() === pairs.size, 300_000, `${pairs.size} caches reported present`)
  const requests = requestsSince(cluster.api, from)
  const took = Date.now() - started
  // Watch reconnects run on their own clock (the idle row's rate) over the burst's simulated
  // minutes; the rest the creates caused.
  const caused = requests.total - requests.watch
  const minutes = (took * scale) / 60_000
  rows.push(
    row(
      `burst of ${creates} creates on ${used} of ${count} nodes`,
      took,
      `${caused} requests caused (${requests.patch} status reports, ${requests.list} lists) for ${pairs.size} node×repository pairs, ${(caused / creates).toFixed(2)} per create; besides, ${requests.watch} watch reconnects over ${minutes.toFixed(0)} simulated minutes`,
      {...requests, caused, pairs: pairs.size, perCreate: caused / creates, simulatedMinutes: minutes},
    ),
  )
  await stopCluster(cluster)
}

await reportBench({name: 'cluster-agent', baseline: null, rows})
