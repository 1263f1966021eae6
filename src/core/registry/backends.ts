import type {CacheBackend} from '../../sdk/cache.js'
/**
 * The one way core reaches a backend (DESIGN.md §2 "Backends"): a `Backends` port that a command
 * builds once (`BaseCommand.backends`) over the registry, loaded on first use only. Use cases take
 * `(context, backends, options)`; tests hand in a fake port, or `backendsOf(registry)`.
 */
import type {BackendKind} from '../../sdk/factory.js'
import type {MachineBackend} from '../../sdk/machine.js'
import type {SandboxBackend} from '../../sdk/sandbox.js'
import type {StackBackend} from '../../sdk/stack.js'
import type {BackendContext, ClusterSettings} from '../../sdk/target.js'
import type {YardContext} from '../kernel/context.js'
import type {BackendEntry, Registry} from './registry.js'

import {stateDir} from '../kernel/state.js'

/**
 * Backends by kind and id. Each `machine`/`stack`/`cache`/`sandbox` call creates the backend for
 * the asking use case's context (its runner, warnings and progress), as `Registry.create` does.
 * @throws InputError (exit 2) for an id no usable backend has; OperationError (exit 1) when a
 *   factory throws or returns something malformed (registry.ts).
 */
export interface Backends {
  /** `origin` names where the id came from (`yard.toml`, `env:YARD_MACHINE_BACKEND`) for the fix of an unknown id. */
  machine(context: YardContext, id: string, options?: {origin?: string}): Promise<MachineBackend>
  /** `socketEnv` is the machine's engine socket environment, added to the backend's runner. */
  stack(context: YardContext, id: string, options?: {socketEnv?: Record<string, string>}): Promise<StackBackend>
  cache(context: YardContext, id: string): Promise<CacheBackend>
  /** `cluster` is `[cluster]` as the sandbox backend needs it (a cluster runtime does). */
  sandbox(context: YardContext, id: string, options?: {cluster?: ClusterSettings}): Promise<SandboxBackend>
  /** Whether a usable backend of this kind and id is registered. */
  has(kind: BackendKind, id: string): Promise<boolean>
  /** The ids of the usable backends of a kind, sorted. */
  ids(kind: BackendKind): Promise<string[]>
  /** Every entry, as `yard backends` lists them. */
  entries(): Promise<BackendEntry[]>
}

/**
 * The one builder of what a backend is handed (`BackendContext`, src/sdk/target.ts): the use
 * case's runner (with the engine socket's environment when given), environment, state directory,
 * warnings and progress.
 */
export function backendContext(
  context: YardContext,
  extra: {socketEnv?: Record<string, string>; cluster?: ClusterSettings} = {},
): BackendContext {
  return {
    runner: extra.socketEnv ? context.runner.withEnv(extra.socketEnv) : context.runner,
    env: context.env,
    stateDir: stateDir(context.env),
    warn: context.warn,
    progress: context.progress,
    ...(extra.cluster && {cluster: extra.cluster}),
  }
}

/** The port over a registry that `load` gives, called once on first use (`() => loadRegistry(config)`). */
export function createBackends(load: () => Promise<Registry>): Backends {
  let loaded: Promise<Registry> | undefined
  const registry = async () => (loaded ??= load())
  return {
    machine: async (context, id, options = {}) =>
      (await registry()).create('machine', id, backendContext(context), options.origin),
    stack: async (context, id, options = {}) =>
      (await registry()).create('stack', id, backendContext(context, options)),
    cache: async (context, id) => (await registry()).create('cache', id, backendContext(context)),
    sandbox: async (context, id, options = {}) =>
      (await registry()).create('sandbox', id, backendContext(context, options)),
    has: async (kind, id) => (await registry()).factory(kind, id) !== undefined,
    ids: async (kind) => (await registry()).ids(kind),
    entries: async () => (await registry()).entries(),
  }
}

/** The port over a registry already loaded (tests, benches). */
export function backendsOf(registry: Registry): Backends {
  return createBackends(async () => registry)
}
