/**
 * Warm pools of the k8s-sandbox backend on every runtime that keeps them (docs/sandboxes.md,
 * "Warm pool"): each call goes to its runtime's own — pool.ts on podman (claims recorded in the
 * state directory), kube-pool.ts on kubernetes (claims patched onto the pod).
 */
import type {PoolOwner, PoolPod, SandboxPoolSupport} from '../../sdk/sandbox-pool.js'
import type {SandboxAttachResult, SandboxRecord, SandboxSpec} from '../../sdk/sandbox.js'
import type {Target} from '../../sdk/target.js'

import {InputError} from '../../sdk/errors.js'

export class RuntimePools implements SandboxPoolSupport {
  readonly runtimes: readonly string[]
  private readonly loaded = new Map<string, Promise<SandboxPoolSupport>>()

  /**
   * `byRuntime`: how to have the pool support of each runtime id, called on its first use (a
   * command that keeps no pool, `yard exec` above all, loads no pool code).
   */
  constructor(private readonly byRuntime: Readonly<Record<string, () => Promise<SandboxPoolSupport>>>) {
    this.runtimes = Object.keys(byRuntime)
  }

  /** @throws InputError (exit 2) for a runtime that keeps no pools. */
  private async of(runtime: string): Promise<SandboxPoolSupport> {
    const load = this.byRuntime[runtime]
    if (!load)
      throw new InputError(`warm pools are not supported on the ${runtime} runtime`, {
        why: `pools are kept on ${this.runtimes.join(', ')} (docs/sandboxes.md, "Warm pool")`,
        fix: `use --runtime ${this.runtimes[0]}, or create sandboxes cold`,
      })
    let support = this.loaded.get(runtime)
    if (!support) this.loaded.set(runtime, (support = load()))
    return support
  }

  async check(runtime: string): Promise<void> {
    await (await this.of(runtime)).check?.(runtime)
  }

  async pods(pool: PoolOwner, runtime: string): Promise<PoolPod[]> {
    return (await this.of(runtime)).pods(pool, runtime)
  }

  async fill(
    pool: PoolOwner,
    spec: SandboxSpec,
    fingerprint: string,
    options: {fetchThroughSeconds: number},
  ): Promise<string> {
    return (await this.of(spec.runtime)).fill(pool, spec, fingerprint, options)
  }

  async take(
    pool: PoolOwner,
    runtime: string,
    fingerprint: string,
    project: string,
    listed?: readonly PoolPod[],
  ): Promise<string | undefined> {
    return (await this.of(runtime)).take(pool, runtime, fingerprint, project, listed)
  }

  async untake(pod: string, runtime: string): Promise<void> {
    return (await this.of(runtime)).untake(pod, runtime)
  }

  async claim(pod: string, pool: string, target: Target, spec: SandboxSpec): Promise<SandboxRecord> {
    return (await this.of(spec.runtime)).claim(pod, pool, target, spec)
  }

  async attachTaken(
    pod: string,
    spec: SandboxSpec,
    request: {branch: string; gitIdentity: {name?: string; email?: string}},
  ): Promise<SandboxAttachResult | undefined> {
    return (await this.of(spec.runtime)).attachTaken?.(pod, spec, request)
  }

  async attachClaimed(
    sandbox: SandboxRecord,
    request: {branch: string; gitIdentity: {name?: string; email?: string}},
  ): Promise<SandboxAttachResult> {
    return (await this.of(sandbox.runtime)).attachClaimed(sandbox, request)
  }

  async remove(pod: string, runtime: string): Promise<void> {
    return (await this.of(runtime)).remove(pod, runtime)
  }

  async relaysPorts(runtime: string): Promise<boolean> {
    return (await this.of(runtime)).relaysPorts(runtime)
  }

  async relay(sandbox: SandboxRecord): Promise<void> {
    return (await this.of(sandbox.runtime)).relay(sandbox)
  }

  async awaitRelay(sandbox: SandboxRecord): Promise<void> {
    return (await this.of(sandbox.runtime)).awaitRelay(sandbox)
  }
}
