/**
 * The sandbox side of the `Repo` resources (DESIGN.md §5.2): a create declares each cache key it
 * mounts as a Repo (name = key), reads which nodes already hold it (for the soft affinity), and
 * waits until the node its pod landed on reports every cache present. Repos are shared cache
 * declarations: another sandbox's Repo is never changed, and only a failed create removes the
 * Repos it made itself, when no other pod mounts them.
 */
import type {CacheNodeStatus} from '../../sdk/cache.js'
import type {SandboxRepo} from '../../sdk/sandbox.js'

import {OperationError} from '../../sdk/errors.js'
import {formatDuration} from '../../sdk/process.js'
import {withoutCredentials} from '../../sdk/repo-url.js'
import {staleNote} from '../../sdk/stale.js'
import {mountedCacheKeys} from './cache-demand.js'
import {abortOn, isConflict, isNotFound, type Kube, kubeCall, kubeError, kubeGet} from './kube.js'
import {MANAGED_BY_LABEL} from './manifest.js'
import {type Repo, REPO_GROUP, REPO_PLURAL, REPO_VERSION, repoObject} from './repo-resource.js'

const api = (kube: Kube) => ({group: REPO_GROUP, version: REPO_VERSION, namespace: kube.namespace, plural: REPO_PLURAL})

/** The Repo named `key`, or undefined; with `signal`, the request is aborted when it fires. */
export async function readRepo(kube: Kube, key: string, signal?: AbortSignal): Promise<Repo | undefined> {
  return kubeGet(
    kube,
    `read the Repo ${key} in namespace ${kube.namespace}`,
    async () =>
      (await kube.custom.getNamespacedCustomObject({...api(kube), name: key}, signal && abortOn(kube, signal))) as Repo,
  )
}

/**
 * Per key of `keys` that has a Repo, each node's entry of its status (absent and null fields as
 * null): where `yard sandbox list` reads a cluster cache's freshness (DESIGN.md §5.2).
 * @throws OperationError (exit 1) when the Repos cannot be listed.
 */
export async function repoNodeStates(
  kube: Kube,
  keys: string[],
): Promise<Record<string, Record<string, CacheNodeStatus>>> {
  const wanted = new Set(keys)
  const list = (await kubeCall(kube, `list the Repos in namespace ${kube.namespace}`, async () =>
    kube.custom.listNamespacedCustomObject(api(kube)),
  )) as {items?: Repo[]}
  const states: Record<string, Record<string, CacheNodeStatus>> = {}
  for (const repo of list.items ?? []) {
    if (!wanted.has(repo.metadata.name)) continue
    states[repo.metadata.name] = Object.fromEntries(
      Object.entries(repo.status?.nodes ?? {}).map(([node, entry]) => [
        node,
        {present: entry.present, lastFetched: entry.lastFetched ?? null, lastError: entry.lastError ?? null},
      ]),
    )
  }

  return states
}

/** Node names whose entry in the Repo's status says the cache is present. */
export function nodesPresent(repo: Repo | undefined): string[] {
  return Object.entries(repo?.status?.nodes ?? {})
    .filter(([, entry]) => entry.present)
    .map(([node]) => node)
    .sort()
}

/**
 * Makes sure a Repo exists for every cache key of `repos` (spec `url` as first given,
 * `refreshInterval` when set); an existing Repo is left as it is (another sandbox may have
 * declared it).
 * Each key it creates is pushed onto `created` at once, so a caller can undo them after a
 * failure half-way.
 * @returns per key, the nodes holding the cache.
 * @throws OperationError (exit 1) when the API refuses (no Repo CRD: run `yard cluster install`).
 */
export async function upsertRepos(
  kube: Kube,
  repos: SandboxRepo[],
  created: string[],
  refreshInterval?: string,
): Promise<Record<string, string[]>> {
  const presentNodes: Record<string, string[]> = {}
  for (const repo of repos) {
    if (repo.key in presentNodes) continue
    let found = await readRepo(kube, repo.key)
    if (!found) {
      const body = repoObject(repo.key, kube.namespace, {
        url: withoutCredentials(repo.url),
        ...(refreshInterval && {refreshInterval}),
      })
      try {
        found = (await kube.custom.createNamespacedCustomObject({...api(kube), body})) as Repo
        created.push(repo.key)
      } catch (error) {
        // Another create declared it in between: theirs stands.
        if (!isConflict(error))
          throw kubeError(error, `create the Repo ${repo.key} in namespace ${kube.namespace}`, kube)
        found = await readRepo(kube, repo.key)
      }
    }

    presentNodes[repo.key] = nodesPresent(found)
  }

  return presentNodes
}

/**
 * Waits until `node` reports every cache of `repos` present in its Repo's status (the cache
 * agent clones on first demand).
 * @throws OperationError (exit 1) with the agent's `lastError` as soon as the node reports one for
 *   a cache it does not hold, or when `budgetMs` runs out, naming the caches still missing.
 */
