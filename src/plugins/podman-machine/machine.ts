/**
 * The `podman-machine` backend (DESIGN.md §4.3): one podman VM per project, created with exactly
 * two volumes, each mounted at its own path (the main checkout and the worktrees root), which
 * replace podman's default home mount. Podman runs one machine at a time on macOS, so `start`
 * refuses while another one runs. Everything above talks to the machine's API socket.
 */
import {promises as fs} from 'node:fs'

import type {MachineBackend, MachineSpec, MachineStatus} from '../../sdk/machine.js'
import type {RunOptions} from '../../sdk/process.js'
import type {BackendContext} from '../../sdk/target.js'

import {InputError, OperationError, RefusedError} from '../../sdk/errors.js'
import {shellQuote} from '../../sdk/shell.js'
import {
  type InspectedMachine,
  type ListedMachine,
  parseInspect,
  parseList,
  readMounts,
  socketAnswers,
} from './podman-json.js'

/** How long `podman machine init` may take: it may download the machine image. */
const INIT_BUDGET_MS = 30 * 60_000
const START_BUDGET_MS = 10 * 60_000
const STOP_BUDGET_MS = 2 * 60_000
const QUERY_BUDGET_MS = 30_000
/** How long a started machine's socket may take to answer, and how often it is tried. */
const SOCKET_WAIT_MS = 60_000
const SOCKET_POLL_MS = 250

/** podman's rule for machine names. */
const MACHINE_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/

export class PodmanMachine implements MachineBackend {
  readonly kind = 'machine'
  readonly id = 'podman-machine'
  /** podman runs one machine at a time (on macOS; yard treats every host alike). */
  readonly exclusive = true
  /** An untrusted worktree's machine is one more VM, its read-only mounts `--volume P:P:ro`. */
  readonly worktreeMachines = true

  constructor(private readonly context: BackendContext) {}

  private async podman(args: string[], options: RunOptions) {
    return this.context.runner.run('podman', ['machine', ...args], options)
  }

  private async list(): Promise<ListedMachine[]> {
    return parseList(
      (await this.podman(['list', '--format', 'json'], {timeoutMs: QUERY_BUDGET_MS, budget: 'podman machine list'}))
        .stdout,
    )
  }

  private async inspect(name: string): Promise<InspectedMachine | undefined> {
    const result = await this.podman(['inspect', name], {
      timeoutMs: QUERY_BUDGET_MS,
      budget: 'podman machine inspect',
      allowFailure: true,
    })
    return result.exitCode === 0 ? parseInspect(result.stdout) : undefined
  }

  /**
   * `absent` when podman lists no machine of that name; `running` when it runs (or starts) and
   * its API socket accepts a connection within 1 s, `unresponsive` when it does not; else
   * `stopped`. Mounts come from the machine's on-disk config. Starts nothing.
   * @throws OperationError (exit 1) when podman cannot be run.
   */
  async status(spec: MachineSpec): Promise<MachineStatus> {
    checkName(spec.name)
    const listed = (await this.list()).find((machine) => machine.name === spec.name)
    const absent: MachineStatus = {
      backend: this.id,
      name: spec.name,
      state: 'absent',
      socket: null,
      mounts: [],
      cpus: null,
      memoryMiB: null,
      diskGiB: null,
    }
    if (!listed) return absent
    const inspected = await this.inspect(spec.name)
    const up = listed.running || listed.starting
    const answers = up && inspected?.socketPath ? await socketAnswers(inspected.socketPath) : false
    return {
      ...absent,
      state: up ? (answers ? 'running' : 'unresponsive') : 'stopped',
      socket: inspected?.socketPath ? `unix://${inspected.socketPath}` : null,
      mounts: inspected?.configDir ? await readMounts(inspected.configDir, spec.name) : [],
      cpus: inspected?.cpus ?? null,
      memoryMiB: inspected?.memoryMiB ?? null,
      diskGiB: inspected?.diskGiB ?? null,
    }
  }

  /**
   * `podman machine init` with the configured sizes and one `--volume PATH:PATH` per mount
   * (`PATH:PATH:ro` for those in `readOnly`; and no other: giving `--volume` drops podman's
   * default home mount).
   * Creates a mount directory that does not exist yet (the worktrees root before the first worktree).
   * @throws InputError (exit 2) for a mount that is not absolute or holds a `:`.
   */
  async init(spec: MachineSpec): Promise<void> {
    checkName(spec.name)
    for (const mount of spec.mounts) {
      if (!mount.startsWith('/') || mount.includes(':')) {
        throw new InputError(`cannot mount ${mount} into the podman machine`, {
          why: 'a machine volume is written SOURCE:TARGET, so each path must be absolute and hold no ":"',
          fix: 'move the main checkout or the worktrees root ([worktrees] root in yard.toml) to such a path',
        })
      }
    }

    // The worktrees root may not exist yet; a VM cannot share a directory that does not.
    for (const mount of spec.mounts) await fs.mkdir(mount, {recursive: true})
    const volumes = spec.mounts.flatMap((mount) => [
      '--volume',
      `${mount}:${mount}${spec.readOnly?.includes(mount) ? ':ro' : ''}`,
    ])
    await this.podman(
      [
        'init',
        '--cpus',
        String(spec.cpus),
        '--memory',
        String(spec.memoryMiB),
        '--disk-size',
        String(spec.diskGiB),
        ...volumes,
        spec.name,
      ],
      {
        timeoutMs: INIT_BUDGET_MS,
        budget: 'podman machine init',
      },
    )
  }

