/**
 * Machine use cases (DESIGN.md §4.3): the machine backend that `[machine] backend` selects.
 */
import type {MachineStatus} from './backend.js'
import type {YardContext} from './context.js'
import type {Registry} from './registry.js'
import {stateDir} from './state.js'
import {openWorkspace} from './workspace.js'

/**
 * `yard machine status`: outside a repository the platform's default backend is used. Never
 * creates or starts a machine.
 * @throws InputError (exit 2) for invalid config or an unknown backend id.
 */
export async function machineStatus(context: YardContext, registry: Registry): Promise<MachineStatus> {
  const backend = await openWorkspace(context).then(
    (workspace) => workspace.config.machine.backend,
    () => context.env.YARD_MACHINE_BACKEND || (process.platform === 'darwin' ? 'podman-machine' : 'native'),
  )
  const machine = await registry.create('machine', backend, {runner: context.runner, env: context.env, stateDir: stateDir(context.env), warn: context.warn})
  return machine.status()
}
