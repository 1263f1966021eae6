/**
 * Repositories declared ahead (`yard cluster repo add|list|rm`; DESIGN.md §5.1 "at boot from the
 * walk", §5.2): a Repo with `spec.prefetch` is cloned by every node's agent before any sandbox
 * exists, so a first create finds its cache warm. Removing one deletes the Repo: each node then
 * evicts the cache once no pod on it that has not ended mounts it (the agent's rule, kube-agent.ts).
 */
import type {ClusterRepo} from '../../sdk/sandbox.js'

import {mountedCacheKeys, type PodVolumes} from './cache-demand.js'
import {isNotFound, type Kube, kubeCall, kubeError} from './kube.js'
import {nodesPresent, readRepo} from './kubernetes-repos.js'
import {type Repo, REPO_GROUP, REPO_PLURAL, REPO_VERSION, repoObject} from './repo-resource.js'

const api = (kube: Kube) => ({group: REPO_GROUP, version: REPO_VERSION, namespace: kube.namespace, plural: REPO_PLURAL})

/**
 * Creates a Repo with `prefetch` per repository, or marks an existing one (a sandbox's) so, with
 * `refreshInterval` when given.
 * @throws OperationError (exit 1) when the API refuses (no CRD: `yard cluster install`).
 */
export async function addRepos(
  kube: Kube,
  repos: Array<{key: string; url: string}>,
  options: {refreshInterval?: string},
): Promise<Array<{key: string; url: string; action: 'created' | 'updated' | 'unchanged'}>> {
  const results: Array<{key: string; url: string; action: 'created' | 'updated' | 'unchanged'}> = []
  for (const {key, url} of repos) {
    const found = await readRepo(kube, key)
    const refresh = options.refreshInterval ? {refreshInterval: options.refreshInterval} : {}
    if (!found) {
      const body = repoObject(key, kube.namespace, {url, prefetch: true, ...refresh})
      await kubeCall(kube, `create the Repo ${key} in namespace ${kube.namespace}`, async () =>
        kube.custom.createNamespacedCustomObject({...api(kube), body}),
      )
      results.push({key, url, action: 'created'})
      continue
    }

    if (
      found.spec.prefetch === true &&
      (options.refreshInterval === undefined || found.spec.refreshInterval === options.refreshInterval)
    ) {
      results.push({key, url: found.spec.url, action: 'unchanged'})
      continue
    }

    const body = {spec: {prefetch: true, ...refresh}}
    await kubeCall(kube, `update the Repo ${key} in namespace ${kube.namespace}`, async () =>
      kube.custom.patchNamespacedCustomObject({...api(kube), name: key, body}, kube.mergePatch),
    )
    results.push({key, url: found.spec.url, action: 'updated'})
  }

  return results
}

/** Every Repo of the namespace, by key. */
export async function listRepos(kube: Kube): Promise<ClusterRepo[]> {
  const list = (await kubeCall(kube, `list the Repos in namespace ${kube.namespace}`, async () =>
    kube.custom.listNamespacedCustomObject(api(kube)),
  )) as {items?: Repo[]}
  return (list.items ?? [])
    .map((repo) => ({
      key: repo.metadata.name,
      url: repo.spec?.url ?? '',
      refreshInterval: repo.spec?.refreshInterval ?? null,
      prefetch: repo.spec?.prefetch === true,
      present: nodesPresent(repo),
    }))
    .sort((a, b) => a.key.localeCompare(b.key))
}

/**
 * Deletes the Repos of `keys`; per key whether it existed, and the pods (any node) that still
 * mount its cache under `cacheRoot` — their nodes evict it only once those end.
 * @throws OperationError (exit 1) when the API refuses.
 */
export async function removeRepos(
  kube: Kube,
  keys: string[],
  cacheRoot: string,
): Promise<Array<{key: string; removed: boolean; mountedBy: string[]}>> {
  const pods = await kubeCall(kube, `list the pods in namespace ${kube.namespace}`, async () =>
    kube.core.listNamespacedPod({namespace: kube.namespace}),
  )
  const results: Array<{key: string; removed: boolean; mountedBy: string[]}> = []
  for (const key of keys) {
    let removed = true
    try {
      await kube.custom.deleteNamespacedCustomObject({...api(kube), name: key})
    } catch (error) {
      if (!isNotFound(error)) throw kubeError(error, `delete the Repo ${key} in namespace ${kube.namespace}`, kube)
      removed = false
    }

    const mountedBy = pods.items
      .filter((pod) => mountedCacheKeys([pod as PodVolumes], cacheRoot).has(key))
      .map((pod) => String(pod.metadata?.name))
      .sort()
    results.push({key, removed, mountedBy})
  }

  return results
}