export async function waitForCaches(
  kube: Kube,
  options: {pod: string; node: string; repos: SandboxRepo[]; budgetMs: number; pollMs: number},
): Promise<void> {
  const {node, pod} = options
  const keys = [...new Set(options.repos.map((repo) => repo.key))]
  const urlOf = (key: string) => options.repos.find((repo) => repo.key === key)!.url
  const deadline = Date.now() + options.budgetMs
  for (;;) {
    const missing: string[] = []
    for (const key of keys) {
      // A read that hangs is cut at the deadline (at least one poll's worth), never left pending.
      const entry = (await readRepo(kube, key, AbortSignal.timeout(Math.max(options.pollMs, deadline - Date.now()))))
        ?.status?.nodes?.[node]
      if (entry?.present) continue
      if (entry?.lastError) {
        throw new OperationError(
          `the cache agent on node ${node} could not clone ${urlOf(key)} (Repo ${key}) for the sandbox pod ${pod}`,
          {
            why: entry.lastError.trim(),
            fix: "the pod was deleted; check that the url is right and reachable from the nodes with the agent's credentials (yard cluster status shows every node's state), then run yard sandbox create again",
          },
        )
      }

      missing.push(key)
    }

    if (missing.length === 0) return
    if (Date.now() >= deadline) {
      throw new OperationError(
        `node ${node || '(none)'} did not report the cache${missing.length === 1 ? '' : 's'} ${missing.join(', ')} present within ${formatDuration(options.budgetMs)} for the sandbox pod ${pod}`,
        {
          why: "the cache agent DaemonSet clones a Repo when a pod on its node mounts it and reports it in the Repo's status; no such report came",
          fix: 'the pod was deleted; check that the agent runs on that node (yard cluster status; yard cluster install sets it up), raise [cluster] cache-timeout-seconds for large repositories, then run yard sandbox create again',
        },
      )
    }

    await new Promise((resolve) => setTimeout(resolve, Math.min(options.pollMs, Math.max(0, deadline - Date.now()))))
  }
}

/**
 * Asks `node` for a fresh fetch of every cache of `repos` and waits for its answer (DESIGN.md
 * §5.2: the design fetches "on demand before every attach"): a merge patch of each Repo's
 * `spec.askedAt` (now; a Repo deleted meanwhile is declared again first), then polls until the
 * node's entry reports `lastAsked` (or a successful `lastFetched`) at or past that ask (its agent's
 * fetch ran after it), within
 * `budgetMs`. Never throws for what the node says: a fetch that failed, or no answer in time,
 * is a stale note per slot (since when, and why); the sandbox goes on with what the cache holds.
 * @returns per slot whose cache is stale, the note.
 * @throws OperationError (exit 1) when the API refuses the patch.
 */
export async function askForFetch(
  kube: Kube,
  options: {node: string; repos: SandboxRepo[]; budgetMs: number; pollMs: number; refreshInterval?: string},
): Promise<Record<string, string>> {
  const {node} = options
  const keys = [...new Set(options.repos.map((repo) => repo.key))]
  const askedAt = new Date().toISOString()
  for (const key of keys) {
    const body = {spec: {askedAt}}
    const patch = async () => kube.custom.patchNamespacedCustomObject({...api(kube), name: key, body}, kube.mergePatch)
    try {
      await patch()
    } catch (error) {
      if (!isNotFound(error))
        throw kubeError(error, `ask for a fetch of the Repo ${key} in namespace ${kube.namespace}`, kube)
      await upsertRepos(
        kube,
        options.repos.filter((repo) => repo.key === key),
        [],
        options.refreshInterval,
      )
      await kubeCall(kube, `ask for a fetch of the Repo ${key} in namespace ${kube.namespace}`, patch)
    }
  }

  const deadline = Date.now() + options.budgetMs
  const notes = new Map<string, string>()
  let waiting = keys
  for (;;) {
    const still: string[] = []
    for (const key of waiting) {
      const entry = (await readRepo(kube, key, AbortSignal.timeout(Math.max(options.pollMs, deadline - Date.now()))))
        ?.status?.nodes?.[node]
      // lastAsked is the ask's own clock; an agent from before lastAsked answers with a newer lastFetched.
      const after = (stamp: string | null | undefined) => (stamp ? Date.parse(stamp) >= Date.parse(askedAt) : false)
      const answered = after(entry?.lastAsked) || after(entry?.lastFetched)
      if (!answered) {
        if (Date.now() >= deadline)
          notes.set(
            key,
            staleNote(
              key,
              entry?.lastFetched ?? null,
              `node ${node} did not answer the ask to fetch within ${formatDuration(options.budgetMs)} (is its cache agent running? yard cluster status)`,
            ),
          )
        else still.push(key)
      } else if (entry?.lastError) {
        notes.set(key, staleNote(key, entry.lastFetched ?? null, entry.lastError))
      }
    }

    if (still.length === 0) break
    waiting = still
    await new Promise((resolve) => setTimeout(resolve, Math.min(options.pollMs, Math.max(0, deadline - Date.now()))))
  }

  return Object.fromEntries(
    options.repos.filter((repo) => notes.has(repo.key)).map((repo) => [repo.slot, notes.get(repo.key)!]),
  )
}

/**
 * Deletes the Repos named in `keys` that no pod other than `except` mounts (a failed create's
 * own declarations). Repos already gone are fine.
 */
export async function dropUnusedRepos(
  kube: Kube,
  keys: string[],
  options: {except: string; cacheRoot: string},
): Promise<void> {
  if (keys.length === 0) return
  const pods = await kubeCall(kube, `list the sandbox pods in namespace ${kube.namespace}`, async () =>
    kube.core.listNamespacedPod({namespace: kube.namespace, labelSelector: `${MANAGED_BY_LABEL}=yard`}),
  )
  const used = mountedCacheKeys(
    pods.items.filter((pod) => pod.metadata?.name !== options.except),
    options.cacheRoot,
  )
  for (const key of keys.filter((candidate) => !used.has(candidate))) {
    try {
      await kube.custom.deleteNamespacedCustomObject({...api(kube), name: key})
    } catch (error) {
      if (!isNotFound(error)) throw kubeError(error, `delete the Repo ${key} in namespace ${kube.namespace}`, kube)
    }
  }
}
