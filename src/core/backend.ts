/**
 * Backend contracts, version 1 (DESIGN.md §2, §7). This module is the plugin SDK, exported as
 * `@yard-dev/cli/backend`: a plugin's `yard:backends` hook returns `BackendFactory` objects.
 *
 * Identity is computed once in core and handed to every backend as a `Target`; no backend
 * recomputes a name, an offset or a port.
 */
import type {ProcessRunner} from './process.js'
import type {ProgressPort} from './progress.js'

/** The contract major this CLI implements. A factory declaring another major is `incompatible`. */
export const CONTRACT_VERSION = 1

export const BACKEND_KINDS = ['machine', 'stack', 'cache', 'sandbox'] as const
export type BackendKind = (typeof BACKEND_KINDS)[number]

/** Where an offset came from (DESIGN.md §3.4). */
export type OffsetSource = 'main' | 'env' | 'pin' | 'hash' | 'label'

/** One checkout's or sandbox's identity (DESIGN.md §2, §3). */
export interface Target {
  /** `main` for the main checkout, else the worktree or sandbox name (DNS-1123 label). */
  name: string
  isMain: boolean
  prefix: string
  /** `<prefix>` for main, `<prefix>-<name>` otherwise: compose project, pod name. */
  project: string
  /** Hash of the main checkout's real path; labelled `yard.dev/owner` on everything created. */
  owner: string
  /** 0 for main, 1..89 otherwise. */
  offset: number
  offsetSource: OffsetSource
  /** `[ports]` key → host port (base + offset). */
  ports: Record<string, number>
  /** Absolute path of the targeted checkout (for a sandbox: the main checkout). */
  checkoutPath: string
  mainPath: string
}

/** What core hands a backend when it creates one. */
export interface BackendContext {
  runner: ProcessRunner
  env: NodeJS.ProcessEnv
  /** yard's state directory (absolute). */
  stateDir: string
  warn: (message: string) => void
  /** Where a long operation reports its steps (`ProgressPort`); absent: report nothing. */
  progress?: ProgressPort
  /** `[cluster]` settings, given to sandbox backends (a cluster runtime needs them). */
  cluster?: ClusterSettings
}

/** What a cluster runtime needs from `[cluster]` (DESIGN.md §5.2; docs/configuration.md). */
export interface ClusterSettings {
  /** Kube context; undefined: the kubeconfig's current context. */
  context?: string
  namespace: string
  /** `[cluster] cache-root`: the caches' directory on every node. */
  cacheRoot: string
  /** `refreshInterval` of the Repos a create declares (`10m`); undefined: the agent's interval. */
  refreshInterval?: string
  /** Budget for a new pod to become Ready, ms (`[cluster] ready-timeout-seconds`). */
  readyTimeoutMs: number
  /** Budget for the pod's node to report its caches present, ms (`[cluster] cache-timeout-seconds`). */
  cacheTimeoutMs: number
}

export interface MachineStatus {
  backend: string
  name: string
  state: 'absent' | 'stopped' | 'running' | 'unresponsive'
  /** Engine socket (`unix:///…`), or null when the host's default engine is used. */
  socket: string | null
  mounts: string[]
  cpus: number | null
  memoryMiB: number | null
  diskGiB: number | null
}

/** What the project's machine is made of (DESIGN.md §4.3): computed in core from `[machine]` and the workspace. */
export interface MachineSpec {
  /** `[machine] name`, default `yard-<prefix>`; `yard-<prefix>-<name>` for an untrusted worktree's own machine. */
  name: string
  /**
   * Host paths mounted at their own paths: the main checkout and the worktrees root; for an
   * untrusted worktree's machine, exactly that worktree and the git common dir.
   */
  mounts: string[]
  /** The `mounts` mounted read-only (an untrusted worktree's machine: the git common dir). A backend that cannot mount read-only must refuse such a spec. */
  readOnly?: string[]
  /** Set for the machine of one untrusted worktree (its name): created on its first `up`, removed with it. */
  worktree?: string
  cpus: number
  memoryMiB: number
  diskGiB: number
}

