/**
 * Machine use cases (DESIGN.md §4.3): the machine backend that `[machine] backend` selects, and
 * the spec it gets — `[machine] name` (default `yard-<prefix>`), the sizes, and exactly two
 * mounts: the main checkout and the worktrees root.
 */
import {existsSync} from 'node:fs'

import type {MachineBackend, MachineSpec, MachineStatus} from '../../sdk/machine.js'
import type {YardContext} from '../kernel/context.js'
import type {Backends} from '../registry/backends.js'

import {InputError, OperationError, RefusedError} from '../../sdk/errors.js'
import {validateName} from '../identity/identity.js'
import {openWorkspace, type Workspace, worktreePath} from '../workspace/workspace.js'

/**
 * The machine a checkout runs on (DESIGN.md §4.3): the shared one — name, sizes, and the two
 * mounts in this order — or, for an untrusted worktree (`name` given and recorded untrusted in
 * yard.local.toml), a machine of its own, `yard-<prefix>-<name>`, that mounts exactly that
 * worktree read-write and the git common dir read-only (docs/worktrees.md, "Untrusted worktrees").
 */
export function machineSpec(workspace: Workspace, name?: string): MachineSpec {
  const {machine} = workspace.config
  const sizes = {cpus: machine.cpus, memoryMiB: machine['memory-mib'], diskGiB: machine['disk-gib']}
  if (name !== undefined && name !== 'main' && isUntrusted(workspace, name)) {
    return {
      name: worktreeMachineName(workspace.prefix, name),
      mounts: [worktreePath(workspace, name), workspace.commonDir],
      readOnly: [workspace.commonDir],
      worktree: name,
      ...sizes,
    }
  }

  return {name: machine.name, mounts: [workspace.mainPath, workspace.worktreesRoot], ...sizes}
}

/** `yard-<prefix>-<name>`: the machine of an untrusted worktree. */
export function worktreeMachineName(prefix: string, name: string): string {
  return `yard-${prefix}-${name}`
}

/** True when the main checkout's yard.local.toml records worktree `name` as untrusted. */
export function isUntrusted(workspace: Workspace, name: string): boolean {
  return workspace.config.trust[name] === 'untrusted'
}

/**
 * Creates the machine backend `[machine] backend` selects, with the spec of the checkout `name`
 * (the shared machine when absent or trusted).
 */
export async function createMachine(
  context: YardContext,
  backends: Backends,
  workspace: Workspace,
  name?: string,
): Promise<{machine: MachineBackend; spec: MachineSpec}> {
  const machine = await backends.machine(context, workspace.config.machine.backend, {
    origin: workspace.config.origins['machine.backend'],
  })
  return {machine, spec: machineSpec(workspace, name)}
}

/**
 * Refuses to create or start an untrusted worktree's machine on a backend that cannot make one.
 * @throws RefusedError (exit 3) naming the backend and the ways out.
 */
export function checkWorktreeMachine(machine: MachineBackend, spec: MachineSpec): void {
  if (spec.worktree === undefined || machine.worktreeMachines) return
  throw new RefusedError(
    `worktree ${spec.worktree} is untrusted, but the machine backend ${machine.id} cannot give it a machine of its own`,
    {
      why: 'an untrusted worktree runs on a machine that mounts only it and the git dir read-only; this backend does not say it can make one',
      fix: `use a backend that can ([machine] backend = "podman-machine" or "native"), or, if you trust its code: yard worktree trust ${spec.worktree} --trusted`,
    },
  )
}

/**
 * The engine socket variables of the machine checkout `name` runs on, for `yard env` (DESIGN.md
 * §3.5); empty, with a note, when the machine is not running. Starts nothing.
 * @throws OperationError (exit 1) when the machine says it runs but its socket does not answer.
 */
export async function machineSocketEnv(
  context: YardContext,
  backends: Backends,
  workspace: Workspace,
  name?: string,
): Promise<Record<string, string>> {
  const {machine, spec} = await createMachine(context, backends, workspace, name)
  const env = await machine.socketEnv(spec)
  if (env === null)
    context.warn(
      `note: machine ${spec.name} is not running, so there is no CONTAINER_HOST / DOCKER_HOST yet: yard machine start (or yard up)`,
    )
  return env ?? {}
}

