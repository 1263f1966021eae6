/**
 * What a sandbox backend offers for warm pools (docs/sandboxes.md, "Warm pool"; core in
 * sandbox-pool.ts). A pool pod is made before the sandbox's name is known: it carries only what
 * does not depend on the name (caches mounted read-only, `default/` cloned and checked out, git's
 * safe.directory, fetch-through), never a name, offset or published port. A claim then gives it
 * one sandbox's identity, exactly the one a cold create would give.
 */
import type {SandboxAttachResult, SandboxRecord, SandboxSpec} from './sandbox.js'
import type {Target} from './target.js'

/** One pod of a pool as the runtime reports it. */
export interface PoolPod {
  /** The pod's own name (never a sandbox's project name). */
  name: string
  /** Kubernetes-style phase: only a `Running` pod can be claimed. */
  phase: string
  /** Prepared completely (default/ cloned): claimable when Running and not taken. */
  ready: boolean
  /** Claimed by a sandbox, or being claimed. */
  taken: boolean
  /** The pool spec fingerprint it was made from (poolFingerprint in sandbox-pool.ts). */
  fingerprint: string
  /**
   * Taken by a create that died before its claim (podman: the taken marker names a project with
   * no claim record of this pod, and that project's create lock is free): no sandbox owns it and
   * no create will, so the refill and `pool rm` remove it. Always `taken` too.
   */
  orphaned?: boolean
}

/** Who a pool belongs to, as its pods are labelled. */
export interface PoolOwner {
  id: string
  prefix: string
  owner: string
}

export interface SandboxPoolSupport {
  /** The runtimes that can hold pools. */
  readonly runtimes: readonly string[]
  /**
   * Checks, before a pool is defined, that `runtime` can make pods here now as a cold create
   * would (kubernetes: the kubeconfig, its context, kubectl, the API answering). Absent: nothing
   * to check. @throws InputError (exit 2) when something is missing.
   */
  check?(runtime: string): Promise<void>
  /** Every pod of pool `pool.id` on `runtime`, claimed ones included. */
  pods(pool: PoolOwner, runtime: string): Promise<PoolPod[]>
  /**
   * Makes one pool pod from `spec` (branch empty, no port bases) and prepares it; resolves its
   * name once it is ready. @throws OperationError, leaving nothing running.
   */
  fill(pool: PoolOwner, spec: SandboxSpec, fingerprint: string, options: {fetchThroughSeconds: number}): Promise<string>
  /**
   * Takes a Running, ready, untaken pod of the pool with that fingerprint for `project`
   * (exclusively: two callers never get one pod); undefined when there is none. `listed`: the
   * pool's pods as `pods` just answered, so the take needs no listing of its own (a runtime whose
   * take needs more than that, such as a resource version, may list anyway).
   */
  take(
    pool: PoolOwner,
    runtime: string,
    fingerprint: string,
    project: string,
    listed?: readonly PoolPod[],
  ): Promise<string | undefined>
  /** Gives back a taken pod that was not claimed (a create refused after take). */
  untake(pod: string, runtime: string): Promise<void>
  /**
   * Gives the taken pod `pod` the identity of `target` with `spec` (the sandbox's own, as a cold
   * create would make it) and returns the sandbox as `get` will.
   */
  claim(pod: string, pool: string, target: Target, spec: SandboxSpec): Promise<SandboxRecord>
  /**
   * Attach of the branch in a taken pod before its claim, where it needs nothing of the sandbox's
   * identity (podman: the pod keeps its own name): the same work as `attachClaimed`, so a create
   * runs it while the identity is decided. Resolves undefined where the runtime attaches only a
   * claimed pod (kubernetes: the claim relabels the pod the attach finds); the create then calls
   * `attachClaimed` after the claim. Absent: the same as undefined.
   */
  attachTaken?(
    pod: string,
    spec: SandboxSpec,
    request: {branch: string; gitIdentity: {name?: string; email?: string}},
  ): Promise<SandboxAttachResult | undefined>
  /** Attach of the branch in a just-claimed sandbox: `default/` fetched from the cache, the branch worktree added. */
  attachClaimed(
    sandbox: SandboxRecord,
    request: {branch: string; gitIdentity: {name?: string; email?: string}},
  ): Promise<SandboxAttachResult>
  /** Deletes an unclaimed pool pod (nothing when it is gone). */
  remove(pod: string, runtime: string): Promise<void>
  /**
   * Whether a claimed pod of `runtime` answers on the sandbox's ports as a cold one does (podman:
   * through `relay`; kubernetes: always, its ports are port-forwards); when not, a sandbox with
   * `[ports]` is made cold. A promise is awaited (a backend may load its pool code first).
   */
  relaysPorts(runtime: string): boolean | Promise<boolean>
  /**
   * Relays the claimed sandbox's host ports (`base + offset`) to its pod's `base` until the sandbox
   * is removed; run by `yard sandbox pool relay NAME`.
   */
  relay(sandbox: SandboxRecord): Promise<void>
  /** Waits until the relay of `sandbox` listens. @throws OperationError when it does not in time. */
  awaitRelay(sandbox: SandboxRecord): Promise<void>
}