/**
 * A container machine: the host's podman, a podman VM, or a plugin's (DESIGN.md §4.3). Backends
 * without a VM ignore the spec.
 */
export interface MachineBackend {
  readonly kind: 'machine'
  readonly id: string
  /**
   * True when only one of its machines can run at a time (podman machine: one VM): before an
   * untrusted worktree's machine starts, core stops the shared one only when asked
   * (`yard up --stop-shared`), else refuses.
   */
  readonly exclusive?: boolean
  /**
   * True when it gives an untrusted worktree a machine of its own from a spec with `worktree`
   * set, honouring `readOnly`. Core refuses to run an untrusted worktree on a backend without it.
   */
  readonly worktreeMachines?: boolean
  /** Never creates or starts anything. */
  status(spec: MachineSpec): Promise<MachineStatus>
  init(spec: MachineSpec): Promise<void>
  /** @throws RefusedError (exit 3) when the machine cannot run beside another one. */
  start(spec: MachineSpec): Promise<void>
  stop(spec: MachineSpec): Promise<void>
  rm(spec: MachineSpec): Promise<void>
  /**
   * Environment for engine clients (`CONTAINER_HOST`, `DOCKER_HOST`; empty for the host's default
   * engine), without starting anything; null when the machine is not running, so there is no
   * engine to reach (read and teardown verbs have nothing to do).
   * @throws OperationError (exit 1) when the machine says it runs but its socket does not answer.
   */
  socketEnv(spec: MachineSpec): Promise<Record<string, string> | null>
}

export interface StackContainer {
  service: string
  container: string
  state: string
  ports: Array<{host: number; container: number}>
  /** Set for a container that ran and stopped (`exited`): its exit code. */
  exitCode?: number
}

/** What a box is made from (DESIGN.md §4.2): computed in core from the targeted checkout's config. */
export interface BoxSpec {
  /** `[box] image`, else yard's default image (DESIGN.md §8). */
  image: string
  /** The environment of DESIGN.md §3.5 plus `YARD_IN_BOX=1`. */
  env: Record<string, string>
  /** Host paths mounted read-write at their own paths: the main checkout and the worktrees root (`[box] mounts = "all"`). */
  mounts: string[]
  /** Host paths mounted read-only at their own paths; a `mounts` path below one stays writable (`[box] mounts = "worktree"`). */
  readOnly?: string[]
}

/** The dev container of one checkout: an optional capability of a stack backend (DESIGN.md §4.2). */
export interface BoxCapability {
  /** Creates and starts the box; a running box is left as it is. Resolves true when it started one. */
  up(target: Target, spec: BoxSpec): Promise<boolean>
  /** Removes the box; returns what went (empty: nothing ran). Works from the Target alone. */
  down(target: Target): Promise<string[]>
  ps(target: Target): Promise<StackContainer[]>
  /**
   * Runs argv in the box, in the checkout's directory; resolves with the command's exit code
   * (125/126/127 from the engine as `podman exec` gives them). `tty`: attach a terminal that
   * starts at the caller's size and follows resizes.
   * @throws OperationError (exit 1) when the box is not running, saying to run `yard box up`.
   */
  exec(target: Target, argv: string[], options: {tty: boolean}): Promise<number>
}

/** What `up` and `logs` need beyond the Target: the targeted checkout's stack config (DESIGN.md §4.2). */
export interface StackSpec {
  /** The targeted checkout's compose files, absolute (never main's): `[stack] files` or the default file found; empty when only `COMPOSE_FILE` names them. */
  files: string[]
  /** `[stack] provider`: `auto` or a provider id (compose-provider.ts). */
  provider: string
  /** The environment of DESIGN.md §3.5 for the target. */
  env: Record<string, string>
  /** The same for the main checkout. */
  mainEnv: Record<string, string>
  /** `[stack] files` as configured (relative to the checkout), undefined when discovery applies. */
  configuredFiles?: string[]
  /** Where `[stack] files` was set, for errors. */
  configuredOrigin?: string
  /** `[stack] profiles`: enabled besides `COMPOSE_PROFILES`. */
  profiles?: string[]
  /** `[stack] external`: a worktree's `external: true` volumes and networks (default `refuse`). */
  external?: 'refuse' | 'per-checkout' | 'shared'
  /** `[stack] allow-shared`: services that may stay shared (`network_mode: host`) in a worktree. */
  allowShared?: string[]
  /**
   * An untrusted worktree's checkout (docs/worktrees.md, "Untrusted worktrees"): a backend that
   * reads files on the host for the stack reads none outside it, and interpolates from `env`
   * only, never the host's environment (whose tokens would reach the containers).
   */
  confine?: string
}

