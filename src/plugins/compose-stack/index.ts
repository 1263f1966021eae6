/**
 * The built-in `compose-stack` backend (DESIGN.md §4.2), registered through the `yard:backends`
 * hook exactly like a third-party plugin's.
 */
import type {BackendFactory, BackendsHookResult} from '../../sdk/factory.js'
import type {StackBackend} from '../../sdk/stack.js'

import {CONTRACT_VERSION} from '../../sdk/factory.js'

export const composeStackFactory: BackendFactory<StackBackend> = {
  kind: 'stack',
  id: 'compose-stack',
  contract: CONTRACT_VERSION,
  description:
    'each checkout a compose project (podman-compose, podman compose, docker compose, docker-compose), with a dev box',
  // Loaded on first use: listing backends must not import every backend's code.
  create: async (context) => new (await import('./stack.js')).ComposeStack(context),
}

export default async function backends(): Promise<BackendsHookResult> {
  return [composeStackFactory]
}
