/**
 * Eviction (DESIGN.md §5.1): a whole cache goes — repository, marker, record, leases — only when
 * no live borrower remains. There is no force: a borrowed cache is never evicted. Objects inside
 * a cache are never deleted one by one.
 */
import {existsSync, promises as fs} from 'node:fs'
import path from 'node:path'

import type {BorrowerProbe, CacheEvictResult} from '../../sdk/cache.js'
import type {CachePaths} from './layout.js'
import type {CacheStore} from './store.js'

import {InputError, RefusedError} from '../../sdk/errors.js'
import {describeBorrower, sortLeases} from './leases.js'

/**
 * Evicts one cache, holding its lock. Leases whose holders are provably gone are cleared first
 * (not with `dryRun`, which removes nothing).
 * @throws InputError (exit 2) when nothing of the cache exists.
 * @throws RefusedError (exit 3) naming every live borrower.
 */
export async function evictCache(
  cache: CacheStore,
  paths: CachePaths,
  url: string,
  options: {dryRun: boolean; probe?: BorrowerProbe},
): Promise<CacheEvictResult> {
  const entries = [paths.repo, paths.marker, paths.record, paths.leases]
  if (entries.every((entry) => !existsSync(entry))) {
    throw new InputError(`there is no cache ${paths.key} for ${url} in ${path.dirname(paths.repo)}`, {
      why: 'nothing of that cache exists, so there is nothing to evict',
      fix: 'yard cache list shows the caches and their urls',
    })
  }

  const result = await cache.withCacheLock(paths, 'evict', cache.budgets.fetchMs, async () => {
    const {live, gone} = await sortLeases(paths, options.probe, options.dryRun)
    if (live.length > 0) {
      throw new RefusedError(
        `the cache ${paths.key} (${url}) is borrowed by ${live.map(describeBorrower).join('; ')}`,
        {
          why: 'clones made from a cache borrow its objects, so deleting it would break them; a borrowed cache is never evicted',
          fix: `remove the borrowers first (${[...new Set(live.map((lease) => (lease.kind === 'pool' ? 'yard sandbox pool rm ID' : 'yard sandbox rm NAME')))].join(', ')}), then run yard cache evict again`,
        },
      )
    }

    const removed = entries.filter((entry) => existsSync(entry))
    if (!options.dryRun) {
      await fs.rm(paths.repo, {recursive: true, force: true})
      await fs.rm(paths.marker, {force: true})
      await fs.rm(paths.record, {force: true})
      // The lock lives in the leases directory: empty it now, remove it once the lock is released.
      for (const name of await fs.readdir(paths.leases).catch(() => [] as string[])) {
        if (path.join(paths.leases, name) !== paths.lock)
          await fs.rm(path.join(paths.leases, name), {recursive: true, force: true})
      }
    }

    return {
      key: paths.key,
      path: paths.repo,
      dryRun: options.dryRun,
      removed,
      clearedLeases: gone.map(({lease, reason}) => ({borrower: lease, reason})),
    }
  })
  // Another writer may have taken the lock since: then the directory is not empty and stays.
  if (!options.dryRun) await fs.rmdir(paths.leases).catch(() => undefined)
  return result
}