/**
 * A host port a stack's compose file publishes that no `[ports]` key gives, as the target
 * publishes it (DESIGN.md §4.2; the port rule of docs/stacks.md).
 */
export interface ImplicitPort {
  service: string
  /** `compose:<service>:<literal host port or range>`. */
  source: string
  /** The variable `yard env` exports the host port as (`YARD_PORT_<SERVICE>_<PORT>`). */
  variable: string
  /** The host port or range as the file writes it (`80`, `8000-8010`). */
  literal: string
  /** The host port this target publishes (the first of a range). */
  host: number
  /** The last host port of a range. */
  hostEnd?: number
  hostIp?: string
  /** `tcp` unless the file says otherwise. */
  protocol: string
}

/** One line of the isolation report (DESIGN.md §4.2, docs/stacks.md). */
export interface StackReportEntry {
  /** `rewrite`: changed in the rendered file; `refused`: up stops (exit 3); `shared`: stays shared by every checkout; `warning`. */
  kind: 'rewrite' | 'refused' | 'shared' | 'warning'
  /** The service, `volumes.<key>` / `networks.<key>` / `secrets.<key>` / `configs.<key>`, or null. */
  service: string | null
  detail: string
  action: string
}

/** What a stack would run for a target, computed without starting anything (`yard up --dry-run`). */
export interface StackPlan {
  project: string
  /** Every compose file read, absolute. */
  files: string[]
  /** The rendered compose file as an object. */
  compose: Record<string, unknown>
  /** The rendered compose file's text, when the backend writes one. */
  rendered?: string
  report: StackReportEntry[]
  ports: ImplicitPort[]
}

/** What `up` gives back when the backend renders its stack: the plan and what runs. */
export interface StackUpResult extends StackPlan {
  services: StackContainer[]
}

/** What `psAll` gives for one project: its containers as `ps` and `box.ps` give them. */
export interface ProjectContainers {
  stack: StackContainer[]
  /** The box's container (empty: no box, or a backend without boxes). */
  box: StackContainer[]
}

/** One checkout's compose project (DESIGN.md §4.2). */
/** What `yard logs` asks of a stack backend (see `StackBackend.logs`). */
export interface StackLogsOptions {
  services: string[]
  follow: boolean
  tail?: number
  since?: string
  timestamps?: boolean
}

