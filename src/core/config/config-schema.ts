/**
 * The schema of `yard.toml` and `yard.local.toml` (DESIGN.md §3.2). It is the source of
 * docs/configuration.md: every key, its type and its environment override are listed here.
 * Keys are kebab-case; integers come from the TOML parser as bigint, so floats, booleans and
 * strings are refused where an integer is meant.
 */
import {z} from 'zod'

import {parseRefreshInterval} from '../../sdk/duration.js'
import {imageReferenceProblem} from '../machine/image-reference.js'
import {
  BOX_MOUNTS,
  type CHECKOUT_TABLES,
  CLUSTER_RUNTIMES,
  describeValue,
  MACHINE_NAME_PATTERN,
  MAX_PORT_BASE,
  PORT_KEY_PATTERN,
  type PROJECT_TABLES,
  RESERVED_PORT_KEYS,
  STACK_EXTERNAL,
  STACK_PROVIDERS,
} from './config-keys.js'

const isRefreshInterval = (value: string) => {
  try {
    return parseRefreshInterval(value) > 0
  } catch {
    return false
  }
}

/** A TOML integer within [min, max], as a number. */
export function tomlInteger(min: number, max: number) {
  return z.unknown().transform((value, context) => {
    const number = typeof value === 'bigint' ? Number(value) : undefined
    if (number === undefined || number < min || number > max) {
      context.addIssue({
        code: 'custom',
        message: `expected an integer from ${min} to ${max}, got ${describeValue(value)}`,
      })
      return z.NEVER
    }

    return number
  })
}

/** `[ports]`: a table of environment variable name → base port (DESIGN.md §3.4, "Ports"). */
function portsTable() {
  const base = tomlInteger(1, MAX_PORT_BASE)
  return z.unknown().transform((value, context) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      context.addIssue({code: 'custom', message: `expected a table of NAME = base port, got ${describeValue(value)}`})
      return z.NEVER
    }

    const ports: Record<string, number> = {}
    for (const [key, raw] of Object.entries(value)) {
      if (!PORT_KEY_PATTERN.test(key)) {
        context.addIssue({
          code: 'custom',
          path: [key],
          message:
            'a port key is an environment variable name: upper-case letters, digits and _, not starting with a digit',
        })
      } else if (RESERVED_PORT_KEYS.includes(key) || key.startsWith('YARD_')) {
        context.addIssue({
          code: 'custom',
          path: [key],
          message: `${key} is a variable yard or your shell already uses; exporting a port under that name would overwrite it`,
        })
      } else {
        const parsed = base.safeParse(raw)
        if (parsed.success) ports[key] = parsed.data
        else context.addIssue({code: 'custom', path: [key], message: parsed.error.issues[0].message})
      }
    }

    return ports
  })
}

/**
 * A non-empty string that does not start with `-`: config values reach tools' argv (`podman
 * machine init NAME`, `--context X`, `git rev-parse BASE`), where a leading `-` is read as an option.
 */
const text = () =>
  z
    .string({error: (issue) => `expected a string, got ${describeValue(issue.input)}`})
    .min(1, 'must not be empty')
    .refine((value) => !value.startsWith('-'), {
      message: 'must not start with "-": the tool it is handed to would read it as an option',
    })

/** An image reference (core/machine/image-reference.ts). */
const image = () =>
  z.string({error: (issue) => `expected a string, got ${describeValue(issue.input)}`}).superRefine((value, context) => {
    const problem = imageReferenceProblem(value)
    if (problem !== undefined)
      context.addIssue({code: 'custom', message: `${JSON.stringify(value)} is not an image reference: ${problem}`})
  })

/** Project-wide tables: read from the main checkout only (DESIGN.md §3.2); keys as PROJECT_TABLES. */
export const projectTables = {
  project: z.strictObject({prefix: text(), 'main-worktree': text()}),
  worktrees: z.strictObject({
    root: text(),
    base: text(),
    'transcripts-archive': text(),
    copy: z.array(text()),
    'keep-ignored': z.array(text()),
  }),
  machine: z.strictObject({
    backend: text(),
    name: text().regex(
      MACHINE_NAME_PATTERN,
      'a machine name is a letter or digit followed by letters, digits, "_", "." and "-"',
    ),
    cpus: tomlInteger(1, 256),
    'memory-mib': tomlInteger(256, 1_048_576),
    'disk-gib': tomlInteger(1, 65_536),
  }),
  cache: z.strictObject({
    backend: text(),
    root: text(),
    lfs: z.enum(['all', 'off']),
    'fetch-through-seconds': tomlInteger(1, 600),
  }),
  cluster: z.strictObject({
    backend: text(),
    runtime: z.enum(CLUSTER_RUNTIMES),
    context: text(),
    namespace: text(),
    image: image(),
    'cache-root': text(),
    'refresh-interval': text().refine(
      isRefreshInterval,
      'expected hours, minutes and seconds such as 90s, 10m or 1h30m, from 1s to 168h',
    ),
    'ready-timeout-seconds': tomlInteger(1, 3600),
    'cache-timeout-seconds': tomlInteger(1, 86_400),
  }),
} satisfies Record<(typeof PROJECT_TABLES)[number], z.ZodTypeAny>

/** Per-checkout tables (DESIGN.md §3.2); keys as CHECKOUT_TABLES. */
export const checkoutTables = {
  ports: portsTable(),
  stack: z.strictObject({
    backend: text(),
    provider: z.enum(STACK_PROVIDERS),
    files: z.array(text()).min(1),
    profiles: z.array(text()),
    external: z.enum(STACK_EXTERNAL),
    'allow-shared': z.array(text()),
  }),
  box: z.strictObject({image: image(), mounts: z.enum(BOX_MOUNTS)}),
} satisfies Record<(typeof CHECKOUT_TABLES)[number], z.ZodTypeAny>

const partial = <T extends Record<string, z.ZodTypeAny>>(tables: T) =>
  Object.fromEntries(
    Object.entries(tables).map(([key, schema]) => [
      key,
      (schema instanceof z.ZodObject ? schema.partial() : schema).optional(),
    ]),
  ) as {[K in keyof T]: z.ZodOptional<T[K]>}

/** `yard.toml`: every table optional, every key optional. */
export const yardTomlSchema = z.strictObject({...partial(projectTables), ...partial(checkoutTables)})

/** `yard.local.toml`: the same, plus `[worktree-offsets]` (pins are checked by identity rules). */
export const localTomlSchema = z.strictObject({
  ...partial(projectTables),
  ...partial(checkoutTables),
  'worktree-offsets': z.record(z.string(), z.unknown()).optional(),
})

/** Known keys of each table, for "did you mean" (the schema's own key lists). */
export function knownKeys(table?: string): string[] {
  if (table === undefined) return Object.keys(localTomlSchema.shape)
  const schema =
    (projectTables as Record<string, z.ZodTypeAny>)[table] ?? (checkoutTables as Record<string, z.ZodTypeAny>)[table]
  return schema instanceof z.ZodObject ? Object.keys(schema.shape) : []
}
