/**
 * What a `yard:backends` hook returns (DESIGN.md §2 "Backends", §7), the contract version, and
 * the checks the registry applies to a hook's result.
 * Part of the plugin SDK, `@yard-dev/cli/backend` (src/sdk/index.ts).
 */
import {z} from 'zod'

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

/**
 * The shape of one element of a `yard:backends` hook's result (DESIGN.md §2), exported through
 * the SDK. It checks the fields only; `checkFactory` also compares the contract major.
 */
export const backendFactorySchema = z.object({
  kind: z.enum(BACKEND_KINDS, {error: `must be one of ${BACKEND_KINDS.join(', ')}`}),
  id: z.string({error: 'must be a string'}).regex(BACKEND_ID_PATTERN, {
    error: 'must be lowercase letters, digits and dashes, starting with a letter or digit',
  }),
  contract: z.custom<number | string>((value) => contractMajor(value) !== undefined, {
    error: 'must be a contract version such as 1, "1" or "1.x"',
  }),
  description: z.string({error: 'must be a string'}).optional(),
  create: z.custom<BackendFactory['create']>((value) => typeof value === 'function', {error: 'must be a function'}),
})

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

/**
 * Checks one element of a `yard:backends` hook result against the factory schema and the
 * contract this CLI implements (`CONTRACT_VERSION`). Never throws; a failure carries a reason
 * that names the offending field and the value found.
 *
 * @param value the element as the plugin returned it
 * @param position 1-based position in the hook's result, named when the element is no object
 * @param plugin the plugin's package name, named in the reason of an incompatible factory
 */
export function checkFactory(value: unknown, position: number, plugin: string): FactoryCheck {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return {status: 'broken', reason: `backend factory #${position} is ${describeValue(value)}, not an object`}
  }

  const parsed = backendFactorySchema.safeParse(value)
  if (!parsed.success) {
    const fields = value as Record<string, unknown>
    const problems = parsed.error.issues.map((issue) => {
      const key = String(issue.path[0] ?? '')
      return `${key}: ${issue.message}, got ${describeValue(fields[key])}`
    })
    return {status: 'broken', reason: `malformed backend factory: ${problems.join('; ')}`}
  }

  // The original object is kept, not zod's copy: `create` may rely on `this`.
  const factory = value as BackendFactory
  const major = contractMajor(factory.contract)!
  if (major !== CONTRACT_VERSION) {
    return {
      status: 'incompatible',
      major,
      reason: `implements backend contract ${major}, but this yard supports contract ${CONTRACT_VERSION}: install a release of ${plugin} made for contract ${CONTRACT_VERSION}, or a yard that supports contract ${major}`,
    }
  }

  return {status: 'ok', factory, major}
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
