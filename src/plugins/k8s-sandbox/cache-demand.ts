/**
 * What a node's cache agent serves in cluster mode (`yard cache agent --kubernetes`, DESIGN.md
 * §5.1 and §5.2), read from the API server: the Repo objects of the namespace, and the caches
 * mounted by pods on the agent's node. A pod needs the cache `<key>` when one of its volumes is a
 * hostPath on `<[cluster] cache-root>/<key>` — what every sandbox pod carries (manifest.ts), and
 * what any other pod mounting a cache carries too. Pods that ended (phase Succeeded or Failed)
 * hold nothing. The agent writes only its own node's entry of a Repo's status, with a JSON merge
 * patch on the status subresource.
 *
 * Running as a loop, the agent watches instead of polling (`watch`, informers.ts): one informer
 * on the pods of its node (field selector `spec.nodeName`), one on the Repos, and reads both from
 * their caches — an idle node costs its two watches' reconnects (every 300–600 s each), and a
 * change one event on an open watch. Pods are listed again only right before an eviction.
 *
 * Fetch-through (cluster-asks.ts): the pods' asks directories come from the same watch of the
 * pods, so serving them adds no API request but the fresh pod list before a leftover directory
 * of a pod gone is removed.
 *
 * The API calls made, and so what the agent's Role must grant: list and watch pods, list and
 * watch repos.yard.dev, patch repos.yard.dev/status — see AGENT_API_CALLS.
 */
import path from 'node:path'

import type {CacheDemand, CacheNodeStatus, DemandedRepo} from '../../sdk/cache.js'

import {CACHE_KEY_PATTERN} from '../../sdk/repo-identity.js'
import {NodeAsks, podAskDirs} from './cluster-asks.js'
import {type Informer, startInformer, type WatchTiming} from './informers.js'
import {type Kube, kubeCall, kubeGet, openKube} from './kube.js'
import {
  nodeStatusPatch,
  parseRefreshInterval,
  type Repo,
  REPO_GROUP,
  REPO_PLURAL,
  REPO_VERSION,
  type RepoNodeStatus,
} from './repo-resource.js'

/** Every API call of the cache agent as RBAC sees it (API group, resource, verb): its Role grants these and no more. */
export const AGENT_API_CALLS: ReadonlyArray<{apiGroup: string; resource: string; verb: string}> = [
  {apiGroup: '', resource: 'pods', verb: 'list'},
  {apiGroup: '', resource: 'pods', verb: 'watch'},
  {apiGroup: REPO_GROUP, resource: REPO_PLURAL, verb: 'list'},
  {apiGroup: REPO_GROUP, resource: REPO_PLURAL, verb: 'watch'},
  {apiGroup: REPO_GROUP, resource: `${REPO_PLURAL}/status`, verb: 'patch'},
]

/** Phases of a pod that has ended: it mounts nothing any more (Kubernetes docs, "Pod phase"). */
const ENDED_PHASES = new Set(['Succeeded', 'Failed'])

/** The parts of a Pod this module reads. */
export interface PodVolumes {
  metadata?: {name?: string}
  spec?: {volumes?: Array<{hostPath?: {path?: string}}>}
  status?: {phase?: string}
}

/**
 * The cache keys that pods which have not ended mount: hostPath volumes on `<cacheRoot>/<key>`
 * (trailing slashes and `.` segments ignored), `key` named like a cache (DESIGN.md §5.1).
 * `cacheRoot` is absolute.
 */
export function mountedCacheKeys(pods: readonly PodVolumes[], cacheRoot: string): Set<string> {
  const root = path.posix.normalize(cacheRoot).replace(/\/+$/, '')
  const keys = new Set<string>()
  for (const pod of pods) {
    if (ENDED_PHASES.has(pod.status?.phase ?? '')) continue
    for (const volume of pod.spec?.volumes ?? []) {
      const hostPath = volume.hostPath?.path
      if (!hostPath) continue
      const normalised = path.posix.normalize(hostPath).replace(/\/+$/, '')
      const key = path.posix.basename(normalised)
      if (path.posix.dirname(normalised) === root && CACHE_KEY_PATTERN.test(key)) keys.add(key)
    }
  }

  return keys
}

