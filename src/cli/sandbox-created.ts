/**
 * What `yard sandbox create` prints for a sandbox it made, one line each, as both of its start-up
 * paths print it (src/commands/sandbox/create.ts through oclif, fast-create.ts without).
 */
import type {CreateResult} from '../core/sandbox/index.js'

/** The summary, each slot's checkout and the published ports (KEY=PORT), unescaped: the caller escapes. */
export function createdLines(result: CreateResult): string[] {
  return [
    `created sandbox ${result.name} (pod ${result.project}, ${result.runtime}, ${result.start === 'warm' ? 'warm: claimed from a pool' : 'cold'}) offset ${result.offset} [${result.offsetSource}]`,
    ...result.slots.map((slot) => `  ${slot.slot}: ${slot.path} on ${result.branch}  (default: ${slot.default})`),
    ...Object.entries(result.ports).map(([key, port]) => `  ${key}=${port}`),
  ]
}

/** The runtimes `--runtime` of `yard sandbox create` takes (both start-up paths check the same list). */
export const SANDBOX_RUNTIMES = ['podman', 'kubernetes'] as const
