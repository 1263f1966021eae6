/**
 * The one-VM rule for untrusted worktrees (DESIGN.md §4.3; docs/worktrees.md, "Untrusted
 * worktrees"): an untrusted worktree's machine cannot start while the shared machine runs on a
 * backend that runs one machine at a time (`exclusive`). `up` refuses, naming the running machine
 * and `--stop-shared`; with it, the stacks running on the shared machine are listed, the shared
 * machine stops, and what went down is said.
 */
import type {MachineBackend, MachineSpec} from '../../sdk/machine.js'
import type {Target} from '../../sdk/target.js'
import type {YardContext} from '../kernel/context.js'
import type {Backends} from '../registry/backends.js'

import {RefusedError} from '../../sdk/errors.js'
import {listIdentities, type Workspace} from '../workspace/workspace.js'
import {isUntrusted, machineSpec} from './machine.js'

/** The shared machine stopped for an untrusted worktree's, and the projects that had containers on it. */
export interface SharedStop {
  machine: string
  /** Project names (`<prefix>`, `<prefix>-<name>`) whose stack or box ran there, sorted. */
  stacks: string[]
}

/**
 * Makes room for `spec`, an untrusted worktree's machine, on an exclusive backend: nothing to do
 * when the backend is not exclusive, the spec is the shared machine, the worktree's machine
 * already runs, or the shared one does not. Otherwise refuses, or with `stopShared` stops the
 * shared machine and says what went down.
 * @returns what was stopped, or undefined when nothing was.
 * @throws RefusedError (exit 3) while the shared machine runs without `stopShared`, naming it,
 *   the stacks that would go down and `--stop-shared`.
 */
export async function makeRoomFor(
  context: YardContext,
  backends: Backends,
  workspace: Workspace,
  machine: MachineBackend,
  spec: MachineSpec,
  options: {stopShared: boolean; command: string},
): Promise<SharedStop | undefined> {
  if (!machine.exclusive || spec.worktree === undefined) return undefined
  const own = await machine.status(spec)
  if (own.state === 'running' || own.state === 'unresponsive') return undefined
  const shared = machineSpec(workspace)
  const status = await machine.status(shared)
  if (status.state !== 'running' && status.state !== 'unresponsive') return undefined
  const stacks =
    status.state === 'running' ? await runningStacks(context, backends, workspace, machine, shared) : undefined
  const going =
    stacks === undefined
      ? 'whatever runs on it (its socket does not answer)'
      : stacks.length === 0
        ? 'no stack or box of this project runs there'
        : `these stacks go down with it: ${stacks.join(', ')}`
  if (!options.stopShared) {
    throw new RefusedError(
      `machine ${shared.name} is running, and worktree ${spec.worktree}'s own machine ${spec.name} cannot run beside it`,
      {
        why: `worktree ${spec.worktree} is untrusted, so it runs on a machine of its own, and the ${machine.id} backend runs one machine at a time; ${going}`,
        fix: `${options.command} --stop-shared stops ${shared.name} first (its stacks come back with \`yard up\` once ${spec.name} is stopped: \`yard machine stop --worktree ${spec.worktree}\`)`,
      },
    )
  }

  context.warn(
    `stopping the shared machine ${shared.name} for worktree ${spec.worktree}'s own machine ${spec.name}: ${going}`,
  )
  await machine.stop(shared)
  return {machine: shared.name, stacks: stacks ?? []}
}

/**
 * The projects of this workspace (main and its trusted worktrees) with a container on the
 * shared machine: one `psAll` of the stack backend when it has one, else `ps` and `box.ps` per
 * checkout. Untrusted worktrees run elsewhere and are not asked about.
 */
async function runningStacks(
  context: YardContext,
  backends: Backends,
  workspace: Workspace,
  machine: MachineBackend,
  shared: MachineSpec,
): Promise<string[]> {
  const socketEnv = (await machine.socketEnv(shared)) ?? {}
  const stack = await backends.stack(context, workspace.config.stack.backend, {socketEnv})
  const quiet = {...context, warn() {}}
  const targets: Target[] = (await listIdentities(workspace, quiet))
    .map((row) => row.target)
    .filter((target) => target.isMain || !isUntrusted(workspace, target.name))
  const running = new Set<string>()
  if (stack.psAll) {
    const all = await stack.psAll(targets.find((target) => target.isMain)!)
    for (const target of targets) {
      const found = all[target.project]
      if (found && [...found.stack, ...found.box].some((container) => container.state === 'running'))
        running.add(target.project)
    }
  } else {
    await Promise.all(
      targets.map(async (target) => {
        const containers = [...(await stack.ps(target)), ...(stack.box ? await stack.box.ps(target) : [])]
        if (containers.some((container) => container.state === 'running')) running.add(target.project)
      }),
    )
  }

  return [...running].sort()
}