/** A Repo as the agent sees it; an unreadable refreshInterval means the agent's own interval. */
export function demandedRepo(repo: Repo, node: string): DemandedRepo {
  let refreshMs: number | undefined
  try {
    refreshMs = repo.spec?.refreshInterval ? parseRefreshInterval(repo.spec.refreshInterval) : undefined
  } catch {
    refreshMs = undefined
  }

  const entry = repo.status?.nodes?.[node]
  return {
    key: repo.metadata.name,
    url: repo.spec?.url ?? '',
    ...(!(refreshMs === undefined) && {refreshMs}),
    ...(repo.spec?.askedAt && {askedAt: repo.spec.askedAt}),
    ...(repo.spec?.prefetch === true && {prefetch: true}),
    // A merge patch's null removes a field: absent and null are the same answer.
    ...(!(entry === undefined) && {
      reported: {
        present: entry.present,
        lastFetched: entry.lastFetched ?? null,
        lastError: entry.lastError ?? null,
        lastAsked: entry.lastAsked ?? null,
        credentials: entry.credentials ?? null,
      },
    }),
  }
}

/** The cache demand of one node, over an open connection. */
export class KubeCacheDemand implements CacheDemand {
  private informers?: {pods: Informer<PodVolumes & {metadata: object}>; repos: Informer<Repo>}
  /**
   * Entries this agent wrote whose watch event has not come back yet, by key, with the Repo's
   * resourceVersion seen when it wrote them: until the watched Repo changes, they are what it
   * reported (else every pass in between would send the same patch again).
   */
  private readonly written = new Map<string, {version: string | undefined; status: CacheNodeStatus}>()
  private readonly asks: NodeAsks

  constructor(
    private readonly kube: Kube,
    readonly node: string,
    private readonly cacheRoot: string,
    private readonly timing?: WatchTiming,
  ) {
    this.asks = new NodeAsks(cacheRoot)
  }

  /** @throws OperationError when the pods cannot be listed (not watching, or `fresh`). */
  async mountedKeys({fresh = false}: {fresh?: boolean} = {}): Promise<Set<string>> {
    if (this.informers && !fresh) return mountedCacheKeys(this.informers.pods.list(), this.cacheRoot)
    return mountedCacheKeys((await this.listPods()).items, this.cacheRoot)
  }

  /**
   * @throws OperationError when the Repos cannot be listed (not watching; the CRD missing included:
   * `yard cluster install`).
   */
  async repos(): Promise<DemandedRepo[]> {
    if (!this.informers) return ((await this.listRepos()).items ?? []).map((repo) => demandedRepo(repo, this.node))
    return this.informers.repos.list().map((repo) => {
      const demanded = demandedRepo(repo, this.node)
      const written = this.written.get(demanded.key)
      if (written === undefined) return demanded
      // resourceVersions are compared for equality only (Kubernetes docs: they are opaque).
      if (written.version !== repo.metadata.resourceVersion) {
        this.written.delete(demanded.key)
        return demanded
      }

      return {...demanded, reported: written.status}
    })
  }

  /**
   * The asks directories of the pods on this node (cluster-asks.ts), from the watch's cache;
   * none before watching. Leftovers of pods gone are removed on the way (checked with a fresh
   * list, at most once a minute).
   */
  async askDirs(): Promise<Array<{key: string; dir: string}>> {
    if (!this.informers) return []
    const seen = podAskDirs(this.informers.pods.list(), this.cacheRoot)
    await this.asks.sweep(seen, async () => (await this.listPods()).items as PodVolumes[]).catch(() => undefined)
    return this.asks.ready(seen)
  }

