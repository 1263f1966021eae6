/**
 * The git-cache backend (DESIGN.md §5.1): one never-pruned bare repository per identity under a
 * cache root, one writer per cache (the lock in `<key>.leases/.lock`), a record per cache.
 * Stale vs cold: a failed fetch on a present cache leaves it usable and records the error; a
 * failed clone empties the directory (keeping the directory itself), removes the marker and
 * fails the caller at once.
 */
import {promises as fs} from 'node:fs'

import type {
  BorrowerProbe,
  CacheAddResult,
  CacheAgentOptions,
  CacheAgentPass,
  CacheBackend,
  CacheBorrower,
  CacheBorrowerSpec,
  CacheEvictResult,
  CacheFetchResult,
  CacheMaintainResult,
  CacheStatus,
} from '../../sdk/cache.js'
import type {ProcessRunner} from '../../sdk/process.js'
import type {BackendContext} from '../../sdk/target.js'

import {InputError, OperationError, YardError} from '../../sdk/errors.js'
import {repoIdentity} from '../../sdk/repo-identity.js'
import {shellCommand} from '../../sdk/shell.js'
import {runAgent} from './agent.js'
import {evictCache} from './evict.js'
import {runClusterAgent} from './kube-agent.js'
import {
  cachePaths,
  type CachePaths,
  type CacheRecord,
  emptyDirectory,
  emptyRecord,
  errorText,
  isPresent,
  keysInRoot,
  objectCounts,
  readRecord,
  requireRoot,
  sizeOnDisk,
  stamp,
  writeRecord,
} from './layout.js'
import {readLeases, removeLease, writeLease} from './leases.js'
import {fetchLfs, type LfsMode} from './lfs.js'
import {checkOrigin} from './origin.js'
import {
  type CacheBudgets,
  cloneBare,
  DEFAULT_BUDGETS,
  fetchOrigin,
  maintenanceDue,
  pin,
  readLocalConfig,
  runMaintenance,
} from './repository.js'
import {type CacheStore, discardHalfClone, withCacheLock} from './store.js'
import {cacheSubmodules} from './submodules.js'

export const GIT_CACHE_ID = 'git-cache'

export class GitCache implements CacheBackend, CacheStore {
  readonly kind = 'cache' as const
  readonly id = GIT_CACHE_ID

  constructor(
    readonly context: BackendContext,
    readonly budgets: CacheBudgets = DEFAULT_BUDGETS,
  ) {}

  /** Runs `work` holding the cache's lock (one writer per cache; store.ts). */
  async withCacheLock<T>(
    paths: CachePaths,
    purpose: string,
    waitMs: number,
    work: (runner: ProcessRunner) => Promise<T>,
  ): Promise<T> {
    return withCacheLock(this.context, this.budgets, paths, purpose, waitMs, work)
  }

  /** The same cache backend whose git processes get `env` too (cluster credentials, credentials.ts). */
  withEnv(env: Record<string, string>): GitCache {
    return new GitCache({...this.context, runner: this.context.runner.withEnv(env)}, this.budgets)
  }

  async add(root: string, url: string, options: {submodules?: boolean; lfs?: LfsMode} = {}): Promise<CacheAddResult> {
    const repo = repoIdentity(url)
    await requireRoot(root)
    const paths = cachePaths(root, repo.key)
    const result = {key: repo.key, identity: repo.identity, url: repo.url, path: paths.repo}
    let cached = false
    const action = await this.withCacheLock(paths, 'add', this.budgets.cloneMs, async (runner) => {
      await discardHalfClone(paths)
      if (isPresent(paths)) {
        // A cache yard recorded is used as it is; one found in place without a record is adopted.
        const recorded = await readRecord(paths)
        this.context.progress?.step(
          recorded ? `using the cache ${paths.key}` : `adopting the repository at ${paths.repo}`,
        )
        cached = (recorded?.lastFetched ?? null) !== null
        await this.adopt(paths, repo.url, repo.identity, runner)
        return 'adopted' as const
      }

      await this.clone(paths, repo.url, repo.identity, runner)
      this.warnLfs(paths, await fetchLfs(runner, paths.repo, options.lfs, this.budgets))
      return 'cloned' as const
    })
    this.context.progress?.done()
    // After its lock is released: each submodule's cache takes its own.
    const outcome = {...result, action, ...(action === 'adopted' && {cached})}
    if (options.submodules === false) return outcome
    return {...outcome, submodules: await cacheSubmodules(this, root, url, paths.repo, {fetch: false})}
  }

