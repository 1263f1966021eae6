/**
 * The machine contract (DESIGN.md §4.3): where the project's engine runs.
 * Part of the plugin SDK, `@yard-dev/cli/backend` (src/sdk/index.ts).
 */

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
  /**
   * The `mounts` mounted read-only (an untrusted worktree's machine: the git common dir). A backend
   * that cannot mount read-only must refuse such a spec.
   */
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
