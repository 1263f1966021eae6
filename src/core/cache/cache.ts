/**
 * Use cases of `yard cache …` (DESIGN.md §5.1): which cache backend and root apply, and the
 * `--all` forms of fetch and maintain. Caches live outside any checkout (a node's agent runs
 * with none), so outside a repository the root comes from `YARD_CACHE_ROOT` or the state dir.
 */
import path from 'node:path'

import type {
  BorrowerProbe,
  CacheAddResult,
  CacheAgentEvent,
  CacheAgentPass,
  CacheBackend,
  CacheEvictResult,
  CacheFetchResult,
  CacheMaintainResult,
} from '../../sdk/cache.js'
import type {SandboxBackend} from '../../sdk/sandbox.js'
import type {YardContext} from '../kernel/context.js'
import type {Backends} from '../registry/backends.js'

import {MAX_INTERVAL_MS} from '../../sdk/duration.js'
import {InputError, OperationError} from '../../sdk/errors.js'
import {namespaceFromEnv} from '../cluster/cluster.js'
import {stateDir} from '../kernel/state.js'
import {mainConfigIfAny} from '../workspace/workspace.js'

export const DEFAULT_CACHE_BACKEND = 'git-cache'
const DEFAULT_SANDBOX_BACKEND = 'k8s-sandbox'

/**
 * `[cache] backend` and `[cache] root` (absolute): from the main checkout's config when the
 * current directory is in one, else `YARD_CACHE_ROOT` → `<state dir>/caches` and `git-cache`.
 * @throws InputError (exit 2) for invalid config.
 */
export async function cacheSettings(
  context: YardContext,
): Promise<{backend: string; root: string; sandboxBackend: string; lfs?: 'all' | 'off'}> {
  const config = await mainConfigIfAny(context)
  if (config)
    return {
      backend: config.cache.backend,
      root: config.cache.root,
      sandboxBackend: config.cluster.backend,
      ...(config.cache.lfs && {lfs: config.cache.lfs}),
    }
  const fromEnv = context.env.YARD_CACHE_ROOT?.trim()
  return {
    backend: DEFAULT_CACHE_BACKEND,
    root: path.resolve(context.cwd, fromEnv || path.join(stateDir(context.env), 'caches')),
    sandboxBackend: DEFAULT_SANDBOX_BACKEND,
  }
}

/**
 * `yard cache evict URL [--dry-run]` (DESIGN.md §5.1): the cache backend's evict, with the sandbox
 * backend (`[cluster] backend`, outside a checkout k8s-sandbox) asked whether a borrower's
 * sandbox still exists, so the lease of a pod removed outside yard is cleared.
 * @throws what CacheBackend.evict throws (exit 2 unknown cache, exit 3 live borrowers).
 */
export async function evictCache(
  context: YardContext,
  backends: Backends,
  url: string,
  options: {dryRun: boolean},
): Promise<CacheEvictResult> {
  const settings = await cacheSettings(context)
  const {cache, root} = await openCache(context, backends)
  return cache.evict(root, url, {
    dryRun: options.dryRun,
    probe: await sandboxBorrowerProbe(context, backends, settings.sandboxBackend),
  })
}

/**
 * The sandbox backend's `borrowerGone` as a BorrowerProbe; a backend that cannot be loaded, or a
 * probe that fails, proves nothing (the lease stays live), with a note.
 */
async function sandboxBorrowerProbe(
  context: YardContext,
  backends: Backends,
  id: string,
): Promise<BorrowerProbe | undefined> {
  let sandboxes: SandboxBackend
  try {
    sandboxes = await backends.sandbox(context, id)
  } catch (error) {
    context.warn(`note: sandbox borrowers are not checked: ${(error as Error).message}`)
    return undefined
  }

  if (!sandboxes.borrowerGone) return undefined
  return async (borrower) =>
    sandboxes.borrowerGone!(borrower).catch((error: Error) => {
      context.warn(`note: whether sandbox ${borrower.name} still exists is unknown: ${error.message}`)
      return undefined
    })
}

/**
 * The cache backend `[cache] backend` selects, created through the registry, and the root.
 * @throws InputError (exit 2) for an unknown backend id or invalid config.
 */
export async function openCache(
  context: YardContext,
  backends: Backends,
): Promise<{cache: CacheBackend; root: string; lfs?: 'all' | 'off'}> {
  const settings = await cacheSettings(context)
  const cache = await backends.cache(context, settings.backend)
  return {cache, root: settings.root, ...(settings.lfs && {lfs: settings.lfs})}
}

