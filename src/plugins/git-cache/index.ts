/**
 * The built-in cache backend `git-cache` (DESIGN.md §5.1), registered through the
 * `yard:backends` hook exactly like a third-party plugin's backends.
 */
import type {BackendFactory, CacheBackend} from '../../core/backend.js'
import {CONTRACT_VERSION} from '../../core/backend.js'
import {GIT_CACHE_ID, GitCache} from './cache.js'

export const gitCacheFactory: BackendFactory<CacheBackend> = {
  kind: 'cache',
  id: GIT_CACHE_ID,
  contract: CONTRACT_VERSION,
  description: 'one never-pruned bare git cache per repository, shared read-only by sandboxes',
  create: (context) => new GitCache(context),
}

/** The `yard:backends` hook. */
export default async function backends(): Promise<BackendFactory[]> {
  return [gitCacheFactory as BackendFactory]
}
