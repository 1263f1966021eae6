/**
 * The `native` machine (DESIGN.md §4.3): no VM, the host's podman. There is nothing to create,
 * start or stop; `status` says whether the engine answers.
 */
import os from 'node:os'

import type {MachineBackend, MachineStatus} from '../../sdk/machine.js'
import type {BackendContext} from '../../sdk/target.js'

export class NativeMachine implements MachineBackend {
  readonly kind = 'machine'
  readonly id = 'native'
  /**
   * There is no VM to give an untrusted worktree: it runs on the host's podman too, and core
   * narrows what it reaches instead (its box mounts exactly the worktree and the git dir
   * read-only; compose binds outside them are refused; docs/worktrees.md).
   */
  readonly worktreeMachines = true

  constructor(private readonly context: BackendContext) {}

  /**
   * `running` when `podman info` answers within 15 s, `unresponsive` when podman is installed
   * but does not, `absent` when it is not installed. cpus and memory are the host's.
   */
  async status(): Promise<MachineStatus> {
    const info = await this.context.runner.run('podman', ['info', '--format', '{{.Host.Hostname}}'], {
      allowFailure: true,
      timeoutMs: 15_000,
      budget: 'engine probe',
    })
    const state = info.exitCode === 0 ? 'running' : info.exitCode === 127 ? 'absent' : 'unresponsive'
    return {
      backend: this.id,
      name: 'native',
      state,
      socket: null,
      mounts: [],
      cpus: os.cpus().length,
      memoryMiB: Math.floor(os.totalmem() / 1024 / 1024),
      diskGiB: null,
    }
  }

  /** Nothing to create: the host's podman is the machine. */
  async init(): Promise<void> {}
  async start(): Promise<void> {}
  async stop(): Promise<void> {}
  async rm(): Promise<void> {}

  /** The host's default engine: no socket variables. */
  async socketEnv(): Promise<Record<string, string>> {
    return {}
  }
}
