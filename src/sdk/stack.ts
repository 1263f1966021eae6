/**
 * The stack contract (DESIGN.md §4.2): one checkout's compose project, and its box.
 * Part of the plugin SDK, `@yard-dev/cli/backend` (src/sdk/index.ts).
 */
import type {Target} from './target.js'

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
  /**
   * Host paths mounted read-write at their own paths: the main checkout and the worktrees root
   * (`[box] mounts = "all"`).
   */
  mounts: string[]
  /**
   * Host paths mounted read-only at their own paths; a `mounts` path below one stays writable
   * (`[box] mounts = "worktree"`).
   */
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
  /**
   * The targeted checkout's compose files, absolute (never main's): `[stack] files` or the default
   * file found; empty when only `COMPOSE_FILE` names them.
   */
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
  /**
   * `rewrite`: changed in the rendered file; `refused`: up stops (exit 3); `shared`: stays shared
   * by every checkout; `warning`.
   */
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

/**
 * A stack backend: the required verbs, plus the optional capabilities below. Core asks for an
 * optional capability by its member (`stack.plan?.(…)`) and degrades without it, so backends
 * written before a capability keep working.
 */
export interface StackBackend
  extends Partial<StackBox>, Partial<StackPsAll>, Partial<StackRecentLogs>, Partial<StackPlanner> {
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
}

/** Optional capability: the checkout's dev container (DESIGN.md §4.2). */
export interface StackBox {
  readonly box: BoxCapability
}

/** Optional capability: every project of one main checkout in one engine call. */
export interface StackPsAll {
  /**
   * `ps` and `box.ps` of every project of one main checkout at once — main's and every
   * worktree's, all of `main.owner` — keyed by project name (`<prefix>` or `<prefix>-<name>`); a
   * project with no containers may be left out. For the dashboard (DESIGN.md §6), which asks
   * about 50 checkouts every 2 s: one engine call instead of two per checkout. Without it, core
   * calls `ps` and `box.ps` per target.
   */
  psAll(main: Target): Promise<Record<string, ProjectContainers>>
}

/** Optional capability: recent logs, captured. */
export interface StackRecentLogs {
  /**
   * The last `lines` lines of the project's logs, every service, oldest first, each line
   * starting with its service name; captured, never written to the terminal. For the
   * dashboard's detail pane (DESIGN.md §6), which says "no recent logs from this backend"
   * without it. Resolves [] when nothing runs.
   */
  recentLogs(target: Target, options: {lines: number}): Promise<string[]>
}

/** Optional capability: dry runs. */
export interface StackPlanner {
  /**
   * What `up` would run, without starting or creating anything — the rendered compose file, the
   * isolation report and the implicit host ports (DESIGN.md §4.2). For `yard up --dry-run`,
   * `yard ports`, `yard env` and `yard doctor`; without it they show `[ports]` only. Resolves
   * undefined when the checkout has no compose file.
   * @throws InputError (exit 2) for compose files that cannot be read.
   */
  plan(target: Target, spec: StackSpec): Promise<StackPlan | undefined>
}
