/**
 * The cache agent in cluster mode (`yard cache agent --kubernetes`, DESIGN.md §5.1 and §5.2):
 * the local agent's git side (clone, pins, fetch, maintenance, adoption, the sweep) driven by what
 * the cluster wants — Repo objects, and pods on this node mounting caches — through a
 * CacheDemand, instead of by records and leases alone:
 * - a Repo's cache is cloned on first demand: when a pod on this node that has not ended mounts
 *   it, or at once when the Repo is declared ahead (`spec.prefetch`, `yard cluster repo add`). A
 *   Repo that no pod here needs stays un-cloned;
 * - a present cache with a Repo is refreshed on the Repo's interval (±20 %), and at once when
 *   asked: the Repo's `spec.askedAt` is later than the ask this node served last (its entry's
 *   `lastAsked`; the ask's own clock is compared with itself, never with the node's). The ask
 *   served is reported as `lastAsked` after the fetch, failed or not, so a waiting attach knows
 *   it was answered. Maintenance follows a fetch as in the local agent;
 * - a cache is evicted only when its Repo is gone and no pod on this node that has not ended
 *   mounts it (the pods are listed again right before);
 * - this node's entry of each Repo's status (present, lastFetched, lastError, lastAsked, and for
 *   a remote url the credentials prefix that served it) is written when it changed, and nothing
 *   else of the status;
 * - clones and fetches of a url that `yard cluster credentials` covers get that entry through
 *   git's own mechanisms, for that git process only (credentials.ts).
 * - while watching, the fetch-through asks of the pods on this node (CacheDemand.askDirs, read
 *   from the watch) are served beside the schedule (ask-fetch.ts, sdk/fetch-through.ts): an
 *   on-demand fetch per cache with asks, at most one start per cache every 2 s, reported as any
 *   fetch.
 * Pods are listed before Repos: a sandbox's Repo is made before its pod, so a pod that the first
 * list misses has its Repo in the second, and its cache is not evicted.
 *
 * As a loop, the agent watches (`CacheDemand.watch`, informers): a pass runs when a change is seen
 * (a Repo added, asked or removed, a pod on this node appearing or ending), when a refresh falls
 * due, when a clone or fetch ends, and on a slow resync (`pollMs`, default 60 s) that reads the
 * watch caches again without a request. A demand that cannot watch, and `once`, list instead.
 */
import type {CacheAgentOptions, CacheAgentPass, CacheDemand, CacheNodeStatus, DemandedRepo} from '../../sdk/cache.js'
import type {CacheStore} from './store.js'

import {YardError} from '../../sdk/errors.js'
import {serveAskDirs} from '../../sdk/fetch-through.js'
import {CACHE_KEY_PATTERN, repoIdentity} from '../../sdk/repo-identity.js'
import {periodicSweep, refresh} from './agent.js'
import {askFetcher} from './ask-fetch.js'
import {credentialsFor, missingCredentialsNote} from './credentials.js'
import {evictCache} from './evict.js'
import {cachePaths, type CacheRecord, ensureRoot, isPresent, keysInRoot, readRecord} from './layout.js'
import {type Pass, runSchedule, sleep, tally} from './scheduler.js'

/** Urls that reach another machine, whose failure may be missing credentials (not local paths or file://). */
const REMOTE_URL = /^(?:https?:\/\/|ssh:\/\/|git\+ssh:\/\/|[^/:@]+@[^/:]+:)/i

/** How often the pods' asks directories are looked at, in ms (one readdir each). */
const ASK_POLL_MS = 250

interface Work {
  repo: DemandedRepo
  kind: 'clone' | 'fetch'
  onDemand: boolean
}

interface View {
  mounted: Set<string>
  repos: DemandedRepo[]
}

/**
 * Runs the cluster-mode agent until `options.signal` aborts, or one pass with `options.once`
 * (then a failing API call rejects; in the loop it is a warning and the next poll tries again).
 * @returns every key cloned, fetched, adopted, removed, evicted or failed.
 * @throws OperationError from the demand source (with `once`).
 */