  /** An LFS fetch that failed leaves the git objects fetched: a warning, not a stale cache. */
  private warnLfs(paths: CachePaths, failure: string | null): void {
    if (failure !== null)
      this.context.warn(
        `warning: the LFS objects of the cache ${paths.key} were not fetched (${failure}); files in LFS stay pointers in clones made from it`,
      )
  }

  /**
   * Pins a repository found in place and records it; never fetches (DESIGN.md §5.1, adoption).
   * Its origin and record must name the repository of its key (and `identity`, when given).
   * @throws RefusedError (exit 3) for a cache whose origin names another repository (origin.ts).
   */
  async adopt(
    paths: CachePaths,
    url: string | null,
    identity: string | null,
    runner: ProcessRunner = this.context.runner,
  ): Promise<void> {
    const found = await readRecord(paths)
    const config = await readLocalConfig(runner, paths.repo, this.budgets)
    const origin = await checkOrigin(
      runner,
      paths,
      found,
      url !== null && identity !== null ? {url, identity} : null,
      config,
    )
    const record = found ?? emptyRecord(paths.key, url, identity)
    const recorded = origin.recorded ?? url
    await pin(runner, paths.repo, recorded ?? origin.origin, this.budgets, config)
    await writeRecord(paths, {...record, url: recorded, identity: record.identity ?? identity})
  }

  private async clone(paths: CachePaths, url: string, identity: string, runner: ProcessRunner): Promise<void> {
    const started = stamp()
    const record = {...((await readRecord(paths)) ?? emptyRecord(paths.key, url, identity)), lastAttempt: started}
    await emptyDirectory(paths.repo)
    await fs.writeFile(paths.marker, `${started}\n`)
    try {
      this.context.progress?.step(`cloning ${identity} into the cache`)
      await cloneBare(runner, url, paths.repo, this.budgets, this.context.progress)
      // Before anything can fetch into it.
      this.context.progress?.step('pinning the cache')
      await pin(runner, paths.repo, url, this.budgets)
    } catch (error) {
      await emptyDirectory(paths.repo)
      await fs.rm(paths.marker, {force: true})
      const why = errorText(error)
      await writeRecord(paths, {...record, url: record.url ?? url, lastError: why})
      throw new OperationError(`could not clone ${url} into the cache ${paths.repo}`, {
        why,
        fix: 'check the url and your access to it (git ls-remote -- URL), then run yard cache add again',
        cause: error,
      })
    }

    // The url that cloned is the one fetches use (an earlier failed attempt's spelling may not work).
    // The record first: a kill between the two leaves the marker, and the next add clones again.
    await writeRecord(paths, {...record, url, identity, lastFetched: started, lastError: null})
    await fs.rm(paths.marker, {force: true})
  }

  async list(root: string): Promise<CacheStatus[]> {
    const rows: CacheStatus[] = []
    for (const key of await keysInRoot(root)) {
      const paths = cachePaths(root, key)
      const record = await readRecord(paths)
      const present = isPresent(paths)
      const counts = present ? await objectCounts(paths.repo) : {packs: 0, looseObjects: 0}
      rows.push({
        key,
        identity: record?.identity ?? null,
        url: record?.url ?? null,
        path: paths.repo,
        present,
        lastFetched: record?.lastFetched ?? null,
        lastError: record?.lastError ?? null,
        stale: present && (record?.lastError ?? null) !== null,
        ...counts,
        sizeBytes: await sizeOnDisk(paths.repo),
        borrowers: await readLeases(paths),
      })
    }

    return rows
  }

