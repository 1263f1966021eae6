/**
 * Where the k8s-sandbox backend runs pods (DESIGN.md §5.2, "Runtimes"). The backend speaks only
 * this interface, so the `kubernetes` runtime (client-node for objects, `kubectl exec` for
 * terminals, a `Repo` resource per cache key) plugs in beside `podman` without touching attach,
 * rm or exec.
 */
import type {RunResult} from '../../sdk/process.js'

/** A pod as a runtime reports it. */
export interface RuntimePod {
  /** The pod's name: the project name. */
  name: string
  /** Kubernetes-style: `Pending`, `Running`, `Succeeded`, `Failed`, `Unknown`. */
  phase: string
  labels: Record<string, string>
  annotations: Record<string, string>
  /** The node it runs on (a cluster); undefined before scheduling, and on podman. */
  node?: string
}

export interface SandboxRuntime {
  readonly id: string
  /** Every pod labelled `yard.dev/prefix=<prefix>`, within `timeoutMs`. */
  list(prefix: string, timeoutMs: number): Promise<RuntimePod[]>
  /** The pod of that name, or undefined. */
  get(name: string): Promise<RuntimePod | undefined>
  /** Creates and starts the pod from its manifest (the Pod object). @throws OperationError; nothing is left running. */
  play(manifest: Record<string, unknown>): Promise<void>
  /** Deletes the pod (nothing when it is gone). */
  remove(name: string): Promise<void>
  /**
   * Runs argv in the pod's workspace container without a shell, output captured; never throws
   * for a non-zero exit. `env` is added to the command's environment.
   */
  run(name: string, argv: string[], options?: {workdir?: string; env?: Record<string, string>}): Promise<RunResult>
  /** Runs argv on this terminal in `workdir`; resolves with its exit code (125/126/127: the runtime's). */
  exec(name: string, argv: string[], options: {workdir: string; tty: boolean}): Promise<number>
  /** Copies a file out of the pod to a host path. */
  copyOut(name: string, podPath: string, hostPath: string): Promise<void>
}