/** The url of every known cache (a record with a url, present), or the one given. */
async function targets(cache: CacheBackend, root: string, url: string | undefined): Promise<string[]> {
  if (url !== undefined) return [url]
  return (await cache.list(root)).filter((row) => row.present && row.url !== null).map((row) => row.url!)
}

/**
 * `yard cache add URL` (DESIGN.md §5.1): clones a missing cache, adopts a repository found in
 * place (pinned, not fetched), and fetches one that was already this cache, so asking again for a
 * cached url brings it up to date rather than doing nothing.
 * @returns the add result and, for an already cached url, the fetch's result (a failed fetch is
 *   `stale`, the cache stays usable).
 */
export async function addCache(
  cache: CacheBackend,
  root: string,
  url: string,
  lfs?: 'all' | 'off',
): Promise<CacheAddResult & {fetch?: CacheFetchResult}> {
  const added = await cache.add(root, url, lfs ? {lfs} : {})
  if (added.action !== 'adopted' || !added.cached) return added
  return {...added, fetch: await cache.fetch(root, url, lfs ? {lfs} : {})}
}

/**
 * `yard cache fetch [URL | --all]`: fetches each; a failure leaves that cache stale and usable.
 * @throws OperationError (exit 1) after all were tried, when any is stale: "stale since <time>".
 */
export async function fetchCaches(
  cache: CacheBackend,
  root: string,
  url: string | undefined,
  lfs?: 'all' | 'off',
): Promise<CacheFetchResult[]> {
  const results: CacheFetchResult[] = []
  for (const target of await targets(cache, root, url)) results.push(await cache.fetch(root, target, lfs ? {lfs} : {}))
  const stale = results.filter((result) => result.stale)
  if (stale.length > 0) {
    throw new OperationError(
      stale
        .map((result) => `the cache ${result.key} is stale since ${result.staleSince}: its fetch failed`)
        .join('\n  '),
      {
        why: stale.map((result) => result.error).join('\n'),
        fix: 'clones from it still work on the cached objects; check the remote (git ls-remote -- URL) and run yard cache fetch again',
      },
    )
  }

  return results
}

/** `yard cache maintain [URL | --all] [--force]`. @throws OperationError when a maintenance command fails. */
export async function maintainCaches(
  cache: CacheBackend,
  root: string,
  url: string | undefined,
  force: boolean,
): Promise<CacheMaintainResult[]> {
  const results: CacheMaintainResult[] = []
  for (const target of await targets(cache, root, url)) results.push(await cache.maintain(root, target, {force}))
  return results
}

/**
 * "5m", "90s", "1h", "250ms" → milliseconds, from 1 s to 7 days (sdk/duration.ts: a longer timer
 * would fire at once).
 * @throws InputError (exit 2) naming the flag.
 */
export function parseInterval(text: string, flag: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(text.trim())
  const ms = match
    ? Number(match[1]) * {ms: 1, s: 1000, m: 60_000, h: 3_600_000}[match[2] as 'ms' | 's' | 'm' | 'h']
    : NaN
  if (!(ms >= 1000 && ms <= MAX_INTERVAL_MS)) {
    throw new InputError(`invalid ${flag} ${JSON.stringify(text)}`, {
      why: 'a duration is a number with ms, s, m or h, from one second to 7 days (168h)',
      fix: `e.g. ${flag} 5m`,
    })
  }

  return Math.round(ms)
}

/** What `yard cache agent` runs: the local loop, or cluster mode with `kubernetes`. */
export interface CacheAgentRequest {
  kubernetes: boolean
  intervalMs: number
  once: boolean
  signal?: AbortSignal
  onEvent?: (event: CacheAgentEvent) => void
}

/** Where a cluster-mode agent works (`yard cache agent --kubernetes`). */
export interface ClusterAgentSettings {
  /** `NODE_NAME`: the node this agent serves (the DaemonSet sets it from `spec.nodeName`). */
  node: string
  /** `[cluster] cache-root` as pods' hostPath volumes name it; the agent sees it at the same path. */
  cacheRoot: string
  namespace: string
  context?: string
  cacheBackend: string
  sandboxBackend: string
}

const DNS_SUBDOMAIN = /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/

/**
 * The settings of `yard cache agent --kubernetes` (DESIGN.md §5.1, §5.2): the node from
 * `NODE_NAME`; `[cluster] namespace`, `context` and `cache-root` from the main checkout's config
 * when the current directory is in one, else (a node) `YARD_NAMESPACE` (default `yard`),
 * `YARD_KUBE_CONTEXT`, and `YARD_CACHE_ROOT` or `/var/lib/yard/<namespace>/caches`.
 * @throws InputError (exit 2) when `NODE_NAME` is missing or not a node name, the namespace is
 *   not a DNS-1123 label, the cache root is not absolute, or the config is invalid.
 */
