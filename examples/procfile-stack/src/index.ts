/**
 * The `yard:backends` hook of procfile-stack (package.json `oclif.hooks`): yard runs it once per
 * process and uses the factory when yard.toml says `[stack] backend = "procfile-stack"`.
 */
import type {BackendFactory, BackendsHookResult, StackBackend} from '@yard-dev/cli/backend'

import {ProcfileStack} from './stack.js'

export const procfileStackFactory: BackendFactory<StackBackend> = {
  kind: 'stack',
  id: 'procfile-stack',
  // The contract this code was written against, as a literal: yard compares its major with its own.
  contract: 1,
  description: "a checkout's Procfile as host processes (no containers, no box)",
  create: (context) => new ProcfileStack(context),
}

export default async function backends(): Promise<BackendsHookResult> {
  return [procfileStackFactory]
}