const platformDefault = (context: YardContext) =>
  context.env.YARD_MACHINE_BACKEND || (process.platform === 'darwin' ? 'podman-machine' : 'native')

/**
 * `yard machine status`: outside a repository only the `native` backend answers (a VM belongs to
 * a project). Warns when a VM's mounts are not the two expected ones. Never creates or starts a
 * machine.
 * @throws InputError (exit 2) for invalid config, an unknown backend id, or a VM backend outside a repository.
 */
export async function machineStatus(
  context: YardContext,
  backends: Backends,
  worktree?: string,
): Promise<MachineStatus> {
  const workspace = await openWorkspace(context).catch((error: unknown) => {
    if (platformDefault(context) !== 'native') throw error
    return undefined
  })
  if (!workspace) {
    if (worktree !== undefined)
      throw new InputError('--worktree names a worktree, and there is no repository here', {
        fix: 'run the command inside the repository',
      })
    const machine = await backends.machine(context, 'native')
    return machine.status({name: 'native', mounts: [], cpus: 0, memoryMiB: 0, diskGiB: 0})
  }

  const {machine, spec} = await createMachine(
    context,
    backends,
    workspace,
    worktree === undefined ? undefined : untrustedName(workspace, worktree),
  )
  const status = await machine.status(spec)
  warnOnMounts(status, spec, context)
  if (status.state === 'unresponsive') {
    context.warn(
      status.socket === null
        ? 'warning: the engine does not answer; `yard doctor` says why (and `yard doctor --fix` writes the containers.conf this host may need)'
        : `warning: machine ${spec.name} says it is running, but its API socket ${status.socket} does not answer\n  fix: yard machine stop && yard machine start`,
    )
  }

  return status
}

/** A VM (it has its own socket) whose mounts are not the spec's: worktrees would be empty inside. */
function warnOnMounts(status: MachineStatus, spec: MachineSpec, context: YardContext): void {
  if (status.state === 'absent' || status.socket === null) return
  const differ =
    status.mounts.length !== spec.mounts.length || spec.mounts.some((mount) => !status.mounts.includes(mount))
  if (!differ) return
  context.warn(
    `warning: machine ${spec.name} mounts ${status.mounts.length > 0 ? status.mounts.join(', ') : 'nothing yard can read'}, but this project needs exactly ${spec.mounts.join(' and ')} (did the main checkout or the worktrees root move?)\n` +
      `  paths outside its mounts are empty inside the VM; recreate it: ${spec.worktree === undefined ? 'yard machine rm --yes && yard machine init && yard machine start' : `yard machine rm --worktree ${spec.worktree} --yes (yard up --worktree ${spec.worktree} makes it again)`}`,
  )
}

/** What a machine verb did: `done` false when there was nothing to do (said in `reason`). */
export interface MachineOutcome {
  name: string
  backend: string
  done: boolean
  reason?: string
}

/** Where a worktree that is not untrusted runs, in words: there may be no such worktree, or no machine. */
function runsWhere(workspace: Workspace, name: string): string {
  const place =
    workspace.config.machine.backend === 'native'
      ? "this host's podman, as every checkout on the native backend (it has no machines)"
      : `the shared machine ${workspace.config.machine.name}`
  return existsSync(worktreePath(workspace, name)) ? `runs on ${place}` : `does not exist; it would run on ${place}`
}

/**
 * The name of the untrusted worktree whose own machine `--worktree NAME` means.
 * @throws InputError (exit 2) for an invalid name, or a worktree not recorded as untrusted (it
 *   runs on the shared machine).
 */
function untrustedName(workspace: Workspace, worktree: string): string {
  const name = validateName(worktree, 'worktree name (--worktree)')
  if (isUntrusted(workspace, name)) return name
  throw new InputError(`worktree ${name} is not untrusted, so it has no machine of its own`, {
    why: `only a worktree recorded as untrusted in ${workspace.config.files.local} runs on a machine of its own; ${name} ${runsWhere(workspace, name)}`,
    fix: `leave out --worktree for ${workspace.config.machine.backend === 'native' ? "the host's podman" : 'the shared machine'}`,
  })
}

