/**
 * Reading one config file the slow way (DESIGN.md §3.2): smol-toml parses it (its errors carry
 * line and column), the personal `[worktrees.NAME]` tables are split off or refused, and the zod
 * schema validates the rest, with "did you mean" for unknown keys (STYLE.md "Config"). Imported
 * only when a file changed since it was last validated (config-cache.ts), so a command whose
 * config is unchanged loads neither zod nor the parser.
 */
import {readFileSync} from 'node:fs'
import {parse, TomlError} from 'smol-toml'
import {z} from 'zod'

import {InputError} from '../../sdk/errors.js'
import {nameProblem, OFFSET_SLOTS} from '../identity/identity.js'
import {type Trust, TRUST_LEVELS} from '../worktree/trust-record.js'
import {readableStat} from './config-cache.js'
import {
  CLUSTER_RUNTIMES,
  CONFIG_FILE,
  describeValue,
  didYouMean,
  LOCAL_CONFIG_FILE,
  STACK_EXTERNAL,
  STACK_PROVIDERS,
} from './config-keys.js'
import {knownKeys, localTomlSchema, yardTomlSchema} from './config-schema.js'

type Table = Record<string, unknown>

/**
 * What one file gives once validated: its tables (`yard.toml` by yardTomlSchema, with no
 * `[worktrees.NAME]`; `yard.local.toml` by localTomlSchema) and, for yard.local.toml, the trust
 * of the worktrees it records.
 */
export interface FileTables {
  tables: Table
  trust?: Record<string, Trust>
}

/**
 * Reads, parses and validates one existing config file: `kind` `yard` for a yard.toml (main's or
 * a checkout's), `local` for the main checkout's yard.local.toml.
 * @throws InputError (exit 2) for a TOML syntax error (file:line:column), an unreadable file, a
 *   `[worktrees.NAME]` table in a yard.toml or an invalid one in yard.local.toml, or a key the
 *   schema refuses (file, key path, "did you mean").
 */
export function validatedTables(file: string, kind: 'yard' | 'local'): FileTables {
  const table = readToml(file) ?? {}
  if (kind === 'yard') return {tables: validate(yardTomlSchema, refuseTrustTables(table, file), file)}
  const {rest, trust} = splitTrustTables(table, file)
  return {tables: validate(localTomlSchema, rest, file), trust}
}

/**
 * A TOML file's tables, unvalidated; undefined when the file does not exist. @throws InputError for
 * a syntax error or an unreadable file.
 */
export function readToml(file: string): Table | undefined {
  if (readableStat(file) === undefined) return undefined
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    const {code} = error as NodeJS.ErrnoException
    if (code === 'ENOENT') return undefined
    throw new InputError(`cannot read ${file}: ${(error as Error).message}`, {
      why: 'the file exists but could not be read',
      fix: "check the file's permissions",
    })
  }

  try {
    return parse(text, {integersAsBigInt: true, unsafeKeyBehaviour: 'throw'})
  } catch (error) {
    if (error instanceof TomlError) {
      const first = error.message.split('\n', 1)[0]
      throw new InputError(`${file}:${error.line}:${error.column}: TOML syntax error: ${first}`, {
        why: `line ${error.line}, column ${error.column} is not valid TOML`,
        fix: `correct line ${error.line} of ${file} (TOML reference: https://toml.io/en/v1.0.0)`,
      })
    }

    throw error
  }
}

function keyPath(issuePath: PropertyKey[]): string {
  return issuePath.map(String).join('.')
}

/** Validates one parsed file; the error names the file, the key path and a "did you mean". */
function validate<S extends z.ZodTypeAny>(schema: S, table: Table, file: string): z.infer<S> {
  const result = schema.safeParse(table)
  if (result.success) return result.data
  const issue = result.error.issues[0]
  if (issue.code === 'unrecognized_keys') {
    const parent = issue.path.length === 0 ? undefined : String(issue.path[0])
    const key = issue.keys[0]
    const known = parent === undefined && schema instanceof z.ZodObject ? Object.keys(schema.shape) : knownKeys(parent)
    if (parent === undefined && key === 'worktree-offsets') {
      throw new InputError(`${file}: [worktree-offsets] does not belong in ${CONFIG_FILE}`, {
        why: `offset pins are personal: they are read from the main checkout's ${LOCAL_CONFIG_FILE} only, never from the committed ${CONFIG_FILE}`,
        fix: `move the [worktree-offsets] table to ${LOCAL_CONFIG_FILE} in the main checkout`,
      })
    }

    const where = parent === undefined ? `[${key}]` : `[${parent}] ${key}`
    const suggestion = didYouMean(key, known)
    throw new InputError(
      `${file}: unknown ${parent === undefined ? 'table' : 'key'} ${where}${suggestion ? ` — did you mean "${suggestion}"?` : ''}`,
      {
        why: `known ${parent === undefined ? 'tables' : `keys of [${parent}]`}: ${known.join(', ')}`,
        fix: suggestion
          ? `rename ${key} to ${suggestion}`
          : `remove ${key}, or use one of the known ${parent === undefined ? 'tables' : 'keys'}`,
      },
    )
  }

  const at = keyPath(issue.path)
  throw new InputError(`${file}: invalid value at ${at}: ${plainIssue(issue, valueAt(table, issue.path))}`, {
    why: describeRule(issue.path),
    fix: `edit ${at} in ${file} (see docs/configuration.md)`,
  })
}

