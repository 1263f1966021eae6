/**
 * The cache contract (DESIGN.md §5.1): node-local bare repositories sandboxes borrow from.
 * Part of the plugin SDK, `@yard-dev/cli/backend` (src/sdk/index.ts).
 */

/** One borrower of a cache: whoever clones from it takes a lease (DESIGN.md §5.1, "Eviction"). */
export interface CacheBorrowerSpec {
  /** What borrows: `sandbox`, `clone`, … (lower-case letters, digits, dashes). */
  kind: string
  /** Which one: a sandbox's name, … (a DNS-1123 label). */
  name: string
  /** The borrowing clone's directory on this host: the lease is provably gone once it is. */
  path?: string
  /** A process on this host holding the lease: the lease is provably gone once it is. */
  pid?: number
}

/** A lease as stored in `<key>.leases/<kind>.<name>`. */
export interface CacheBorrower extends CacheBorrowerSpec {
  /** ISO-8601 time the lease was first taken. */
  started: string
  /** The host of `pid`. */
  host?: string
  /** ISO-8601 time of the borrower's latest ask for an on-demand fetch. */
  asked?: string
}

/**
 * Why a borrower is provably gone ("sandbox feat no longer exists"), or undefined when it may
 * still borrow. A sandbox backend supplies one for its kind.
 */
export type BorrowerProbe = (borrower: CacheBorrower) => Promise<string | undefined>

/** A row of `yard cache list` (DESIGN.md Appendix A). */
export interface CacheStatus {
  key: string
  /** Null for a repository adopted without a url. */
  identity: string | null
  url: string | null
  /** The bare repository's directory. */
  path: string
  /** `HEAD` exists. */
  present: boolean
  lastFetched: string | null
  lastError: string | null
  /** Present, and the latest clone or fetch attempt failed: callers proceed on cached objects. */
  stale: boolean
  packs: number
  looseObjects: number
  sizeBytes: number
  borrowers: CacheBorrower[]
}

export interface CacheAddResult {
  key: string
  identity: string
  url: string
  path: string
  /** `cloned` when it was missing, `adopted` when a repository was already there (pinned, not fetched). */
  action: 'cloned' | 'adopted'
  /**
   * Optional: with `adopted`, the repository there was already this cache (cloned or fetched
   * into by yard before), not one found in place; `yard cache add` then says so and fetches.
   */
  cached?: boolean
  /** The caches of its submodules (nested ones included), when the backend caches them. */
  submodules?: CacheSubmodule[]
}

/**
 * A submodule's own cache (DESIGN.md §5.1), found in the superproject's `.gitmodules` at its
 * default branch (nested ones at the commit their gitlink records).
 */
export interface CacheSubmodule {
  /** Its name and path in the superproject (for nested ones, in theirs). */
  name: string
  path: string
  /**
   * Its url with relative urls resolved against the superproject's upstream url (no credentials):
   * what git fetches it from.
   */
  url: string
  key: string
  /** The cache's bare repository. */
  cachePath: string
  /** The cache holds a repository (a stale one included). */
  present: boolean
  /** Why it has no cache, or why it is stale; null when it is fresh. */
  error: string | null
}

export interface CacheFetchResult {
  key: string
  identity: string | null
  path: string
  /** The fetch succeeded. */
  fetched: boolean
  /** It failed on a present cache: callers proceed on the cached objects. */
  stale: boolean
  /** The start of the latest successful fetch or clone (when it was last fresh). */
  staleSince: string | null
  error: string | null
  /** Maintenance ran after the fetch (thresholds reached). */
  maintained: boolean
  /** The caches of its submodules, added or fetched with it, when the backend caches them. */
  submodules?: CacheSubmodule[]
}

export interface CacheMaintainResult {
  key: string
  path: string
  /** Whether the three maintenance commands ran. */
  ran: boolean
  /** Why it ran or not ("forced", "52 packs ≥ 50", "3 packs and 12 loose objects: below the thresholds"). */
  reason: string
  before: {packs: number; looseObjects: number}
  after: {packs: number; looseObjects: number}
}

export interface CacheEvictResult {
  key: string
  path: string
  dryRun: boolean
  /** The entries removed (or, with dryRun, that would be). */
  removed: string[]
  /** Leases cleared because their holders are provably gone, with why. */
  clearedLeases: Array<{borrower: CacheBorrower; reason: string}>
}

/** What the cache agent did (totals over its run). */
export interface CacheAgentPass {
  /** Unknown repositories pinned and recorded (never fetched). */
  adopted: string[]
  /** Cache-named entries removed: not repositories, and nobody borrows them. */
  removed: string[]
  fetched: string[]
  /** Keys whose fetch failed (they stay usable, stale). */
  failed: string[]
  /** Cluster mode: caches cloned on first demand. */
  cloned?: string[]
  /** Cluster mode: caches deleted (their Repo is gone and no pod on the node mounts them). */
  evicted?: string[]
}

/** One thing the cache agent did, as it happens. */
export interface CacheAgentEvent {
  action: 'adopted' | 'removed' | 'fetched' | 'failed' | 'skipped' | 'cloned' | 'evicted'
  /** The cache key, or the entry's name for `removed`. */
  key: string
  detail?: string
}