export interface StackBackend {
  readonly kind: 'stack'
  readonly id: string
  /**
   * Starts the project: refuses (RefusedError, exit 3) a project name owned by another checkout
   * and busy host ports; a project already running is left as it is.
   */
  up(target: Target, spec: StackSpec): Promise<void | StackUpResult>
  /** Removes the project's containers and networks, keeps volumes; returns what went. Target alone. */
  down(target: Target): Promise<string[]>
  /** Removes what `down` removes plus the project's volumes; returns what went (or would go). Target alone. */
  nuke(target: Target, options: {dryRun: boolean}): Promise<string[]>
  ps(target: Target): Promise<StackContainer[]>
  /**
   * The services' logs on stdout, every line led by its service (`web | …`, as compose prints).
   * `tail`: only the last N lines of each; `since`: from this time on (a timestamp or a duration
   * such as `10m`, as `podman logs --since`); `timestamps`: each line with its time. Backends
   * written before these options may ignore them.
   */
  logs(target: Target, spec: StackSpec, options: StackLogsOptions): Promise<void>
  readonly box?: BoxCapability
  /**
   * Optional: `ps` and `box.ps` of every project of one main checkout at once — main's and every
   * worktree's, all of `main.owner` — keyed by project name (`<prefix>` or `<prefix>-<name>`); a
   * project with no containers may be left out. For the dashboard (DESIGN.md §6), which asks
   * about 50 checkouts every 2 s: one engine call instead of two per checkout. Without it, core
   * calls `ps` and `box.ps` per target, so backends written before it keep working.
   */
  psAll?(main: Target): Promise<Record<string, ProjectContainers>>
  /**
   * Optional: the last `lines` lines of the project's logs, every service, oldest first, each
   * line starting with its service name; captured, never written to the terminal. For the
   * dashboard's detail pane (DESIGN.md §6), which says "no recent logs from this backend"
   * without it. Resolves [] when nothing runs.
   */
  recentLogs?(target: Target, options: {lines: number}): Promise<string[]>
  /**
   * Optional: what `up` would run, without starting or creating anything — the rendered compose
   * file, the isolation report and the implicit host ports (DESIGN.md §4.2). For `yard up
   * --dry-run`, `yard ports`, `yard env` and `yard doctor`; without it they show `[ports]` only.
   * Resolves undefined when the checkout has no compose file.
   * @throws InputError (exit 2) for compose files that cannot be read.
   */
  plan?(target: Target, spec: StackSpec): Promise<StackPlan | undefined>
}

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
  /** Its url with relative urls resolved against the superproject's upstream url (no credentials): what git fetches it from. */
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
  /** The credentials prefix (`yard cluster credentials`) that served a remote url, or null when none matched. Absent: not reported. */
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
   * failed list or watch of an outage (retried by itself, with backoff). Optional: a demand without it is read by polling.
   */
  watch?(options: {signal: AbortSignal; onChange: () => void; onError: (error: unknown) => void}): Promise<void>
  /** Writes this node's entry of one repository's status, and nothing else. */
  report(key: string, status: CacheNodeStatus): Promise<void>
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

export interface SandboxSummary {
  name: string
  project: string
  runtime: string
  phase: string
  offset: number
  /** The node the pod was scheduled on (a cluster runtime); undefined before scheduling or on podman. */
  node?: string
  /** `warm` when the sandbox was claimed from a warm pool, `cold` when its pod was made for it (undefined: the backend does not say). */
  start?: 'warm' | 'cold'
}

/** One repository of a sandbox: `--repo [SLOT=]URL[#REF]` resolved by core (DESIGN.md §5.2). */
export interface SandboxRepo {
  /** The directory `/work/<slot>/` it occupies. */
  slot: string
  /** The url as the user wrote it: origin's push url inside the pod. */
  url: string
  /** The base after `#`, or null for origin/HEAD. */
  ref: string | null
  identity: string
  /** The cache key: mounted read-only at `/repos/<key>`. */
  key: string
  /**
   * The caches of its submodules, nested ones included (DESIGN.md §5.2): each mounted read-only
   * at `/repos/<key>`, and attach has git fetch `url` from there. Absent: none known.
   */
  submodules?: Array<{url: string; key: string}>
}

/** What core hands `create` beyond the Target (DESIGN.md §5.2). */
export interface SandboxSpec {
  /** `podman` or `kubernetes` (`[cluster] runtime`, `--runtime`). */
  runtime: string
  image: string
  /** The directory holding the caches where the pod runs (host for podman, node for kubernetes). */
  cacheRoot: string
  repos: SandboxRepo[]
  /** The branch attached at create: `yard exec --sandbox NAME` runs in its directory. */
  branch: string
  /** `[ports]` bases, the container ports; the host ports are the Target's. */
  portBases: Record<string, number>
}

/** One forwarded port (DESIGN.md §3.4): local `base + offset` → container port `base`. */
export interface SandboxPortForward {
  /** The `[ports]` key. */
  key: string
  local: number
  container: number
}

/** A sandbox as its runtime reports it: labels and the spec it was made from are the truth. */
export interface SandboxRecord extends SandboxSummary {
  owner: string
  spec: SandboxSpec
}

/** One worktree inside a sandbox (`/work/<slot>/<dir>`, `default` included). */
export interface SandboxWorktree {
  slot: string
  /** The branch checked out, or null when detached. */
  branch: string | null
  path: string
  /** `git status --porcelain` lines: modified and untracked files. */
  dirty: string[]
  /** Local branches of this worktree with commits not on origin, as `branch (n commits)`. */
  unpushed: string[]
  /** HEAD's commit, or null when it has none. */
  head?: string | null
  /** When its `.gitattributes` routes files through LFS: how many are still pointers (git lfs ls-files). */
  lfsPointers?: number
}

