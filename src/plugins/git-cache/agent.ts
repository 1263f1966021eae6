/**
 * The cache agent (`yard cache agent`, the loop a cluster's DaemonSet runs; DESIGN.md §5.1,
 * git-cache-notes §2): refreshes every known cache on its interval ±20 % jitter, serves
 * on-demand asks (a borrower's lease newer than the latest attempt) within the on-demand budget,
 * at most 4 caches at once (the scheduler of scheduler.ts); sweeps the root for unknown
 * repositories named like caches (adopted:
 * pinned, not fetched) and cache-named entries that are not repositories and have no borrower
 * (removed) — only in a root that carries the marker file. Looping, it also answers the
 * fetch-through asks of the podman sandboxes on this machine whose caches it holds
 * (ask-fetch.ts), so a `git fetch` in a sandbox reaches the remote without a `yard exec` running.
 */
import {existsSync, promises as fs} from 'node:fs'
import path from 'node:path'

import type {CacheAgentEvent, CacheAgentOptions, CacheAgentPass} from '../../sdk/cache.js'

import {RefusedError} from '../../sdk/errors.js'
import {serveAskDirs} from '../../sdk/fetch-through.js'
import {askFetcher, localAskDirs} from './ask-fetch.js'
import {cachePaths, type CachePaths, ensureRoot, isPresent, keysInRoot, readRecord, ROOT_MARKER} from './layout.js'
import {readLeases, sortLeases} from './leases.js'
import {type Pass, runSchedule, sleep, tally} from './scheduler.js'
import {type CacheStore, discardHalfClone} from './store.js'

/** How often the podman sandboxes' asks directories are looked at, in ms. */
const ASK_POLL_MS = 250

/** A cache due for a fetch: asked for since its latest attempt (`onDemand`) or by interval. */
export interface Due {
  key: string
  url: string
  onDemand: boolean
}

/**
 * Runs the agent until `signal` aborts (or one pass with `once`).
 * @returns every key adopted, removed, fetched or failed.
 */
export async function runAgent(cache: CacheStore, root: string, options: CacheAgentOptions): Promise<CacheAgentPass> {
  const {totals, emit} = tally<CacheAgentPass>({adopted: [], removed: [], fetched: [], failed: []}, options)
  const pollMs = options.pollMs ?? 2000
  const sweeping = periodicSweep(cache, root, options, emit, 'adopts and removes nothing')
  // Fetch-through (ask-fetch.ts): the podman sandboxes' asks, served beside the schedule when looping.
  const askStop = new AbortController()
  options.signal?.addEventListener('abort', () => askStop.abort(), {once: true})
  const asking = options.once
    ? undefined
    : serveAskDirs(
        localAskDirs(cache.context.stateDir, root),
        askFetcher({cache, root, where: `in ${root}`, emit}),
        askStop.signal,
        {pollMs: ASK_POLL_MS},
      )
  try {
    await runSchedule<Due>(
      {
        key: (item) => item.key,
        intervalMs: () => options.intervalMs,
        async plan(pass) {
          if (sweeping.due()) await sweeping.run(await ensureRoot(root))
          return dueCaches(root, options.intervalMs, pass)
        },
        perform: async (item) => refresh(cache, root, item, emit),
        idle: async () => sleep(pollMs, options.signal),
      },
      options,
    )
  } finally {
    askStop.abort()
    await asking
  }

  return totals
}

/**
 * The sweep every `options.sweepMs` (default 10 minutes), due at once: `run` sweeps a marked
 * root (`held` as in `sweep`), and for a root without the marker warns once that the agent
 * `refrains` (what it does not do there).
 */
export function periodicSweep(
  cache: CacheStore,
  root: string,
  options: CacheAgentOptions,
  emit: (event: CacheAgentEvent) => void,
  refrains: string,
) {
  const sweepMs = options.sweepMs ?? 10 * 60_000
  let nextSweep = 0
  let warnedUnmarked = false
  return {
    due: () => Date.now() >= nextSweep,
    async run(marked: boolean, held?: ReadonlySet<string>): Promise<void> {
      if (marked) await sweep(cache, root, options, emit, held)
      else if (!warnedUnmarked) {
        cache.context.warn(`warning: ${root} holds other files and no ${ROOT_MARKER}: the agent ${refrains} there`)
        warnedUnmarked = true
      }

      nextSweep = Date.now() + sweepMs
    },
  }
}

