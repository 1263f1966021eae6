/**
 * The built-in `native` machine backend (DESIGN.md §4.3, the Linux default), registered through
 * the `yard:backends` hook exactly like a third-party plugin's.
 */
import type {BackendFactory, BackendsHookResult} from '../../sdk/factory.js'
import type {MachineBackend} from '../../sdk/machine.js'

import {CONTRACT_VERSION} from '../../sdk/factory.js'

export const nativeMachineFactory: BackendFactory<MachineBackend> = {
  kind: 'machine',
  id: 'native',
  contract: CONTRACT_VERSION,
  description: "no VM: the host's podman",
  // Loaded on first use: listing backends must not import every backend's code.
  create: async (context) => new (await import('./machine.js')).NativeMachine(context),
}

export default async function backends(): Promise<BackendsHookResult> {
  return [nativeMachineFactory]
}