export interface CacheAgentOptions {
  /** Refresh interval in ms; each wait is drawn from ±20 % of it. */
  intervalMs: number
  /** One pass (sweep, then every due cache), then return. */
  once: boolean
  /** Stops the loop (after the fetches in flight). */
  signal?: AbortSignal
  probe?: BorrowerProbe
  onEvent?: (event: CacheAgentEvent) => void
  /** How often asks are looked for, in ms (default 2 s). */
  pollMs?: number
  /** How often the root is swept for unknown entries, in ms (default 10 min). */
  sweepMs?: number
  /**
   * Cluster mode (DESIGN.md §5.1): what the cluster wants cached on this node. With it, the agent
   * clones on first demand, refreshes each repository on its own interval, serves asks, evicts
   * caches nobody wants, and reports this node's state of each repository.
   */
  demand?: CacheDemand
  /**
   * Cluster mode: the directory where the agent's pod mounts the credentials Secret (`yard
   * cluster credentials`), read for each clone and fetch; absent: no credentials.
   */
  credentialsDir?: string
}

/** This node's state of one repository: a Repo's `status.nodes.<node>` entry (DESIGN.md §5.2). */
export interface CacheNodeStatus {
  present: boolean
  /** Start of the latest successful clone or fetch (ISO-8601), or null. */
  lastFetched: string | null
  /** git's words when the latest attempt failed, or null. */
  lastError: string | null
  /**
   * The Repo's `spec.askedAt` this node served last (its fetch, or clone, ran after that ask),
   * or null; a waiting attach is answered once it reaches its own ask. Absent: not reported.
   */
  lastAsked?: string | null
  /**
   * The credentials prefix (`yard cluster credentials`) that served a remote url, or null when none
   * matched. Absent: not reported.
   */
  credentials?: string | null
}

/** A repository the cluster wants cached (one Repo object, named by its cache key). */
export interface DemandedRepo {
  key: string
  url: string
  /** Its own refresh interval in ms; undefined: the agent's `--interval`. */
  refreshMs?: number
  /** The latest ask for an on-demand fetch (ISO-8601), or undefined. */
  askedAt?: string
  /** Wanted on every node before any pod mounts it (declared ahead). */
  prefetch?: boolean
  /** What this node last reported for it, or undefined when it has no entry. */
  reported?: CacheNodeStatus
}

/**
 * Where a cluster-mode agent learns what its node needs and says what it holds; a sandbox
 * backend provides it (`SandboxBackend.cacheDemand`). Every call may throw OperationError.
 */
export interface CacheDemand {
  /** The node this agent serves. */
  readonly node: string
  /**
   * Cache keys mounted by pods on this node that have not ended (phase not Succeeded or Failed);
   * once watching, from the watch's cache, unless `fresh` asks the server again.
   */
  mountedKeys(options?: {fresh?: boolean}): Promise<Set<string>>
  /** Every repository the cluster wants cached; once watching, from the watch's cache. */
  repos(): Promise<DemandedRepo[]>
  /**
   * Starts watching what the cluster wants (list, then watch from its resourceVersion; relists
   * after `410 Gone`, reconnects with backoff) until `signal` aborts; resolves once the first
   * lists are in. `onChange` runs on every change seen and after a recovery, `onError` on the first
   * failed list or watch of an outage (retried by itself, with backoff). Optional: a demand without
   * it is read by polling.
   */
  watch?(options: {signal: AbortSignal; onChange: () => void; onError: (error: unknown) => void}): Promise<void>
  /** Writes this node's entry of one repository's status, and nothing else. */
  report(key: string, status: CacheNodeStatus): Promise<void>
  /**
   * Fetch-through (sdk/fetch-through.ts): the asks directories on this node of the pods that
   * have not ended, each with the cache key it asks for, ready to be written; while watching, from
   * the watch's cache (no request). Optional: a demand without it serves no asks.
   */
  askDirs?(): Promise<Array<{key: string; dir: string}>>
}

/**
 * Bare git caches per repository identity, never pruned (DESIGN.md §5.1). Every method takes the
 * cache root (absolute) and a url (any spelling of the repository; the identity decides).
 * Invalid urls are InputErrors (exit 2) before anything is written.
 */
export interface CacheBackend {
  readonly kind: 'cache'
  readonly id: string
  /**
   * Clone when missing, adopt (pin, no fetch) when a repository is already there; then, unless
   * `submodules` is false, the caches of its submodules. `lfs` is `[cache] lfs` (undefined: the
   * backend decides; git-cache fetches LFS objects when the repository uses LFS). A backend may
   * ignore both options.
   */
  add(root: string, url: string, options?: {submodules?: boolean; lfs?: 'all' | 'off'}): Promise<CacheAddResult>
  /** Every cache-named entry of the root, by key. */
  list(root: string): Promise<CacheStatus[]>
  /** Fetch in place; a failure on a present cache resolves `stale` instead of throwing. */
  fetch(root: string, url: string, options?: {onDemand?: boolean; lfs?: 'all' | 'off'}): Promise<CacheFetchResult>
  /** Maintenance when a threshold is reached, or always with `force`. */
  maintain(root: string, url: string, options: {force: boolean}): Promise<CacheMaintainResult>
  /** Deletes the whole cache; refuses (exit 3) while a live borrower remains. */
  evict(root: string, url: string, options: {dryRun: boolean; probe?: BorrowerProbe}): Promise<CacheEvictResult>
  /** Takes (or renews) a lease for a borrower; the cache must be present. */
  lease(root: string, url: string, borrower: CacheBorrowerSpec): Promise<CacheBorrower>
  /** Drops a borrower's lease; resolves whether there was one. */
  release(root: string, url: string, borrower: {kind: string; name: string}): Promise<boolean>
  /** Asks the agent for an on-demand fetch on behalf of a borrower holding a lease. */
  ask(root: string, url: string, borrower: {kind: string; name: string}): Promise<void>
  /** The refresh loop a node runs (`yard cache agent`); resolves with what it did once stopped. */
  agent(root: string, options: CacheAgentOptions): Promise<CacheAgentPass>
}