/**
 * Fetches one cache (with maintenance when due) and emits `fetched` or `failed`; never throws.
 * Shared by the local agent and the cluster agent (DESIGN.md §5.1).
 */
export async function refresh(
  cache: CacheStore,
  root: string,
  item: Due,
  emit: (event: CacheAgentEvent) => void,
): Promise<void> {
  try {
    const result = await cache.fetchKey(root, item.key, item.url, item.onDemand)
    if (result.fetched)
      emit({
        action: 'fetched',
        key: item.key,
        detail:
          [item.onDemand ? 'on demand' : undefined, result.maintained ? 'maintained' : undefined]
            .filter(Boolean)
            .join(', ') || undefined,
      })
    else emit({action: 'failed', key: item.key, detail: `stale since ${result.staleSince}: ${result.error}`})
  } catch (error) {
    emit({action: 'failed', key: item.key, detail: (error as Error).message})
  }
}

/**
 * The known caches (a record with a url, present) due now: asked for since their latest
 * attempt (on demand), or due by interval — the jittered instant after the agent's own latest
 * attempt, or for a cache it has not touched yet, 0.8 × interval after the recorded attempt.
 */
async function dueCaches(root: string, intervalMs: number, {busy, nextDue}: Pass): Promise<Due[]> {
  const due: Due[] = []
  const now = Date.now()
  for (const key of await keysInRoot(root)) {
    if (busy(key)) continue
    const paths = cachePaths(root, key)
    const record = await readRecord(paths)
    if (!record?.url || !isPresent(paths)) continue
    const lastAttempt = record.lastAttempt === null ? 0 : Date.parse(record.lastAttempt)
    const asked = (await readLeases(paths)).some(
      (lease) => lease.asked !== undefined && Date.parse(lease.asked) > lastAttempt,
    )
    const dueAt = nextDue.get(key) ?? lastAttempt + 0.8 * intervalMs
    if (asked || now >= dueAt) due.push({key, url: record.url, onDemand: asked})
  }

  // Asks first: somebody is waiting for them.
  return due.sort((a, b) => Number(b.onDemand) - Number(a.onDemand))
}

/**
 * Adopts unknown repositories and removes cache-named entries that are not repositories and
 * have no live borrower. Keys whose lock is held (or that fail) are left for the next sweep. Records with a
 * url stay (a failed clone's error remains visible until `yard cache evict`). Keys in `held`
 * are borrowed whatever their leases say (cluster mode: a pod on the node mounts them, and its
 * hostPath volume made the empty directory the clone will fill).
 */
export async function sweep(
  cache: CacheStore,
  root: string,
  options: CacheAgentOptions,
  emit: (event: CacheAgentEvent) => void,
  held: ReadonlySet<string> = new Set(),
): Promise<void> {
  for (const key of await keysInRoot(root)) {
    const paths = cachePaths(root, key)
    try {
      await cache.withCacheLock(paths, 'sweep', 0, async () => sweepKey(cache, paths, options, emit, held.has(key)))
    } catch (error) {
      // One key's trouble (busy, unreadable, no permission) never stops the agent.
      emit({
        action: 'skipped',
        key,
        detail: error instanceof RefusedError ? 'busy: another writer holds its lock' : (error as Error).message,
      })
      continue
    }

    // Taking the lock made `<key>.leases/`; a key with nothing else left loses it too.
    if (!existsSync(paths.repo) && !existsSync(paths.record)) await fs.rmdir(paths.leases).catch(() => undefined)
  }
}

async function sweepKey(
  cache: CacheStore,
  paths: CachePaths,
  options: CacheAgentOptions,
  emit: (event: CacheAgentEvent) => void,
  held: boolean,
): Promise<void> {
  const record = await readRecord(paths)
  if (isPresent(paths)) {
    if (record === undefined) {
      await cache.adopt(paths, null, null)
      emit({action: 'adopted', key: paths.key, detail: 'pinned, not fetched'})
    }

    return
  }

  // Not a repository (no HEAD), or — holding the lock — a crashed clone's leftovers.
  const {live} = await sortLeases(paths, options.probe, false)
  if (live.length > 0 || held) {
    await discardHalfClone(paths)
    return
  }

  const junk = [paths.repo, paths.marker, ...(record?.url ? [] : [paths.record])].filter((entry) => existsSync(entry))
  for (const entry of junk) {
    await fs.rm(entry, {recursive: true, force: true})
    emit({action: 'removed', key: path.basename(entry), detail: 'not a repository, and nobody borrows it'})
  }
}