/**
 * A ref holding commits of a sandbox that neither its cache nor origin's remote-tracking refs
 * have (DESIGN.md §5.2, `rm`): what `rm` counts as unsaved and `rm --force` bundles.
 */
export interface SandboxUnsavedRef {
  slot: string
  /**
   * Its name in the bundle: `refs/heads/<branch>`; `refs/yard/sandbox/<slot>/detached-<dir>` for
   * a detached HEAD; `refs/yard/sandbox/<slot>/stash` for `stash@{0}`, `…/stash-<n>` for `stash@{n}`.
   */
  ref: string
  commit: string
  /** Commits reachable from it that the cache lacks (a stash entry: its own commit counts). */
  commits: number
  /** For messages: `/work/app/feat: feat/login (2 commits)`, `…: detached HEAD 1a2b3c4 (1 commit)`, `…: stash@{0} (On main: wip)`. */
  what: string
}

/** Everything of a sandbox that exists only in its pod: dirty worktrees and unsaved refs. */
export interface SandboxUnsaved {
  worktrees: SandboxWorktree[]
  refs: SandboxUnsavedRef[]
}

/** What `save` wrote: host files, per slot its bundle and its patches. */
export interface SandboxSaved {
  files: string[]
  /** One bundle per slot with unsaved refs: those refs, and only the objects the cache lacks. */
  bundles: Array<{slot: string; file: string; refs: string[]}>
  /** One patch per dirty worktree, against `head` (binary, untracked files included). */
  patches: Array<{slot: string; worktree: string; branch: string | null; head: string; file: string}>
}

/** What `attach` made (DESIGN.md §5.2): per slot, its default checkout and the branch worktree. */
export interface SandboxAttachResult {
  branch: string
  slots: Array<{
    slot: string
    default: string
    path: string
    created: boolean
    /** Submodules of the checkouts this attach made (pod paths): initialised, and those left uninitialised with why. */
    submodules?: {initialised: string[]; failed: Array<{path: string; why: string}>}
  }>
  /** Per slot whose cache could not be brought to the remote's now: why, and since when it is stale. */
  stale?: Record<string, string>
}

