/**
 * The checks the registry applies to each element of a `yard:backends` hook's result (DESIGN.md
 * §2 "Backends", §7): the factory schema (zod) and the contract major. Part of the plugin SDK,
 * `@yard-dev/cli/backend` (src/sdk/index.ts), so a plugin can test its factories as yard sees them.
 */
import {z} from 'zod'

import {
  BACKEND_ID_PATTERN,
  BACKEND_KINDS,
  type BackendFactory,
  CONTRACT_VERSION,
  contractMajor,
  describeValue,
  type FactoryCheck,
} from './factory.js'

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
