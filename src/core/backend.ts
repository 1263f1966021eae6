/**
 * Backend contracts, version 1 (DESIGN.md §2, §7). This module is the plugin SDK, exported as
 * `@yard-dev/cli/backend`: a plugin's `yard:backends` hook returns `BackendFactory` objects.
 *
 * Identity is computed once in core and handed to every backend as a `Target`; no backend
 * recomputes a name, an offset or a port.
 */
import type {ProcessRunner} from './process.js'

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

/** A container machine: the host's podman, a podman VM, or a plugin's (DESIGN.md §4.3). */
export interface MachineBackend {
  readonly kind: 'machine'
  readonly id: string
  status(): Promise<MachineStatus>
  init(options: {mounts: string[]}): Promise<void>
  start(): Promise<void>
  stop(): Promise<void>
  rm(): Promise<void>
  /** Environment for engine clients (`CONTAINER_HOST`, `DOCKER_HOST`), without starting anything. */
  socketEnv(): Promise<Record<string, string>>
}

export interface StackContainer {
  service: string
  container: string
  state: string
  ports: Array<{host: number; container: number}>
}

/** What a box is made from (DESIGN.md §4.2): computed in core from the targeted checkout's config. */
export interface BoxSpec {
  /** `[box] image`, else yard's default image (DESIGN.md §8). */
  image: string
  /** The environment of DESIGN.md §3.5 plus `YARD_IN_BOX=1`. */
  env: Record<string, string>
  /** Host paths mounted at their own paths: the main checkout and the worktrees root. */
  mounts: string[]
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
  /** The targeted checkout's compose files, absolute (never main's); never empty. */
  files: string[]
  /** `[stack] provider`: `auto` or a provider id (compose-provider.ts). */
  provider: string
  /** The environment of DESIGN.md §3.5 for the target. */
  env: Record<string, string>
  /** The same for the main checkout: `up` in a worktree warns about host ports equal in both. */
  mainEnv: Record<string, string>
}

/** One checkout's compose project (DESIGN.md §4.2). */
export interface StackBackend {
  readonly kind: 'stack'
  readonly id: string
  /**
   * Starts the project: refuses (RefusedError, exit 3) a project name owned by another checkout
   * and busy host ports; a project already running is left as it is.
   */
  up(target: Target, spec: StackSpec): Promise<void>
  /** Removes the project's containers and networks, keeps volumes; returns what went. Target alone. */
  down(target: Target): Promise<string[]>
  /** Removes what `down` removes plus the project's volumes; returns what went (or would go). Target alone. */
  nuke(target: Target, options: {dryRun: boolean}): Promise<string[]>
  ps(target: Target): Promise<StackContainer[]>
  logs(target: Target, spec: StackSpec, options: {services: string[]; follow: boolean}): Promise<void>
  readonly box?: BoxCapability
}

/** A bare git cache per repository identity (DESIGN.md §5.1). */
export interface CacheBackend {
  readonly kind: 'cache'
  readonly id: string
  /** Clone when missing, adopt when found; returns the cache key. */
  add(url: string): Promise<string>
  fetch(url: string): Promise<void>
  maintain(url: string, options: {force: boolean}): Promise<void>
  evict(url: string, options: {dryRun: boolean}): Promise<string[]>
}

export interface SandboxSummary {
  name: string
  project: string
  runtime: string
  phase: string
  offset: number
}

/** Sandboxes on a runtime (DESIGN.md §5.2). */
export interface SandboxBackend {
  readonly kind: 'sandbox'
  readonly id: string
  /** Every sandbox of the prefix; must answer within `timeoutMs` or reject. */
  list(prefix: string, options: {timeoutMs: number}): Promise<SandboxSummary[]>
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
