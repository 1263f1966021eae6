/**
 * `yard sandbox forward NAME` (DESIGN.md §5.2, §3.4): every `[ports]` key of the sandbox, local
 * port `base + offset` → container port `base`. The kubernetes runtime runs one `kubectl
 * port-forward` for all of them until Ctrl-C; the podman runtime already publishes them as host
 * ports, so there is nothing to run.
 */
import type {SandboxPortForward} from '../../sdk/sandbox.js'
import type {YardContext} from '../kernel/context.js'
import type {Backends} from '../registry/backends.js'

import {OperationError} from '../../sdk/errors.js'
import {openSandboxes, requireSandbox} from './sandbox.js'

export interface ForwardResult {
  name: string
  project: string
  runtime: string
  /** The runtime publishes the ports itself (podman): nothing ran. */
  published: boolean
  /** In `[ports]` key order; the bases are those the pod was made with. */
  forwards: SandboxPortForward[]
  /** The forwarding command (kubernetes), or null. */
  argv: string[] | null
  dryRun: boolean
  /** The forwarder's exit code once it ended; null when nothing ran. */
  exitCode: number | null
}

/**
 * Forwards the sandbox's ports (see the module comment). `onStart` is called with the plan just
 * before the forwarder starts (it may throw to stop there; nothing has run yet).
 * @throws InputError (exit 2) for an unknown sandbox or runtime; OperationError (exit 1) when the
 *   backend cannot forward ports.
 */
export async function forwardSandbox(
  context: YardContext,
  backends: Backends,
  options: {name: string; runtime?: string; dryRun: boolean; onStart?: (plan: ForwardResult) => void},
): Promise<ForwardResult> {
  const session = await openSandboxes(context, backends, options.runtime)
  const {target, sandbox} = await requireSandbox(context, session, options.name)
  const forwards = Object.keys(sandbox.spec.portBases)
    .sort()
    .map((key) => ({key, local: sandbox.spec.portBases[key] + target.offset, container: sandbox.spec.portBases[key]}))
  const base = {
    name: sandbox.name,
    project: sandbox.project,
    runtime: sandbox.runtime,
    forwards,
    dryRun: options.dryRun,
    exitCode: null,
  }
  if (!session.backend.forward) {
    throw new OperationError(`the sandbox backend ${session.backend.id} cannot forward ports`, {
      fix: 'use the ports it publishes, or a backend that forwards (k8s-sandbox)',
    })
  }

  if (forwards.length === 0) return {...base, published: false, argv: null}
  const planned = await session.backend.forward(sandbox, forwards, {dryRun: true})
  if (planned === null) return {...base, published: true, argv: null}
  const plan = {...base, published: false, argv: planned.argv}
  if (options.dryRun) return plan
  options.onStart?.(plan)
  const ran = await session.backend.forward(sandbox, forwards, {dryRun: false})
  return {...plan, exitCode: ran?.exitCode ?? null}
}
