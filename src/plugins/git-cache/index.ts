import type {CacheBackend} from '../../sdk/cache.js'
/**
 * The built-in cache backend `git-cache` (DESIGN.md §5.1), registered through the
 * `yard:backends` hook exactly like a third-party plugin's backends.
 */
import type {BackendFactory} from '../../sdk/factory.js'

import {CONTRACT_VERSION} from '../../sdk/factory.js'

export const gitCacheFactory: BackendFactory<CacheBackend> = {
  kind: 'cache',
  id: 'git-cache',
  contract: CONTRACT_VERSION,
  description: 'one never-pruned bare git cache per repository, shared read-only by sandboxes',
  // Loaded on first use: listing backends must not import every backend's code.
  create: async (context) => new (await import('./cache.js')).GitCache(context),
}

/** The `yard:backends` hook. */
export default async function backends(): Promise<BackendFactory[]> {
  return [gitCacheFactory]
}