  async fetch(root: string, url: string, options: {onDemand?: boolean; lfs?: LfsMode} = {}): Promise<CacheFetchResult> {
    const repo = repoIdentity(url)
    const fetched = await this.fetchKey(root, repo.key, repo.url, Boolean(options.onDemand), options.lfs)
    return {
      ...fetched,
      submodules: await cacheSubmodules(this, root, url, fetched.path, {fetch: true, onDemand: options.onDemand}),
    }
  }

  /**
   * Fetches one cache in place, then maintains it when a threshold is reached. A failure
   * (pinning or fetching) is recorded and resolves `stale`: the cache stays usable.
   * @throws InputError (exit 2) when the cache is not present (creating nothing);
   *   RefusedError (exit 3) when its origin names another repository (origin.ts).
   */
  async fetchKey(
    root: string,
    key: string,
    url: string | null,
    onDemand: boolean,
    lfs?: LfsMode,
  ): Promise<CacheFetchResult> {
    const paths = cachePaths(root, key)
    const waitMs = onDemand ? this.budgets.onDemandMs : this.budgets.fetchMs
    requirePresent(paths, url)
    return this.withCacheLock(paths, 'fetch', waitMs, async (runner) => {
      requirePresent(paths, url)
      const found = await readRecord(paths)
      const config = await readLocalConfig(runner, paths.repo, this.budgets)
      const origin = await checkOrigin(runner, paths, found, asked(url), config)
      const record = {...(found ?? emptyRecord(key, url)), lastAttempt: stamp()}
      const fetchUrl = origin.recorded ?? url
      const base = {key, identity: record.identity, path: paths.repo}
      try {
        await pin(runner, paths.repo, fetchUrl, this.budgets, config)
        this.context.progress?.step(`fetching ${record.identity ?? key}`)
        await fetchOrigin(runner, paths.repo, onDemand, this.budgets, this.context.progress)
      } catch (error) {
        const why = errorText(error)
        await writeRecord(paths, {...record, url: fetchUrl, lastError: why})
        return {
          ...base,
          fetched: false,
          stale: true,
          staleSince: record.lastFetched ?? record.added,
          error: why,
          maintained: false,
        }
      }

      const fresh = {...record, url: fetchUrl, lastFetched: record.lastAttempt, lastError: null}
      await writeRecord(paths, fresh)
      this.warnLfs(paths, await fetchLfs(runner, paths.repo, lfs, this.budgets))
      const maintained = await this.maintainIfDue(paths, fresh, runner)
      return {...base, fetched: true, stale: false, staleSince: null, error: null, maintained}
    }).then((outcome) => {
      this.context.progress?.done()
      return outcome
    })
  }

  /** Maintenance after a successful fetch; a failure is a warning (retried after the next fetch). */
  private async maintainIfDue(paths: CachePaths, record: CacheRecord, runner: ProcessRunner): Promise<boolean> {
    const {due} = await maintenanceDue(paths.repo)
    if (!due) return false
    this.context.progress?.step(`maintaining the cache ${paths.key}`)
    try {
      await runMaintenance(runner, paths.repo, this.budgets)
    } catch (error) {
      this.context.warn(
        `warning: maintenance of the cache ${paths.key} failed; the cache is unchanged and usable: ${error instanceof YardError ? error.render() : String(error)}`,
      )
      return false
    }

    await writeRecord(paths, {...record, lastMaintained: stamp()})
    return true
  }

  async maintain(root: string, url: string, options: {force: boolean}): Promise<CacheMaintainResult> {
    const repo = repoIdentity(url)
    return this.maintainKey(root, repo.key, repo.url, options.force)
  }

