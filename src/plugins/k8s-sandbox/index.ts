/**
 * The built-in sandbox backend `k8s-sandbox` (DESIGN.md §5.2), registered through the
 * `yard:backends` hook exactly like a third-party plugin's backends.
 */
import type {BackendFactory} from '../../sdk/factory.js'
import type {SandboxBackend} from '../../sdk/sandbox.js'

import {CONTRACT_VERSION} from '../../sdk/factory.js'

export const k8sSandboxFactory: BackendFactory<SandboxBackend> = {
  kind: 'sandbox',
  id: 'k8s-sandbox',
  contract: CONTRACT_VERSION,
  description: 'sandbox pods on read-only git caches, played with podman kube play (the kubernetes runtime follows)',
  // Loaded on first use: listing backends must not import every backend's code.
  create: async (context) => new (await import('./sandbox.js')).K8sSandbox(context),
}

/** The `yard:backends` hook. */
export default async function backends(): Promise<BackendFactory[]> {
  return [k8sSandboxFactory]
}