/** Sandboxes on a runtime (DESIGN.md §5.2). */
export interface SandboxBackend {
  readonly kind: 'sandbox'
  readonly id: string
  /** The runtimes it can use (`podman`, `kubernetes`). */
  readonly runtimes: readonly string[]
  /** Every sandbox of the prefix on a runtime (default: its first); must answer within `timeoutMs` or reject. */
  list(prefix: string, options: {timeoutMs: number; runtime?: string}): Promise<SandboxSummary[]>
  /** The Pod object a sandbox gets (DESIGN.md §5.2); pure. */
  manifest(target: Target, spec: SandboxSpec): Record<string, unknown>
  /** The sandbox named by the Target's project, or undefined. */
  get(target: Target, runtime: string): Promise<SandboxRecord | undefined>
  /** Starts the pod; the caches must be present and leased. @throws OperationError when the runtime fails (nothing left running). */
  create(target: Target, spec: SandboxSpec): Promise<void>
  /**
   * Idempotent attach inside the pod; `gitIdentity` is the host user's; `fetchThroughSeconds` is
   * `[cache] fetch-through-seconds` (how long a fetch in the pod waits for the cache's refresh).
   * @throws InputError for a branch directory clash.
   */
  attach(sandbox: SandboxRecord, request: {branch: string; gitIdentity: {name?: string; email?: string}; fetchThroughSeconds?: number}): Promise<SandboxAttachResult>
  /** Every worktree of every slot with its unsaved work. */
  worktrees(sandbox: SandboxRecord): Promise<SandboxWorktree[]>
  /**
   * `yard sandbox pull` (DESIGN.md §5.2): a git bundle of the branch checked out in
   * `/work/<slot>/<directory>` written to the host file `file`. Optional: a backend without it
   * cannot pull.
   * @throws InputError (exit 2) when that worktree does not exist or is detached.
   */
  bundleBranch?(sandbox: SandboxRecord, place: {slot: string; directory: string}, file: string): Promise<{branch: string; commit: string}>
  /**
   * Optional, with bundleBranch: records in the sandbox that `commit` of `branch` is now kept on
   * the host (`yard sandbox pull` fetched it), so `unsaved` and `rm` no longer count it.
   */
  markPulled?(sandbox: SandboxRecord, place: {slot: string; directory: string}, branch: string, commit: string): Promise<void>
  /** The worktrees and every ref (branch, detached HEAD, stash) holding commits the cache lacks. */
  unsaved(sandbox: SandboxRecord): Promise<SandboxUnsaved>
  /**
   * Saves `work` into the host directory `dir`: per slot with unsaved refs a bundle of those refs
   * without what the cache has, and a patch per dirty worktree. Nothing when `work` is empty.
   */
  save(sandbox: SandboxRecord, work: SandboxUnsaved, dir: string): Promise<SandboxSaved>
  /** Deletes the pod. */
  remove(sandbox: SandboxRecord): Promise<void>
  /**
   * For a sandbox whose pod is gone (removed outside yard): what the runtime still holds of it
   * (podman: the kept annotations, the work volume), removed unless `dryRun`. Undefined when the
   * pod exists or the runtime cannot tell. Optional: without it, such a sandbox's leftovers stay.
   */
  clearLost?(project: string, runtime: string, options: {dryRun: boolean}): Promise<string[] | undefined>
  /**
   * Why a cache borrower of this backend is provably gone (`sandbox <project>` whose pod no longer
   * exists), or undefined: `yard cache evict` asks it (a BorrowerProbe). Optional.
   */
  borrowerGone?(borrower: CacheBorrower): Promise<string | undefined>
  /** Runs argv in `/work/<slot>/<directory>`; resolves with its exit code (125/126/127 from the runtime). */
  exec(sandbox: SandboxRecord, place: {slot: string; directory: string}, argv: string[], options: {tty: boolean}): Promise<number>
  /**
   * `yard sandbox forward` (DESIGN.md §5.2): null when the runtime publishes the ports itself
   * (podman); else the forwarding command's argv, run on this terminal until it ends (Ctrl-C)
   * unless `dryRun`, with its exit code (null when not run). Optional for plugins.
   */
  forward?(sandbox: SandboxRecord, forwards: SandboxPortForward[], options: {dryRun: boolean}): Promise<{argv: string[]; exitCode: number | null} | null>
  /**
   * What a node's cache agent serves in cluster mode (`yard cache agent --kubernetes`): the
   * cluster's repositories and the caches mounted by pods on `node` under `cacheRoot`.
   * Optional: a backend without a cluster runtime leaves it out.
   */
  cacheDemand?(options: {node: string; cacheRoot: string; namespace: string; context?: string}): Promise<CacheDemand>
  /**
   * Per cache key, each node's state of that cache as the runtime's nodes report it (a cluster:
   * the Repos' status), for the keys given; undefined when the runtime's caches are this
   * machine's (podman: core reads the cache backend). Optional.
   */
  cacheStates?(runtime: string, keys: string[]): Promise<Record<string, Record<string, CacheNodeStatus>> | undefined>
  /** Warm pool pods (docs/sandboxes.md, "Warm pool"; sandbox-pool.ts). Optional: without it every create is cold. */
  readonly pool?: import('./sandbox-pool-contract.js').SandboxPoolSupport
  /**
   * The cluster's one-time setup and its health (`yard cluster install|status`, DESIGN.md §5.2),
   * for the cluster of BackendContext.cluster. Optional: a backend without a cluster runtime
   * leaves it out.
   */
  clusterSetup?(): Promise<SandboxClusterSetup>
}

/** What `yard cluster install` did to one object. */
export interface ClusterInstallStep {
  kind: string
  name: string
  namespace?: string
  action: 'created' | 'updated' | 'unchanged'
}