  /**
   * Runs the maintenance commands when a threshold is reached, or always with `force`.
   * @throws InputError (exit 2) when the cache is not present (creating nothing); RefusedError
   *   (exit 3) when its origin names another repository; OperationError when a command fails.
   */
  async maintainKey(root: string, key: string, url: string | null, force: boolean): Promise<CacheMaintainResult> {
    const paths = cachePaths(root, key)
    requirePresent(paths, url)
    return this.withCacheLock(paths, 'maintain', this.budgets.maintainMs, async (runner) => {
      requirePresent(paths, url)
      const found = await readRecord(paths)
      const config = await readLocalConfig(runner, paths.repo, this.budgets)
      const origin = await checkOrigin(runner, paths, found, asked(url), config)
      const record = found ? {...found, url: origin.recorded} : emptyRecord(key, url)
      await pin(runner, paths.repo, record.url ?? url, this.budgets, config)
      const due = await maintenanceDue(paths.repo)
      const result = {key, path: paths.repo, before: due.counts}
      if (!force && !due.due) return {...result, ran: false, reason: due.reason, after: due.counts}
      await runMaintenance(runner, paths.repo, this.budgets)
      await writeRecord(paths, {...record, lastMaintained: stamp()})
      return {...result, ran: true, reason: force ? 'forced' : due.reason, after: await objectCounts(paths.repo)}
    })
  }

  async evict(root: string, url: string, options: {dryRun: boolean; probe?: BorrowerProbe}): Promise<CacheEvictResult> {
    const repo = repoIdentity(url)
    const paths = cachePaths(root, repo.key)
    return evictCache(this, paths, repo.url, options)
  }

  async lease(root: string, url: string, borrower: CacheBorrowerSpec): Promise<CacheBorrower> {
    const repo = repoIdentity(url)
    const paths = cachePaths(root, repo.key)
    requirePresent(paths, repo.url)
    // Under the lock, so an eviction never misses a lease taken while it decides.
    return this.withCacheLock(paths, 'lease', this.budgets.cloneMs, async () => {
      requirePresent(paths, repo.url)
      return writeLease(paths, borrower)
    })
  }

  async release(root: string, url: string, borrower: {kind: string; name: string}): Promise<boolean> {
    return removeLease(cachePaths(root, repoIdentity(url).key), borrower)
  }

  async ask(root: string, url: string, borrower: {kind: string; name: string}): Promise<void> {
    const paths = cachePaths(root, repoIdentity(url).key)
    const lease = (await readLeases(paths)).find((held) => held.kind === borrower.kind && held.name === borrower.name)
    if (!lease) {
      throw new InputError(`${borrower.kind} ${borrower.name} holds no lease on the cache ${paths.key}`, {
        why: 'only a borrower of a cache may ask for an on-demand fetch of it',
        fix: 'take a lease first (whoever clones from a cache takes one)',
      })
    }

    await writeLease(paths, lease, {asked: stamp()})
  }

  /** The local agent, or the cluster-mode one when `options.demand` says what the cluster wants. */
  async agent(root: string, options: CacheAgentOptions): Promise<CacheAgentPass> {
    return options.demand ? runClusterAgent(this, root, options.demand, options) : runAgent(this, root, options)
  }
}

/** The identity a caller asked for, when it gave a url (the agent gives the record's). */
function asked(url: string | null): {url: string; identity: string} | null {
  if (url === null) return null
  try {
    const repo = repoIdentity(url)
    return {url: repo.url, identity: repo.identity}
  } catch {
    // A recorded url yard now refuses: checkOrigin refuses the record, naming it.
    return null
  }
}

function requirePresent(paths: CachePaths, url: string | null): void {
  if (isPresent(paths)) return
  throw new InputError(`there is no cache ${paths.key}${url ? ` for ${url}` : ''} (no ${paths.repo}/HEAD)`, {
    why: 'a cache exists once yard cache add has cloned or adopted it',
    fix: `run ${url ? shellCommand(['yard', 'cache', 'add', url]) : 'yard cache add URL'}`,
  })
}
