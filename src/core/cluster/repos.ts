/**
 * `yard cluster repo add|list|rm` (DESIGN.md §5.1 "at boot from the walk", §5.2): Repos declared
 * ahead of any sandbox, so every node's cache agent clones them before the first create; `rm`
 * deletes the Repo, and each node evicts the cache once no pod on it mounts it.
 */
import type {ClusterRepo, SandboxClusterSetup} from '../../sdk/sandbox.js'
import type {YardContext} from '../kernel/context.js'
import type {Backends} from '../registry/backends.js'

import {parseRefreshInterval} from '../../sdk/duration.js'
import {InputError} from '../../sdk/errors.js'
import {CACHE_KEY_PATTERN, repoIdentity} from '../../sdk/repo-identity.js'
import {openClusterSetup} from './cluster.js'
import {requireClusterSource} from './source.js'

async function repoSetup(
  context: YardContext,
  backends: Backends,
): Promise<SandboxClusterSetup & Required<Pick<SandboxClusterSetup, 'addRepos' | 'listRepos' | 'removeRepos'>>> {
  const {setup} = await openClusterSetup(context, backends)
  if (!setup.addRepos || !setup.listRepos || !setup.removeRepos)
    throw new InputError('the sandbox backend declares no cluster repositories', {
      fix: 'set [cluster] backend = "k8s-sandbox" in yard.toml',
    })
  return setup as never
}

/**
 * `yard cluster repo add URL… [--refresh 10m]`: every url checked (identity, and fetchable from
 * the cluster: cluster-source.ts) before the first Repo is made.
 * @throws InputError (exit 2) for a bad url or interval; OperationError (exit 1) from the cluster.
 */
export async function addClusterRepos(
  context: YardContext,
  backends: Backends,
  urls: string[],
  options: {refresh?: string},
): Promise<Array<{key: string; url: string; action: 'created' | 'updated' | 'unchanged'}>> {
  if (urls.length === 0)
    throw new InputError('yard cluster repo add needs at least one url', {
      fix: 'yard cluster repo add https://github.com/acme/app.git',
    })
  if (options.refresh !== undefined) parseRefreshInterval(options.refresh, '--refresh')
  const repos = urls.map((url) => {
    const repo = repoIdentity(url)
    requireClusterSource(repo, url, 'the url')
    return {key: repo.key, url: repo.url}
  })
  return (await repoSetup(context, backends)).addRepos(repos, options.refresh ? {refreshInterval: options.refresh} : {})
}

/** `yard cluster repo list`: every Repo, whether declared ahead, and the nodes holding it. */
export async function listClusterRepos(context: YardContext, backends: Backends): Promise<ClusterRepo[]> {
  return (await repoSetup(context, backends)).listRepos()
}

/**
 * `yard cluster repo rm URL|KEY…`: deletes the Repos; a url names its cache key.
 * @throws InputError (exit 2) for an invalid url, or when none of them has a Repo (nothing changed).
 */
export async function removeClusterRepos(
  context: YardContext,
  backends: Backends,
  names: string[],
): Promise<Array<{key: string; removed: boolean; mountedBy: string[]}>> {
  if (names.length === 0)
    throw new InputError('yard cluster repo rm needs at least one url or key', {
      fix: 'yard cluster repo list shows them',
    })
  const keys = [...new Set(names.map((name) => (CACHE_KEY_PATTERN.test(name) ? name : repoIdentity(name).key)))]
  const results = await (await repoSetup(context, backends)).removeRepos(keys)
  if (results.every((result) => !result.removed)) {
    throw new InputError(`no Repo ${keys.join(', ')} in the cluster`, {
      fix: 'yard cluster repo list shows the Repos (a url names the Repo of its cache key)',
    })
  }

  return results
}