/** `yard cluster status` (DESIGN.md Appendix A). Times are ISO-8601. */
export interface ClusterStatus {
  context: string
  namespace: string
  /** The cache agent's DaemonSet, or null when it is not installed. */
  agent: {image: string; desired: number; ready: number} | null
  /** The agent's pods, one per node it runs on. */
  agents: Array<{node: string | null; pod: string; phase: string; ready: boolean; restarts: number}>
  /** Every Repo with each node's state of its cache (nodes sorted by name). */
  repos: Array<{key: string; url: string; askedAt: string | null; nodes: Array<{node: string; present: boolean; lastFetched: string | null; lastError: string | null; credentials: string | null}>}>
}

/** One entry of the cluster's repository credentials as listed: never the secret itself. */
export interface ClusterCredential {
  /** The url prefix it serves, e.g. `https://github.com/acme/`. */
  prefix: string
  kind: 'token' | 'ssh'
  /** The https user name; null for ssh. */
  username: string | null
  /** Whether an ssh entry carries its own known hosts. */
  knownHosts: boolean
}

/** What `yard cluster credentials set` stores for one prefix. */
export type ClusterCredentialInput =
  | {prefix: string; kind: 'token'; username: string; token: string}
  | {prefix: string; kind: 'ssh'; key: string; knownHosts?: string}

/** A Repo as `yard cluster repo list` shows it. */
export interface ClusterRepo {
  key: string
  url: string
  refreshInterval: string | null
  /** Declared ahead (`yard cluster repo add`): every node clones it before any sandbox needs it. */
  prefetch: boolean
  /** Nodes whose entry says the cache is present. */
  present: string[]
}

/** A sandbox backend's cluster setup (SandboxBackend.clusterSetup). */
export interface SandboxClusterSetup {
  /** The objects `install` applies, in order, as plain Kubernetes objects; needs no cluster. */
  objects(options: {image: string; version: string}): Record<string, unknown>[]
  /**
   * Creates each object, or updates it when it differs; a second run changes nothing.
   * @throws InputError (exit 2) without a usable kubeconfig; OperationError (exit 1) when the
   *   cluster refuses or cannot be reached (the objects done so far stay).
   */
  install(options: {image: string; version: string; onStep?: (step: ClusterInstallStep) => void}): Promise<ClusterInstallStep[]>
  /** @throws InputError, OperationError as `install`. */
  status(): Promise<ClusterStatus>
  /**
   * Creates or replaces the credentials of one url prefix in the cluster's credentials Secret.
   * @returns whether the Secret was created or an entry added or replaced, and the Secret's name.
   */
  setCredential?(input: ClusterCredentialInput): Promise<{action: 'created' | 'updated'; secret: string}>
  /** Every credentials entry, without its secret. */
  listCredentials?(): Promise<ClusterCredential[]>
  /** Removes one prefix's entry; false when there was none. */
  removeCredential?(prefix: string): Promise<boolean>
  /**
   * Declares repositories ahead (`yard cluster repo add`): a Repo per key with `prefetch`, so
   * every node's agent clones it before any sandbox exists. An existing Repo gets `prefetch`.
   */
  addRepos?(repos: Array<{key: string; url: string}>, options: {refreshInterval?: string}): Promise<Array<{key: string; url: string; action: 'created' | 'updated' | 'unchanged'}>>
  listRepos?(): Promise<ClusterRepo[]>
  /** Deletes Repos (the nodes evict once no pod mounts them); per key whether it existed and which pods still mount it. */
  removeRepos?(keys: string[]): Promise<Array<{key: string; removed: boolean; mountedBy: string[]}>>
}

export type Backend = MachineBackend | StackBackend | CacheBackend | SandboxBackend

/** What a `yard:backends` hook returns, one per backend. */
export interface BackendFactory<B extends Backend = Backend> {
  kind: B['kind']
  /** Unique per kind; the value of `[<kind>] backend` that selects it. */
  id: string
  /** The contract version it implements: `1`, `"1"` or `"1.x"`; only the major is compared. */
  contract: number | string
  description?: string
  create(context: BackendContext): B | Promise<B>
}

/** The result of one plugin's `yard:backends` hook. */
export type BackendsHookResult = BackendFactory[]