  /**
   * Starts the machine and waits (up to 60 s) until its socket answers. A running machine is left
   * as it is.
   * @throws RefusedError (exit 3) while another podman machine runs (one VM at a time on macOS),
   *   naming it; OperationError (exit 1) when podman fails or the socket never answers.
   */
  async start(spec: MachineSpec): Promise<void> {
    checkName(spec.name)
    const machines = await this.list()
    const other = machines.find((machine) => machine.name !== spec.name && (machine.running || machine.starting))
    if (other) throw anotherRunning(other.name, spec.name, spec.worktree !== undefined)
    const self = machines.find((machine) => machine.name === spec.name)
    if (!self?.running && !self?.starting)
      await this.podman(['start', spec.name], {timeoutMs: START_BUDGET_MS, budget: 'podman machine start'})
    await this.waitForSocket(spec.name)
  }

  private async waitForSocket(name: string): Promise<void> {
    const deadline = Date.now() + SOCKET_WAIT_MS
    let socketPath: string | null | undefined
    for (;;) {
      socketPath = (await this.inspect(name))?.socketPath
      if (socketPath && (await socketAnswers(socketPath))) return
      if (Date.now() >= deadline) break
      await new Promise((resolve) => setTimeout(resolve, SOCKET_POLL_MS))
    }

    throw new OperationError(
      `podman machine ${name} started, but its API socket ${socketPath ?? '(none reported)'} did not answer within ${SOCKET_WAIT_MS / 1000} s`,
      {
        why: 'the VM booted without its podman service, or the socket forwarding failed',
        fix: `yard machine stop && yard machine start; if it persists: podman machine ssh ${shellQuote(name)} systemctl status podman.socket`,
      },
    )
  }

  /** `podman machine stop`. */
  async stop(spec: MachineSpec): Promise<void> {
    checkName(spec.name)
    await this.podman(['stop', spec.name], {timeoutMs: STOP_BUDGET_MS, budget: 'podman machine stop'})
  }

  /** `podman machine rm --force`: the VM and its disk, with every container, image and volume inside. */
  async rm(spec: MachineSpec): Promise<void> {
    checkName(spec.name)
    await this.podman(['rm', '--force', spec.name], {timeoutMs: STOP_BUDGET_MS, budget: 'podman machine rm'})
  }

  /**
   * `CONTAINER_HOST` and `DOCKER_HOST` pointing at the machine's API socket; null when the
   * machine is absent or stopped. Starts nothing, and never falls back to the host's socket.
   * @throws OperationError (exit 1) when the machine says it runs but its socket does not answer.
   */
  async socketEnv(spec: MachineSpec): Promise<Record<string, string> | null> {
    checkName(spec.name)
    const listed = (await this.list()).find((machine) => machine.name === spec.name)
    if (!listed?.running && !listed?.starting) return null
    const socketPath = (await this.inspect(spec.name))?.socketPath
    if (!socketPath || !(await socketAnswers(socketPath))) throw unresponsive(spec.name, socketPath)
    const url = `unix://${socketPath}`
    return {CONTAINER_HOST: url, DOCKER_HOST: url}
  }
}

/** @throws InputError (exit 2) for a name podman would refuse, or that would pass for an option. */
function checkName(name: string): void {
  if (!MACHINE_NAME.test(name)) {
    throw new InputError(`"${name}" is not a valid podman machine name`, {
      why: 'podman machine names start with a letter or digit, followed by letters, digits, "_", "." or "-"',
      fix: 'set [machine] name in yard.toml to such a name, or remove it for the default yard-<prefix>',
    })
  }
}

/**
 * The one-VM rule (DESIGN.md §4.3): names the running machine and the ways out. Sharing the other
 * machine is offered only to the shared machine, and never when the other one is an untrusted
 * worktree's (`<name>-<worktree>`, docs/worktrees.md).
 */
export function anotherRunning(other: string, name: string, dedicated = false): RefusedError {
  const stop = `stop it first (podman machine stop ${shellQuote(other)}, then run the command again)`
  const share =
    dedicated || other.startsWith(`${name}-`)
      ? ''
      : `, or use it for this project: set [machine] name = "${other}" in yard.local.toml (it must mount the main checkout and the worktrees root; yard machine status checks)`
  return new RefusedError(`cannot start podman machine ${name}: podman machine ${other} is running`, {
    why: 'podman runs one machine at a time on macOS',
    fix: share === '' ? stop : `either ${stop}${share}`,
  })
}

/** A machine that says it runs but whose socket does not answer (a host crash, a stuck VM). */
export function unresponsive(name: string, socketPath: string | null | undefined): OperationError {
  return new OperationError(
    `podman machine ${name} says it is running, but its API socket ${socketPath ?? '(none reported)'} does not answer`,
    {
      why: 'the VM or its podman service is stuck (after a host crash or sleep, for example)',
      fix: 'yard machine stop && yard machine start',
    },
  )
}