function valueAt(table: Table, issuePath: PropertyKey[]): unknown {
  let value: unknown = table
  for (const key of issuePath)
    value = typeof value === 'object' && value !== null ? (value as Record<PropertyKey, unknown>)[key] : undefined
  return value
}

/** A zod issue in plain words (the schema's own messages are already plain). */
function plainIssue(issue: z.core.$ZodIssue, value: unknown): string {
  const got = `got ${describeValue(value)}`
  switch (issue.code) {
    case 'invalid_type': {
      if (issue.expected === 'array')
        return `expected an array of strings, e.g. ${String(issue.path.at(-1))} = ["compose.yaml"], ${got}`
      if (issue.expected === 'object') return `expected a table, ${got}`
      if (issue.expected === 'string') return `expected a string, ${got}`
      return `expected ${issue.expected}, ${got}`
    }

    case 'invalid_value': {
      return `expected one of ${issue.values.map((choice) => JSON.stringify(choice)).join(', ')}, ${got}`
    }

    case 'too_small': {
      return issue.origin === 'array' ? 'expected at least one entry, got an empty array' : issue.message
    }

    default: {
      return issue.message
    }
  }
}

/** Why a key has its rule, in one sentence. */
function describeRule(issuePath: PropertyKey[]): string {
  const [table, key] = issuePath.map(String)
  if (table === 'ports')
    return `[ports] maps environment variable names to base ports from 1 to ${65_535 - OFFSET_SLOTS}; each checkout gets base + offset`
  if (table === 'project' && key === 'prefix')
    return 'the prefix is a name (a-z, 0-9 and inner hyphens) that starts every container, network and volume name of the project'
  if (table === 'stack' && key === 'files')
    return 'the compose files of a stack are a list of paths relative to the checkout, passed to compose in order'
  if (table === 'stack' && key === 'external')
    return `a worktree's external: true volumes and networks are refused, created per checkout or shared: one of ${STACK_EXTERNAL.join(', ')}`
  if (table === 'stack' && (key === 'profiles' || key === 'allow-shared')) return `[stack] ${key} is a list of names`
  if (table === 'stack' && key === 'provider')
    return `yard runs the stack with one of the compose tools ${STACK_PROVIDERS.join(', ')} (auto picks the first found)`
  if (table === 'cluster' && key === 'runtime')
    return `sandboxes run on one of the runtimes ${CLUSTER_RUNTIMES.join(', ')}`
  if (key === undefined)
    return `[${table}] is a table of settings, written [${table}] on a line of its own followed by its keys`
  return `each key of [${table}] has one type; docs/configuration.md lists them`
}

const isTable = (value: unknown): value is Table =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date)

/**
 * Splits the `[worktrees.NAME]` tables (a worktree's trust) off the `[worktrees]` table of the
 * main checkout's yard.local.toml: every key of `[worktrees]` whose value is a table.
 * @throws InputError (exit 2) for an invalid name, a key other than `trust`, or a trust other than
 *   `trusted` / `untrusted`, naming the file and the key.
 */
function splitTrustTables(table: Table, file: string): {rest: Table; trust: Record<string, Trust>} {
  const {worktrees} = table
  if (!isTable(worktrees)) return {rest: table, trust: {}}
  const trust: Record<string, Trust> = {}
  const kept: Table = {}
  for (const [key, value] of Object.entries(worktrees)) {
    if (!isTable(value)) {
      kept[key] = value
      continue
    }

    const problem = nameProblem(key)
    const extra = Object.keys(value).find((inner) => inner !== 'trust')
    const level = value.trust
    if (problem !== undefined || extra !== undefined || !(TRUST_LEVELS as readonly unknown[]).includes(level)) {
      const what =
        problem === undefined
          ? extra === undefined
            ? `trust must be one of ${TRUST_LEVELS.map((item) => JSON.stringify(item)).join(', ')}, got ${describeValue(level)}`
            : `unknown key ${extra}`
          : `"${key}" is not a worktree name: ${problem}`
      throw new InputError(`${file}: invalid [worktrees.${key}]: ${what}`, {
        why: 'a [worktrees.NAME] table records one worktree\'s trust: `trust = "untrusted"` runs its stack and box on a machine of its own',
        fix: `edit [worktrees.${key}] in ${file}, or record it with \`yard worktree trust NAME --untrusted\``,
      })
    }

    trust[key] = level as Trust
  }

  return {rest: {...table, worktrees: kept}, trust}
}

/**
 * `[worktrees.NAME]` is personal, like the offset pins: refused in a yard.toml (code in a branch
 * could otherwise declare itself trusted).
 * @throws InputError (exit 2) naming the file and the table.
 */
function refuseTrustTables(table: Table, file: string): Table {
  const {worktrees} = table
  const name = isTable(worktrees) ? Object.keys(worktrees).find((key) => isTable(worktrees[key])) : undefined
  if (name === undefined) return table
  throw new InputError(`${file}: [worktrees.${name}] does not belong in ${CONFIG_FILE}`, {
    why: `a worktree's trust is personal: it is read from the main checkout's ${LOCAL_CONFIG_FILE} only, never from a committed ${CONFIG_FILE}`,
    fix: `move the [worktrees.${name}] table to ${LOCAL_CONFIG_FILE} in the main checkout (\`yard worktree trust ${name} --untrusted\` writes it)`,
  })
}