export async function clusterAgentSettings(context: YardContext): Promise<ClusterAgentSettings> {
  const node = context.env.NODE_NAME?.trim() ?? ''
  if (node === '') {
    throw new InputError('yard cache agent --kubernetes needs NODE_NAME: the name of the node it runs on', {
      why: "the agent clones what pods on its own node mount, and writes only its own node's entry of each Repo's status",
      fix: 'set NODE_NAME (in a DaemonSet: env NODE_NAME from fieldRef spec.nodeName, as yard cluster install renders it), e.g. NODE_NAME=$(hostname) yard cache agent --kubernetes',
    })
  }

  if (node.length > 253 || !DNS_SUBDOMAIN.test(node)) {
    throw new InputError(`invalid NODE_NAME ${JSON.stringify(node)}`, {
      why: 'a node name is a DNS-1123 subdomain: a-z, 0-9, "-" and ".", at most 253 characters',
      fix: "set NODE_NAME to the node's name as kubectl get nodes shows it",
    })
  }

  const config = await mainConfigIfAny(context)
  let settings: Omit<ClusterAgentSettings, 'node'>
  if (config === undefined) {
    const namespace = namespaceFromEnv(context)
    const kubeContext = context.env.YARD_KUBE_CONTEXT?.trim() || undefined
    const cacheRoot = context.env.YARD_CACHE_ROOT?.trim() || `/var/lib/yard/${namespace}/caches`
    settings = {
      namespace,
      cacheRoot,
      cacheBackend: DEFAULT_CACHE_BACKEND,
      sandboxBackend: 'k8s-sandbox',
      ...(kubeContext && {context: kubeContext}),
    }
  } else {
    const {namespace, context: kubeContext} = config.cluster
    settings = {
      namespace,
      cacheRoot: config.cluster['cache-root'],
      cacheBackend: config.cache.backend,
      sandboxBackend: config.cluster.backend,
      ...(kubeContext && {context: kubeContext}),
    }
  }

  if (!path.isAbsolute(settings.cacheRoot)) {
    throw new InputError(`the cluster cache root ${JSON.stringify(settings.cacheRoot)} is not an absolute path`, {
      why: 'pods mount <cache-root>/<key> as hostPath volumes, and the agent finds the caches a pod needs by that path',
      fix:
        config === undefined
          ? 'set YARD_CACHE_ROOT to an absolute path'
          : 'set [cluster] cache-root in yard.toml to an absolute path',
    })
  }

  return {node, ...settings}
}

/**
 * `yard cache agent [--kubernetes]` (DESIGN.md §5.1): the local agent over the cache root, or —
 * with `kubernetes` — the cluster-mode agent over `[cluster] cache-root`, driven by what the
 * sandbox backend (`[cluster] backend`) reports of the cluster for this node.
 * @throws InputError (exit 2) for a missing NODE_NAME, invalid settings, or a sandbox backend
 *   without a cluster mode; OperationError (exit 1) when the cluster cannot be reached (`once`).
 */
export async function runCacheAgent(
  context: YardContext,
  backends: Backends,
  request: CacheAgentRequest,
): Promise<CacheAgentPass> {
  const options = {intervalMs: request.intervalMs, once: request.once, signal: request.signal, onEvent: request.onEvent}
  if (!request.kubernetes) {
    const {cache, root} = await openCache(context, backends)
    return cache.agent(root, options)
  }

  const settings = await clusterAgentSettings(context)
  const sandboxes = await backends.sandbox(context, settings.sandboxBackend)
  if (!sandboxes.cacheDemand) {
    throw new InputError(`the sandbox backend "${sandboxes.id}" cannot drive a cache agent on a cluster`, {
      why: 'cluster mode needs the backend to report the repositories wanted and the caches that pods on the node mount',
      fix: 'select a backend with a kubernetes runtime in [cluster] backend (the built-in k8s-sandbox), or run yard cache agent without --kubernetes',
    })
  }

  const cache = await backends.cache(context, settings.cacheBackend)
  const demand = await sandboxes.cacheDemand({
    node: settings.node,
    cacheRoot: settings.cacheRoot,
    namespace: settings.namespace,
    ...(settings.context && {context: settings.context}),
  })
  // The DaemonSet mounts the credentials Secret there (docs/cluster.md, "Private repositories").
  const credentialsDir = context.env.YARD_CREDENTIALS_DIR?.trim()
  return cache.agent(settings.cacheRoot, {
    ...options,
    demand,
    ...(credentialsDir && path.isAbsolute(credentialsDir) && {credentialsDir}),
  })
}