/**
 * The machine and spec (an untrusted worktree's own with `worktree`), and its status unless it is
 * the native one (which needs none).
 */
async function open(context: YardContext, backends: Backends, worktree?: string) {
  const workspace = await openWorkspace(context)
  const {machine, spec} = await createMachine(
    context,
    backends,
    workspace,
    worktree === undefined ? undefined : untrustedName(workspace, worktree),
  )
  return {machine, spec, status: machine.id === 'native' ? undefined : await machine.status(spec)}
}

/** The native machine is the host's podman: nothing to create, start, stop or remove. */
function nothingForNative(machine: MachineBackend, verb: string): MachineOutcome {
  return {
    name: 'native',
    backend: machine.id,
    done: false,
    reason: `the native machine is the host's podman (no VM): nothing to ${verb}`,
  }
}

/** `yard machine init`: creates the machine when absent; an existing one is kept (mounts checked). */
export async function machineInit(
  context: YardContext,
  backends: Backends,
  worktree?: string,
): Promise<MachineOutcome> {
  const {machine, spec, status} = await open(context, backends, worktree)
  if (!status) return nothingForNative(machine, 'create')
  if (status.state !== 'absent') {
    warnOnMounts(status, spec, context)
    return {
      name: spec.name,
      backend: machine.id,
      done: false,
      reason: `machine ${spec.name} already exists (${status.state})`,
    }
  }

  await machine.init(spec)
  return {name: spec.name, backend: machine.id, done: true}
}

/**
 * `yard machine start`: a running machine is left as it is.
 * @throws OperationError (exit 1) for an absent or unresponsive machine; RefusedError (exit 3)
 *   from the backend while another machine runs.
 */
export async function machineStart(
  context: YardContext,
  backends: Backends,
  worktree?: string,
): Promise<MachineOutcome> {
  const {machine, spec, status} = await open(context, backends, worktree)
  if (!status) return nothingForNative(machine, 'start')
  if (status.state === 'running')
    return {name: spec.name, backend: machine.id, done: false, reason: `machine ${spec.name} is already running`}
  if (status.state === 'absent') {
    throw new OperationError(`there is no machine ${spec.name} to start`, {
      fix: 'yard machine init && yard machine start (yard up does both)',
    })
  }

  if (status.state === 'unresponsive') {
    throw new OperationError(
      `machine ${spec.name} says it is running, but its socket ${status.socket ?? ''} does not answer`,
      {fix: 'yard machine stop && yard machine start'},
    )
  }

  await machine.start(spec)
  return {name: spec.name, backend: machine.id, done: true}
}

/** `yard machine stop`: an absent or stopped machine is nothing to do. */
export async function machineStop(
  context: YardContext,
  backends: Backends,
  worktree?: string,
): Promise<MachineOutcome> {
  const {machine, spec, status} = await open(context, backends, worktree)
  if (!status) return nothingForNative(machine, 'stop')
  if (status.state === 'absent' || status.state === 'stopped')
    return {name: spec.name, backend: machine.id, done: false, reason: `machine ${spec.name} is ${status.state}`}
  await machine.stop(spec)
  return {name: spec.name, backend: machine.id, done: true}
}

/**
 * `yard machine rm`: asks `confirm` (which throws to refuse) before removing; with `dryRun`
 * only reports. An absent machine is nothing to do.
 */
export async function machineRm(
  context: YardContext,
  backends: Backends,
  options: {dryRun: boolean; confirm: (question: string) => Promise<void>; worktree?: string},
): Promise<MachineOutcome> {
  const {machine, spec, status} = await open(context, backends, options.worktree)
  if (!status) return nothingForNative(machine, 'remove')
  if (status.state === 'absent')
    return {name: spec.name, backend: machine.id, done: false, reason: `there is no machine ${spec.name}`}
  if (options.dryRun)
    return {
      name: spec.name,
      backend: machine.id,
      done: false,
      reason: `would remove machine ${spec.name} (${status.state}) with its disk: every container, image and volume inside it`,
    }
  await options.confirm(`Remove machine ${spec.name} with its disk (every container, image and volume inside it)?`)
  await machine.rm(spec)
  return {name: spec.name, backend: machine.id, done: true}
}
