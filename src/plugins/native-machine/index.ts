/**
 * The built-in `native` machine backend (DESIGN.md §4.3, the Linux default), registered through
 * the `yard:backends` hook exactly like a third-party plugin's.
 */
import type {BackendFactory, BackendsHookResult, MachineBackend} from '../../core/backend.js'
import {CONTRACT_VERSION} from '../../core/backend.js'
import {NativeMachine} from './machine.js'

export const nativeMachineFactory: BackendFactory<MachineBackend> = {
  kind: 'machine',
  id: 'native',
  contract: CONTRACT_VERSION,
  description: "no VM: the host's podman",
  create: (context) => new NativeMachine(context),
}

export default async function backends(): Promise<BackendsHookResult> {
  return [nativeMachineFactory]
}