export async function runClusterAgent(
  cache: CacheStore,
  root: string,
  demand: CacheDemand,
  options: CacheAgentOptions,
): Promise<CacheAgentPass> {
  const {totals, emit} = tally<Required<CacheAgentPass>>(
    {cloned: [], fetched: [], adopted: [], removed: [], evicted: [], failed: []},
    options,
  )
  const watching = !options.once && demand.watch !== undefined
  // Polling, each pass is two list calls per node; watching, a resync reads the watch caches.
  const pollMs = options.pollMs ?? (watching ? 60_000 : 5000)
  const sweeping = periodicSweep(cache, root, options, emit, 'adopts, removes and evicts nothing')
  // Asks served, by key: a client whose clock runs ahead does not get the same ask served twice.
  const served = new Map<string, string>()
  // The earliest instant a refresh falls due (plan), so that a watching loop wakes for it.
  let soonest = Infinity
  let changed = false
  let wake: (() => void) | undefined
  if (watching) {
    const stop = new AbortController()
    options.signal?.addEventListener('abort', () => stop.abort(), {once: true})
    const ready = demand.watch!({
      signal: stop.signal,
      onChange() {
        changed = true
        wake?.()
      },
      // Once per outage of each watch: the informers retry by themselves, with backoff.
      onError: (error) =>
        cache.context.warn(
          `warning: the cache agent of node ${demand.node} lost its watch of the cluster; retrying with backoff: ${describe(error)}`,
        ),
    })
    await Promise.race([ready, new Promise((resolve) => stop.signal.addEventListener('abort', resolve, {once: true}))])
    if (stop.signal.aborted) return totals
  }

  const report = async (repo: DemandedRepo, status: CacheNodeStatus) => {
    if (sameStatus(repo.reported, status)) return
    // A node that holds nothing of a repository and has nothing to say adds no entry.
    if (repo.reported === undefined && !status.present && status.lastError === null) return
    await demand.report(repo.key, status)
    repo.reported = status
  }

  /** The credentials mounted for a url (credentials.ts), read at each use: a Secret updated in place is seen. */
  const credentials = (url: string) =>
    options.credentialsDir ? credentialsFor(options.credentialsDir, url, cache.context.env) : undefined

  /** This node's entry for a repository; a failure of a remote url no credentials matched says so. */
  const statusOf = (repo: DemandedRepo, present: boolean, record: CacheRecord | undefined): CacheNodeStatus => {
    const status: CacheNodeStatus = {...nodeStatus(present, record), ...lastAsked(repo, served)}
    if (!REMOTE_URL.test(repo.url)) return status
    const matched = credentials(repo.url)?.credential.prefix ?? null
    if (status.lastError !== null && matched === null)
      status.lastError = `${status.lastError.trimEnd()}\n${missingCredentialsNote(repo.url)}`
    return {...status, credentials: matched}
  }

  const perform = async (item: Work): Promise<void> => {
    const {key, url} = item.repo
    const match = credentials(url)
    const worker = match ? cache.withEnv(match.env) : cache
    if (item.kind === 'clone') {
      try {
        const result = await worker.add(root, url)
        emit({
          action: result.action,
          key,
          detail:
            result.action === 'cloned'
              ? item.repo.prefetch
                ? 'declared ahead (yard cluster repo add)'
                : 'first demand: a pod on this node mounts it'
              : 'pinned, not fetched',
        })
      } catch (error) {
        emit({action: 'failed', key, detail: describe(error)})
      }
    } else {
      await refresh(worker, root, {key, url, onDemand: item.onDemand}, emit)
    }

    if (item.repo.askedAt !== undefined) served.set(key, item.repo.askedAt)
    try {
      const paths = cachePaths(root, key)
      await report(item.repo, statusOf(item.repo, isPresent(paths), await readRecord(paths)))
    } catch (error) {
      cache.context.warn(`warning: could not report the cache ${key} on node ${demand.node}: ${describe(error)}`)
    }
  }

  /** The work due now; every repository not due gets its status reconciled instead. */
  const planView = async (view: View, {busy, nextDue}: Pass): Promise<Work[]> => {
    const due: Work[] = []
    for (const repo of view.repos) {
      if (!CACHE_KEY_PATTERN.test(repo.key) || busy(repo.key)) continue
      const paths = cachePaths(root, repo.key)
      const record = await readRecord(paths)
      const present = isPresent(paths)
      // Declared ahead, a repository is wanted here as if a pod mounted it.
      const mounted = view.mounted.has(repo.key) || repo.prefetch === true
      const status = statusOf(repo, present, record)
      const wrong = urlProblem(repo)
      if (wrong !== undefined) {
        // Reported where it matters: a node holding the cache or asked for it by a pod.
        if (present || mounted) await report(repo, {...status, lastError: wrong})
        continue
      }

      const lastAttempt = record?.lastAttempt ? Date.parse(record.lastAttempt) : 0
      const answered = served.get(repo.key) ?? repo.reported?.lastAsked ?? null
      const asked = repo.askedAt !== undefined && (answered === null || Date.parse(repo.askedAt) > Date.parse(answered))
      // A missing cache is cloned at once, unless its latest clone failed: then on the interval (or an ask).
      const retry = present || (record?.lastError ?? null) !== null
      const dueAt = retry ? (nextDue.get(repo.key) ?? lastAttempt + 0.8 * (repo.refreshMs ?? options.intervalMs)) : 0
      if ((present || mounted) && (asked || Date.now() >= dueAt))
        due.push({repo, kind: present ? 'fetch' : 'clone', onDemand: asked})
      else {
        if ((present || mounted) && Number.isFinite(dueAt)) soonest = Math.min(soonest, dueAt)
        await report(repo, status)
      }
    }

    // Asks first: somebody is waiting for them; then clones (a pod waits for those too).
    return due.sort(
      (a, b) => Number(b.onDemand) - Number(a.onDemand) || Number(b.kind === 'clone') - Number(a.kind === 'clone'),
    )
  }

  /** Evicts every cache whose Repo is gone and that no pod on this node mounts (checked again first). */
  const evictUnwanted = async (view: View, {inFlight, nextDue}: Pass): Promise<void> => {
    const wanted = new Set(view.repos.map((repo) => repo.key))
    const candidates = (await keysInRoot(root)).filter(
      (key) => !wanted.has(key) && !view.mounted.has(key) && !inFlight.has(key),
    )
    if (candidates.length === 0) return
    const mountedNow = await demand.mountedKeys({fresh: true})
    for (const key of candidates.filter((candidate) => !mountedNow.has(candidate))) {
      const paths = cachePaths(root, key)
      try {
        await evictCache(cache, paths, (await readRecord(paths))?.url ?? key, {dryRun: false, probe: options.probe})
        nextDue.delete(key)
        served.delete(key)
        emit({action: 'evicted', key, detail: 'its Repo is gone and no pod on this node mounts it'})
      } catch (error) {
        emit({action: 'skipped', key, detail: describe(error)})
      }
    }
  }

  /** A pass: what the cluster wants (pods first, see above), the sweep when due, the work due, evictions. */
  const plan = async (pass: Pass): Promise<Work[]> => {
    let due: Work[] = []
    changed = false
    soonest = Infinity
    try {
      const mounted = await demand.mountedKeys()
      const view: View = {mounted, repos: await demand.repos()}
      // Pods' hostPath volumes may have made cache-named directories before the agent's first pass.
      const marked = await ensureRoot(root, {claimCacheNamed: true})
      if (sweeping.due()) await sweeping.run(marked, new Set([...mounted, ...pass.inFlight.keys()]))
      due = await planView(view, pass)
      if (marked) await evictUnwanted(view, pass)
    } catch (error) {
      // The scheduler waits for the work in flight, then rethrows.
      if (options.once) throw error
      cache.context.warn(
        `warning: the cache agent of node ${demand.node} could not read what the cluster wants; trying again in ${pollMs} ms: ${describe(error)}`,
      )
    }

    return due
  }

  /**
   * The first of a change seen (watching) or the poll; watching, also the next refresh due
   * (nextDue is set when a fetch ends, seen in the pass that follows). A change seen during the
   * pass runs the next one at once.
   */
  const idle = (): Promise<unknown> | undefined => {
    if (watching && changed) return undefined
    const changedNow = watching ? new Promise<void>((resolve) => (wake = resolve)) : undefined
    const waitMs = watching ? Math.max(0, Math.min(pollMs, soonest - Date.now())) : pollMs
    return Promise.race([sleep(waitMs, options.signal), ...(changedNow ? [changedNow] : [])])
  }

  // Fetch-through (ask-fetch.ts): the pods' asks, served beside the schedule while watching.
  const askStop = new AbortController()
  options.signal?.addEventListener('abort', () => askStop.abort(), {once: true})
  const asking =
    watching && demand.askDirs
      ? serveAskDirs(
          async () => {
            const urls = new Map((await demand.repos()).map((repo) => [repo.key, repo.url]))
            return (await demand.askDirs!()).flatMap((entry) =>
              urls.has(entry.key) ? [{...entry, url: urls.get(entry.key)!}] : [],
            )
          },
          askFetcher({
            cache,
            root,
            where: `on node ${demand.node}`,
            credentials,
            emit,
            async report(key, present, record) {
              const repo = (await demand.repos()).find((candidate) => candidate.key === key)
              if (repo) await report(repo, statusOf(repo, present, record))
            },
          }),
          askStop.signal,
          {pollMs: ASK_POLL_MS},
        )
      : undefined

  try {
    await runSchedule<Work>(
      {
        key: (item) => item.repo.key,
        intervalMs: (item) => item.repo.refreshMs ?? options.intervalMs,
        plan,
        perform,
        idle,
      },
      options,
    )
  } finally {
    askStop.abort()
    await asking
  }

  return totals
}

