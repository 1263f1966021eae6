/**
 * The sandbox contract (DESIGN.md §5.2): sandboxes on a runtime, and its cluster setup.
 * Part of the plugin SDK, `@yard-dev/cli/backend` (src/sdk/index.ts).
 */
import type {CacheBorrower, CacheDemand, CacheNodeStatus} from './cache.js'
import type {SandboxPoolSupport} from './sandbox-pool.js'
import type {Target} from './target.js'

export interface SandboxSummary {
  name: string
  project: string
  runtime: string
  phase: string
  offset: number
  /** The node the pod was scheduled on (a cluster runtime); undefined before scheduling or on podman. */
  node?: string
  /** The owner label of the pod (the checkout that made it), when the runtime's listing has it. */
  owner?: string
  /**
   * `warm` when the sandbox was claimed from a warm pool, `cold` when its pod was made for it
   * (undefined: the backend does not say).
   */
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
  /**
   * For messages: `/work/app/feat: feat/login (2 commits)`, `…: detached HEAD 1a2b3c4 (1 commit)`,
   * `…: stash@{0} (On main: wip)`.
   */
  what: string
}

/** Everything of a sandbox that exists only in its pod: dirty worktrees and unsaved refs. */
export interface SandboxUnsaved {
  worktrees: SandboxWorktree[]
  refs: SandboxUnsavedRef[]
  /**
   * Branches `yard sandbox pull` brought to the host's main checkout (as
   * `refs/remotes/sandbox/<name>/<branch>`), at the commit pulled: kept there, so not unsaved, but
   * what the cache lacks of them comes back from that checkout, not from a bundle. Absent from a
   * backend that cannot pull.
   */
  pulled?: Array<{slot: string; branch: string; commit: string}>
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

/**
 * Sandboxes on a runtime (DESIGN.md §5.2): the required verbs, plus the optional capabilities
 * below, which core asks for by member (`backend.forward?.(…)`) and does without.
 */
export interface SandboxBackend
  extends
    Partial<SandboxPull>,
    Partial<SandboxLostCleanup>,
    Partial<SandboxBorrowers>,
    Partial<SandboxForwarding>,
    Partial<SandboxClusterRuntime>,
    Partial<SandboxRecorded> {
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
  /**
   * Starts the pod; the caches must be present and leased. @throws OperationError when the runtime
   * fails (nothing left running).
   */
  create(target: Target, spec: SandboxSpec): Promise<void>
  /**
   * Idempotent attach inside the pod; `gitIdentity` is the host user's; `fetchThroughSeconds` is
   * `[cache] fetch-through-seconds` (how long a fetch in the pod waits for the cache's refresh).
   * @throws InputError for a branch directory clash.
   */
  attach(
    sandbox: SandboxRecord,
    request: {branch: string; gitIdentity: {name?: string; email?: string}; fetchThroughSeconds?: number},
  ): Promise<SandboxAttachResult>
  /**
   * Warm pool pods (docs/sandboxes.md, "Warm pool"; core/sandbox/pool.ts). Optional: without it
   * every create is cold.
   */
  readonly pool?: SandboxPoolSupport
  /** Every worktree of every slot with its unsaved work. */
  worktrees(sandbox: SandboxRecord): Promise<SandboxWorktree[]>
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
   * Runs argv in `/work/<slot>/<directory>`; resolves with its exit code (125/126/127 from the
   * runtime). `gone`: the error to throw when the runtime's answer says the pod no longer exists
   * (for a record from `recorded`, which no engine call confirmed).
   */
  exec(
    sandbox: SandboxRecord,
    place: {slot: string; directory: string},
    argv: string[],
    options: {tty: boolean; gone?: () => Error},
  ): Promise<number>
}

/**
 * Optional capability: the sandbox as this host recorded it when it made or claimed the pod,
 * read without asking the runtime, so `yard exec` makes one engine call (the exec itself) on its
 * way. Undefined when there is no whole record (the runtime is then asked with `get`).
 * @throws RefusedError when the record names another checkout as owner (as `get`).
 */
export interface SandboxRecorded {
  recorded(target: Target, runtime: string): Promise<SandboxRecord | undefined>
}

/** Optional capability: `yard sandbox pull` (DESIGN.md §5.2); a backend without it cannot pull. */
export interface SandboxPull {
  /**
   * `yard sandbox pull` (DESIGN.md §5.2): a git bundle of the branch checked out in
   * `/work/<slot>/<directory>` written to the host file `file`. Optional: a backend without it
   * cannot pull.
   * @throws InputError (exit 2) when that worktree does not exist or is detached.
   */
  bundleBranch(
    sandbox: SandboxRecord,
    place: {slot: string; directory: string},
    file: string,
  ): Promise<{branch: string; commit: string}>
  /**
   * Optional, with bundleBranch: records in the sandbox that `commit` of `branch` is now kept on
   * the host (`yard sandbox pull` fetched it), so `unsaved` and `rm` no longer count it; `null`
   * drops that record (the host no longer holds it), so they count it again.
   */
  markPulled(
    sandbox: SandboxRecord,
    place: {slot: string; directory: string},
    branch: string,
    commit: string | null,
  ): Promise<void>
}

/** Optional capability: clearing what a pod removed outside yard left behind. */
export interface SandboxLostCleanup {
  /**
   * For a sandbox whose pod is gone (removed outside yard), or only its workspace container: what
   * the runtime still holds of it (podman: the pod, the kept annotations, the work volume),
   * removed unless `dryRun`. `owner` is the checkout asking (Target.owner): what names another
   * owner is refused. Undefined when the runtime cannot tell. Optional: without it, such a
   * sandbox's leftovers stay.
   * @throws RefusedError (exit 3) when the pod or its record belongs to another checkout.
   */
  clearLost(project: string, runtime: string, options: {dryRun: boolean; owner?: string}): Promise<string[] | undefined>
}

/** Optional capability: telling `yard cache evict` which of its borrowers are gone. */
export interface SandboxBorrowers {
  /**
   * Why a cache borrower of this backend is provably gone (`sandbox <project>` whose pod no longer
   * exists), or undefined: `yard cache evict` asks it (a BorrowerProbe). Optional.
   */
  borrowerGone(borrower: CacheBorrower): Promise<string | undefined>
}

/** Optional capability: `yard sandbox forward` on a runtime that does not publish ports itself. */
export interface SandboxForwarding {
  /**
   * `yard sandbox forward` (DESIGN.md §5.2): null when the runtime publishes the ports itself
   * (podman); else the forwarding command's argv, run on this terminal until it ends (Ctrl-C)
   * unless `dryRun`, with its exit code (null when not run). Optional for plugins.
   */
  forward(
    sandbox: SandboxRecord,
    forwards: SandboxPortForward[],
    options: {dryRun: boolean},
  ): Promise<{argv: string[]; exitCode: number | null} | null>
}

/** Optional capability: a cluster runtime (DESIGN.md §5.2): the node agents' demand, cache states, setup. */
export interface SandboxClusterRuntime {
  /**
   * What a node's cache agent serves in cluster mode (`yard cache agent --kubernetes`): the
   * cluster's repositories and the caches mounted by pods on `node` under `cacheRoot`.
   * Optional: a backend without a cluster runtime leaves it out.
   */
  cacheDemand(options: {node: string; cacheRoot: string; namespace: string; context?: string}): Promise<CacheDemand>
  /**
   * Per cache key, each node's state of that cache as the runtime's nodes report it (a cluster:
   * the Repos' status), for the keys given; undefined when the runtime's caches are this
   * machine's (podman: core reads the cache backend). Optional.
   */
  cacheStates(runtime: string, keys: string[]): Promise<Record<string, Record<string, CacheNodeStatus>> | undefined>
  /**
   * The cluster's one-time setup and its health (`yard cluster install|status`, DESIGN.md §5.2),
   * for the cluster of BackendContext.cluster. Optional: a backend without a cluster runtime
   * leaves it out.
   */
  clusterSetup(): Promise<SandboxClusterSetup>
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
  repos: Array<{
    key: string
    url: string
    askedAt: string | null
    nodes: Array<{
      node: string
      present: boolean
      lastFetched: string | null
      lastError: string | null
      credentials: string | null
    }>
  }>
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
  objects(options: {image: string; version: string}): Array<Record<string, unknown>>
  /**
   * Creates each object, or updates it when it differs; a second run changes nothing.
   * @throws InputError (exit 2) without a usable kubeconfig; OperationError (exit 1) when the
   *   cluster refuses or cannot be reached (the objects done so far stay).
   */
  install(options: {
    image: string
    version: string
    onStep?: (step: ClusterInstallStep) => void
  }): Promise<ClusterInstallStep[]>
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
  addRepos?(
    repos: Array<{key: string; url: string}>,
    options: {refreshInterval?: string},
  ): Promise<Array<{key: string; url: string; action: 'created' | 'updated' | 'unchanged'}>>
  listRepos?(): Promise<ClusterRepo[]>
  /**
   * Deletes Repos (the nodes evict once no pod mounts them); per key whether it existed and which
   * pods still mount it.
   */
  removeRepos?(keys: string[]): Promise<Array<{key: string; removed: boolean; mountedBy: string[]}>>
}
