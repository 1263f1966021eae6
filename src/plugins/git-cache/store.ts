/**
 * The cache store (DESIGN.md §5.1): what the git-cache backend, its two agents, eviction and the
 * submodule caches share of a cache root — one writer per cache (the lock in `<key>.leases/.lock`,
 * recording each git's process group), and the clean-up of a clone that crashed midway. The
 * backend class implements `CacheStore`; the agents and eviction take the interface, so none of
 * them imports the class.
 */
import {existsSync, promises as fs} from 'node:fs'

import type {CacheAddResult, CacheFetchResult} from '../../sdk/cache.js'
import type {ProcessRunner} from '../../sdk/process.js'
import type {BackendContext} from '../../sdk/target.js'
import type {LfsMode} from './lfs.js'
import type {CacheBudgets} from './repository.js'

import {withLock} from '../../sdk/lock.js'
import {endGroup, groupsWritingTo} from '../../sdk/process-group.js'
import {type CachePaths, emptyDirectory} from './layout.js'

/** The operations on a cache root that the agents, eviction and submodule caches drive (cache.ts implements them). */
export interface CacheStore {
  readonly context: BackendContext
  readonly budgets: CacheBudgets
  /** Runs `work` holding the cache's lock; see `withCacheLock`. */
  withCacheLock<T>(
    paths: CachePaths,
    purpose: string,
    waitMs: number,
    work: (runner: ProcessRunner) => Promise<T>,
  ): Promise<T>
  /** The same store whose git processes get `env` too (cluster credentials, credentials.ts). */
  withEnv(env: Record<string, string>): CacheStore
  add(root: string, url: string, options?: {submodules?: boolean; lfs?: LfsMode}): Promise<CacheAddResult>
  adopt(paths: CachePaths, url: string | null, identity: string | null, runner?: ProcessRunner): Promise<void>
  fetchKey(root: string, key: string, url: string | null, onDemand: boolean, lfs?: LfsMode): Promise<CacheFetchResult>
}

/**
 * Runs `work` holding the cache's lock (one writer per cache), with a runner that records in
 * the lock the process group of each git it runs: git survives a kill of yard, and the next
 * writer ends that orphan before it cleans up under it. A lock whose process is gone, or older
 * than the longest operation, is taken over with a warning.
 * @throws RefusedError (exit 3) when a live writer still holds it after `waitMs`.
 */
export async function withCacheLock<T>(
  context: BackendContext,
  budgets: CacheBudgets,
  paths: CachePaths,
  purpose: string,
  waitMs: number,
  work: (runner: ProcessRunner) => Promise<T>,
): Promise<T> {
  const budgetMs = Math.max(budgets.cloneMs, budgets.fetchMs + budgets.maintainMs) + 60_000
  return withLock(
    paths.lock,
    {budgetMs, waitMs, purpose: `cache ${purpose} ${paths.key}`, warn: context.warn},
    async (lock) => work(context.runner.withGroupReporter((pgid) => lock.recordGroup(pgid))),
  )
}

/**
 * A leftover `.cloning` marker (seen while holding the lock) means a clone crashed midway: end any
 * git still cloning into the directory (a killed holder's child it had no time to record in the
 * lock), empty the directory (keeping it), drop the marker.
 */
export async function discardHalfClone(paths: CachePaths): Promise<boolean> {
  if (!existsSync(paths.marker)) return false
  for (const group of groupsWritingTo(paths.repo)) await endGroup(group)
  if (existsSync(paths.repo)) await emptyDirectory(paths.repo)
  await fs.rm(paths.marker, {force: true})
  return true
}