  /**
   * Watches the pods of this node, then the Repos (informers.ts); resolves once both are listed.
   * Pods first, as in a poll: a sandbox's Repo is made before its pod, so a pod the first list
   * misses has its Repo in the second.
   */
  async watch({
    signal,
    onChange,
    onError,
  }: {
    signal: AbortSignal
    onChange: () => void
    onError: (error: unknown) => void
  }): Promise<void> {
    const {kube} = this
    const namespace = encodeURIComponent(kube.namespace)
    const common = {signal, onChange, onError, ...(this.timing && {timing: this.timing})}
    const pods = startInformer(kube, {
      ...common,
      path: `/api/v1/namespaces/${namespace}/pods`,
      fieldSelector: `spec.nodeName=${this.node}`,
      list: () => this.listPods() as never,
    })
    await pods.synced
    const repos = startInformer(kube, {
      ...common,
      path: `/apis/${REPO_GROUP}/${REPO_VERSION}/namespaces/${namespace}/${REPO_PLURAL}`,
      list: () => this.listRepos() as never,
    })
    await repos.synced
    if (!signal.aborted) this.informers = {pods: pods as never, repos: repos as never}
  }

  private async listPods() {
    const {kube, node} = this
    return kubeCall(kube, `list the pods on node ${node} in namespace ${kube.namespace}`, async () =>
      kube.core.listNamespacedPod({namespace: kube.namespace, fieldSelector: `spec.nodeName=${node}`}),
    )
  }

  private async listRepos(): Promise<{items?: Repo[]; metadata?: {resourceVersion?: string}}> {
    const {kube} = this
    return (await kubeCall(kube, `list the Repos in namespace ${kube.namespace}`, async () =>
      kube.custom.listNamespacedCustomObject({
        group: REPO_GROUP,
        version: REPO_VERSION,
        namespace: kube.namespace,
        plural: REPO_PLURAL,
      }),
    )) as {items?: Repo[]}
  }

  /**
   * A merge patch of `status.nodes.<node>` only (RFC 7386). A Repo deleted meanwhile has no status
   * to write: that resolves.
   * @throws OperationError when the server refuses it.
   */
  async report(key: string, status: CacheNodeStatus): Promise<void> {
    const {kube} = this
    const entry: RepoNodeStatus = {
      present: status.present,
      lastFetched: status.lastFetched,
      lastError: status.lastError,
      ...(!(status.lastAsked === undefined) && {lastAsked: status.lastAsked}),
      ...(!(status.credentials === undefined) && {credentials: status.credentials}),
    }
    await kubeGet(kube, `report node ${this.node}'s state of Repo ${key} in namespace ${kube.namespace}`, async () =>
      kube.custom.patchNamespacedCustomObjectStatus(
        {
          group: REPO_GROUP,
          version: REPO_VERSION,
          namespace: kube.namespace,
          plural: REPO_PLURAL,
          name: key,
          body: nodeStatusPatch(this.node, entry),
        },
        kube.mergePatch,
      ),
    )
    if (this.informers)
      this.written.set(key, {
        version: this.informers.repos.list().find((repo) => repo.metadata.name === key)?.metadata.resourceVersion,
        status,
      })
  }
}

/**
 * Opens the cluster (`[cluster] context` and `namespace`; in a pod, its service account) for a
 * node's agent. Nothing is sent yet.
 * @throws InputError (exit 2) when no kubeconfig or context is found (see `openKube`).
 */
export async function openCacheDemand(
  options: {node: string; cacheRoot: string; namespace: string; context?: string; timing?: WatchTiming},
  env: NodeJS.ProcessEnv,
): Promise<CacheDemand> {
  const kube = await openKube({namespace: options.namespace, ...(options.context && {context: options.context})}, env)
  return new KubeCacheDemand(kube, options.node, options.cacheRoot, options.timing)
}