/** This node's status entry for a cache from its repository and record. */
export function nodeStatus(present: boolean, record: CacheRecord | undefined): CacheNodeStatus {
  return {present, lastFetched: record?.lastFetched ?? null, lastError: record?.lastError ?? null}
}

function sameStatus(a: CacheNodeStatus | undefined, b: CacheNodeStatus): boolean {
  return (
    a !== undefined &&
    a.present === b.present &&
    a.lastFetched === b.lastFetched &&
    a.lastError === b.lastError &&
    (b.lastAsked === undefined || (a.lastAsked ?? null) === b.lastAsked) &&
    (b.credentials === undefined || (a.credentials ?? null) === b.credentials)
  )
}

/** The ask this node served last, as its status says it: `{lastAsked}`, or nothing when it never served one. */
function lastAsked(repo: DemandedRepo, served: Map<string, string>): {lastAsked?: string | null} {
  const answered = served.get(repo.key) ?? repo.reported?.lastAsked ?? null
  return answered === null ? {} : {lastAsked: answered}
}

/** Why a Repo's url cannot fill the cache its name says, or undefined when it can. */
function urlProblem(repo: DemandedRepo): string | undefined {
  try {
    const {key} = repoIdentity(repo.url)
    if (key === repo.key) return undefined
    return `the Repo ${repo.key} names the cache of another repository: the cache key of ${repo.url} is ${key}`
  } catch (error) {
    return `the Repo ${repo.key} has an invalid url: ${describe(error)}`
  }
}

function describe(error: unknown): string {
  return error instanceof YardError
    ? [error.message, error.why].filter(Boolean).join(': ')
    : String((error as Error)?.message ?? error)
}
