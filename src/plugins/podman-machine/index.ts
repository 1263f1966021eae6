/**
 * The built-in `podman-machine` backend (DESIGN.md §4.3, the macOS default), registered through
 * the `yard:backends` hook exactly like a third-party plugin's.
 */
import type {BackendFactory, BackendsHookResult} from '../../sdk/factory.js'
import type {MachineBackend} from '../../sdk/machine.js'

import {CONTRACT_VERSION} from '../../sdk/factory.js'

export const podmanMachineFactory: BackendFactory<MachineBackend> = {
  kind: 'machine',
  id: 'podman-machine',
  contract: CONTRACT_VERSION,
  description:
    'one podman machine (VM) per project, the main checkout and the worktrees root mounted at their own paths',
  // Loaded on first use: listing backends must not import every backend's code.
  create: async (context) => new (await import('./machine.js')).PodmanMachine(context),
}

export default async function backends(): Promise<BackendsHookResult> {
  return [podmanMachineFactory]
}
