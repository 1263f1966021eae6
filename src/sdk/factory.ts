/**
 * What a `yard:backends` hook returns (DESIGN.md §2 "Backends", §7) and the contract version; the
 * checks the registry applies to a hook's result are factory-check.ts (zod, loaded only when a
 * plugin's hooks are checked). Part of the plugin SDK, `@yard-dev/cli/backend` (src/sdk/index.ts).
 */
import type {CacheBackend} from './cache.js'
import type {MachineBackend} from './machine.js'
import type {SandboxBackend} from './sandbox.js'
import type {StackBackend} from './stack.js'
import type {BackendContext} from './target.js'

/** The contract major this CLI implements. A factory declaring another major is `incompatible`. */
export const CONTRACT_VERSION = 1

export const BACKEND_KINDS = ['machine', 'stack', 'cache', 'sandbox'] as const
export type BackendKind = (typeof BACKEND_KINDS)[number]

export type Backend = MachineBackend | StackBackend | CacheBackend | SandboxBackend

/** What a `yard:backends` hook returns, one per backend. */
export interface BackendFactory<B extends Backend = Backend> {
  kind: B['kind']
  /** Unique per kind; the value of `[<kind>] backend` that selects it. */
  id: string
  /** The contract version it implements: `1`, `"1"` or `"1.x"`; only the major is compared. */
  contract: number | string
  description?: string
  create(context: BackendContext): B | Promise<B>
}

/** The result of one plugin's `yard:backends` hook. */
export type BackendsHookResult = BackendFactory[]

/** A backend id: the value of `[<kind>] backend` that selects it. */
export const BACKEND_ID_PATTERN = /^[a-z0-9][a-z0-9-]*$/

/** `1`, `"1"`, `"1.2"`, `"1.x"`, `"1.2.3"`: only the leading major counts. */
const CONTRACT_STRING_PATTERN = /^(\d+)(?:\.(?:\d+|x))*$/

/** The outcome of checking one element of a hook's result. */
export type FactoryCheck =
  | {status: 'ok'; factory: BackendFactory; major: number}
  | {status: 'incompatible'; major: number; reason: string}
  | {status: 'broken'; reason: string}

/**
 * The major of a declared contract: `1` → 1, `"1.x"` → 1; undefined when it is neither a
 * non-negative integer nor a dotted version string.
 */
export function contractMajor(contract: unknown): number | undefined {
  if (typeof contract === 'number') return Number.isInteger(contract) && contract >= 0 ? contract : undefined
  if (typeof contract !== 'string') return undefined
  const match = CONTRACT_STRING_PATTERN.exec(contract)
  return match ? Number(match[1]) : undefined
}

/** A short, stable description of a value for error messages. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null'
  if (value === undefined) return 'undefined'
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value)
  if (typeof value === 'function') return 'a function'
  if (Array.isArray(value)) return 'an array'
  return 'an object'
}
