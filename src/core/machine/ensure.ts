/**
 * Making sure the project's machine runs (DESIGN.md §4.2, §4.3): `yard up`, `yard box up` and
 * `yard worktree add` create it when absent and start it when stopped; read and teardown verbs
 * never do (they take `socketEnv` as it is). Also the check that a compose file binds no host
 * path the machine cannot see.
 */
import type {MachineBackend, MachineSpec} from '../../sdk/machine.js'
import type {YardContext} from '../kernel/context.js'
import type {Backends} from '../registry/backends.js'
import type {Workspace} from '../workspace/workspace.js'

import {OperationError, YardError} from '../../sdk/errors.js'
import {createMachine} from './machine.js'

/**
 * The machine's engine socket variables, after creating (`init`) an absent machine and starting a
 * stopped one, each said on stderr. A running machine costs one `socketEnv` call.
 * @throws RefusedError (exit 3) from `start` while another machine runs; OperationError (exit 1)
 *   when the machine does not come up or its socket does not answer.
 */
export async function ensureMachine(
  context: YardContext,
  machine: MachineBackend,
  spec: MachineSpec,
): Promise<Record<string, string>> {
  const running = await machine.socketEnv(spec)
  if (running) return running
  const status = await machine.status(spec)
  if (status.state === 'absent') {
    context.warn(
      `creating machine ${spec.name} (${spec.cpus} CPUs, ${spec.memoryMiB} MiB, ${spec.diskGiB} GiB; mounts ${spec.mounts.join(' and ')})`,
    )
    await machine.init(spec)
  }

  if (status.state !== 'running') {
    context.warn(`starting machine ${spec.name}`)
    await machine.start(spec)
  }

  const started = await machine.socketEnv(spec)
  if (started) return started
  throw new OperationError(`machine ${spec.name} did not come up`, {
    why: `the ${machine.id} backend started it, but it does not report itself running`,
    fix: 'yard machine status shows its state; yard machine stop && yard machine start',
  })
}

/**
 * `yard worktree add`'s part (DESIGN.md §4.3): the new worktree is ready either way, so a machine
 * that cannot be created or started is a warning with its fix, never a failure.
 */
export async function ensureMachineQuietly(
  context: YardContext,
  backends: Backends,
  workspace: Workspace,
): Promise<void> {
  try {
    const {machine, spec} = await createMachine(context, backends, workspace)
    await ensureMachine(context, machine, spec)
  } catch (error) {
    if (!(error instanceof YardError)) throw error
    context.warn(`warning: the worktree is ready, but the machine is not: ${error.render()}`)
  }
}
