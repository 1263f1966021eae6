/**
 * Config loading (DESIGN.md §3.2): project-wide tables from the main checkout's `yard.toml`;
 * per-checkout tables (`[ports]`, `[stack]`, `[box]`) from the targeted checkout's `yard.toml`
 * when it has the table, else from main's; the main checkout's `yard.local.toml` deep-merged over
 * both; then the environment overrides of Appendix B. Every value keeps its origin.
 */
import {existsSync, lstatSync, readFileSync, readlinkSync, statSync} from 'node:fs'
import path from 'node:path'
import {parse, TomlError} from 'smol-toml'
import {z} from 'zod'

import {InputError} from '../../sdk/errors.js'
import {shellQuote} from '../../sdk/shell.js'
import {NAME_PATTERN, nameProblem, OFFSET_SLOTS, prefixFromDirectory, validatePrefix} from '../identity/identity.js'
import {stateDir} from '../kernel/state.js'
import {repositoryRoot} from '../workspace/bare-layout.js'
import {type Trust, TRUST_LEVELS} from '../worktree/trust-record.js'
import {
  type BOX_MOUNTS,
  checkoutTables,
  CLUSTER_RUNTIMES,
  describeValue,
  didYouMean,
  ENV_OVERRIDES,
  knownKeys,
  localTomlSchema,
  STACK_EXTERNAL,
  STACK_PROVIDERS,
  yardTomlSchema,
} from './config-schema.js'

export const CONFIG_FILE = 'yard.toml'
export const LOCAL_CONFIG_FILE = 'yard.local.toml'

/** Where a value came from: `default`, `yard.toml` (main's), `<name>/yard.toml`, `yard.local.toml`, `env:NAME`. */
export type Origin = string

export interface ProjectConfig {
  project: {prefix: string; 'main-worktree'?: string}
  /**
   * `copy`: gitignored files `worktree add` copies from main; `keep-ignored`: ignored files
   * `worktree remove` keeps (default: `copy`).
   */
  worktrees: {root: string; base?: string; 'transcripts-archive'?: string; copy: string[]; 'keep-ignored': string[]}
  machine: {backend: string; name: string; cpus: number; 'memory-mib': number; 'disk-gib': number}
  stack: {
    backend: string
    provider: (typeof STACK_PROVIDERS)[number]
    files?: string[]
    profiles: string[]
    external: (typeof STACK_EXTERNAL)[number]
    'allow-shared': string[]
  }
  /** `mounts`: what the box can reach (docs/stacks.md); never from a worktree's own yard.toml. */
  box: {image?: string; mounts: (typeof BOX_MOUNTS)[number]}
  /** `lfs`: `[cache] lfs`; absent = the cache backend decides (git-cache: "all" when the repository uses LFS). */
  cache: {backend: string; root: string; lfs?: 'all' | 'off'; 'fetch-through-seconds': number}
  cluster: {
    backend: string
    runtime: (typeof CLUSTER_RUNTIMES)[number]
    context?: string
    namespace: string
    image?: string
    'cache-root': string
    'refresh-interval'?: string
    'ready-timeout-seconds': number
    'cache-timeout-seconds': number
  }
  /** `[ports]`: env var name → base port. */
  ports: Record<string, number>
  /** Raw `[worktree-offsets]` pins of the main checkout's yard.local.toml (checked when used). */
  pins: Record<string, unknown>
  /**
   * `[worktrees.NAME] trust` of the main checkout's yard.local.toml: the worktrees recorded there
   * (absent: trusted).
   */
  trust: Record<string, Trust>
  /** `table.key` → origin, for every value above (`ports.APP_PORT`, `worktree-offsets.feat`). */
  origins: Record<string, Origin>
  /** The files read, absolute (absent ones too). */
  files: {main: string; checkout?: string; local: string}
}

export interface LoadConfigOptions {
  /** Absolute real path of the main checkout. */
  mainPath: string
  /** The targeted checkout when it is not main: its path and name (for origins and warnings). */
  checkout?: {path: string; name: string}
  env: NodeJS.ProcessEnv
  warn?: (message: string) => void
}

type Table = Record<string, unknown>

/**
 * Checks that a config file is something yard can read: absent, or a regular file (through a
 * symlink that resolves). A dangling link, a directory or a FIFO is refused before it is read (a
 * FIFO would block the read forever).
 * @returns false when the file does not exist.
 * @throws InputError (exit 2) for a dangling symlink or anything that is not a regular file.
 */
function checkReadable(file: string): boolean {
  let link
  try {
    link = lstatSync(file)
  } catch (error) {
    const {code} = error as NodeJS.ErrnoException
    if (code === 'ENOENT' || code === 'ENOTDIR') return false
    throw new InputError(`cannot read ${file}: ${(error as Error).message}`, {
      why: 'yard could not look at the file',
      fix: 'check the permissions of the file and its directory',
    })
  }

  let stats = link
  if (link.isSymbolicLink()) {
    let target = '?'
    try {
      target = readlinkSync(file)
    } catch {
      // The target is only for the message.
    }

    try {
      stats = statSync(file)
    } catch {
      throw new InputError(`${file} is a symlink to ${target}, which does not exist`, {
        why: 'a dangling link is not taken for an absent file: the settings it was meant to hold would silently be missing',
        fix: `restore ${target}, or remove the link (rm ${shellQuote(file)})`,
      })
    }
  }

  if (stats.isFile()) return true
  const kind = stats.isDirectory()
    ? 'a directory'
    : stats.isFIFO()
      ? 'a named pipe (FIFO)'
      : stats.isSocket()
        ? 'a socket'
        : 'a device or other special file'
  throw new InputError(`${file} is ${kind}, not a file`, {
    why: `yard reads its settings from a regular TOML file named ${path.basename(file)}`,
    fix: `move it out of the way and write the settings to a file ${file}`,
  })
}

/** Reads and parses one TOML file; undefined when it does not exist. */
/**
 * A TOML file's tables, unvalidated; undefined when the file does not exist. @throws InputError for
 * a syntax error or an unreadable file.
 */
export function readToml(file: string): Table | undefined {
  if (!checkReadable(file)) return undefined
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

const PER_CHECKOUT = Object.keys(checkoutTables)

function stripUndefined<T extends Table>(table: T): T {
  return Object.fromEntries(Object.entries(table).filter(([, value]) => value !== undefined)) as T
}

/**
 * Loads the effective config for one checkout (DESIGN.md §3.2).
 * @throws InputError (exit 2) for a TOML syntax error (file:line:column), an invalid or unknown
 *   key (file, key path, "did you mean"), an invalid prefix, or overlapping `[ports]` ranges.
 */
export function loadConfig(options: LoadConfigOptions): ProjectConfig {
  const {mainPath, checkout, env} = options
  const files = {
    main: path.join(mainPath, CONFIG_FILE),
    checkout: checkout ? path.join(checkout.path, CONFIG_FILE) : undefined,
    local: path.join(mainPath, LOCAL_CONFIG_FILE),
  }
  const mainToml = validate(
    yardTomlSchema,
    refuseTrustTables(readToml(files.main) ?? {}, files.main),
    files.main,
  ) as Table
  const {rest: localRest, trust} = splitTrustTables(readToml(files.local) ?? {}, files.local)
  // An untrusted worktree's yard.toml is its code's to write: it could pick a backend that runs
  // on the host, share volumes or hide the worktree; such a checkout runs with main's config.
  const untrusted = checkout !== undefined && trust[checkout.name] === 'untrusted'
  if (
    untrusted &&
    files.checkout &&
    existsSync(files.checkout) &&
    readFileSync(files.checkout, 'utf8') !== (existsSync(files.main) ? readFileSync(files.main, 'utf8') : '')
  )
    options.warn?.(
      `note: ${files.checkout} is not read (it differs from main's): ${checkout.name} is untrusted, so it runs with the main checkout's ${CONFIG_FILE} and ${LOCAL_CONFIG_FILE}`,
    )
  const checkoutToml =
    files.checkout && !untrusted
      ? (validate(
          yardTomlSchema,
          refuseTrustTables(readToml(files.checkout) ?? {}, files.checkout),
          files.checkout,
        ) as Table)
      : undefined
  const localToml = validate(localTomlSchema, localRest, files.local) as Table
  const checkoutOrigin = checkout ? `${checkout.name}/${CONFIG_FILE}` : CONFIG_FILE

  const values: Record<string, Table> = {}
  const origins: Record<string, Origin> = {}
  const take = (table: string, source: Table | undefined, origin: Origin) => {
    const content = source?.[table] as Table | undefined
    if (content === undefined) return
    values[table] = {...values[table], ...stripUndefined(content)}
    for (const key of Object.keys(stripUndefined(content))) origins[`${table}.${key}`] = origin
  }

  for (const table of Object.keys(yardTomlSchema.shape)) {
    const fromCheckout = PER_CHECKOUT.includes(table) && checkoutToml?.[table] !== undefined
    take(table, fromCheckout ? checkoutToml : mainToml, fromCheckout ? checkoutOrigin : CONFIG_FILE)
    if (
      !PER_CHECKOUT.includes(table) &&
      checkoutToml?.[table] !== undefined &&
      JSON.stringify(checkoutToml[table], bigintSafe) !== JSON.stringify(mainToml[table], bigintSafe)
    ) {
      options.warn?.(
        `warning: ${files.checkout} sets [${table}] differently from the main checkout's ${CONFIG_FILE}; project-wide tables are read from the main checkout only, so it is ignored`,
      )
    }

    take(table, localToml, LOCAL_CONFIG_FILE)
  }

  // [box] mounts bounds what code in the box reaches; that code can edit its worktree's yard.toml.
  if (origins['box.mounts'] === checkoutOrigin && checkout) {
    const fromMain = (mainToml.box as Table | undefined)?.mounts
    if (fromMain !== values.box.mounts)
      options.warn?.(
        `warning: ${files.checkout} sets [box] mounts; it is read from the main checkout's ${CONFIG_FILE} and ${LOCAL_CONFIG_FILE} only, so it is ignored`,
      )
    if (fromMain === undefined) {
      delete values.box.mounts
      delete origins['box.mounts']
    } else {
      values.box.mounts = fromMain
      origins['box.mounts'] = CONFIG_FILE
    }
  }

  const pins = (localToml['worktree-offsets'] as Table | undefined) ?? {}
  for (const name of Object.keys(pins)) origins[`worktree-offsets.${name}`] = LOCAL_CONFIG_FILE
  for (const name of Object.keys(trust)) origins[`worktrees.${name}.trust`] = LOCAL_CONFIG_FILE

  for (const [variable, dotted] of Object.entries(ENV_OVERRIDES)) {
    const value = env[variable]
    if (value === undefined || value.trim() === '') continue
    const [table, key] = dotted.split('.', 2)
    if (value.startsWith('-')) {
      throw new InputError(`invalid ${variable} "${value}": it starts with "-"`, {
        why: `${variable} sets [${table}] ${key}, which is handed to a tool as an argument, and a leading "-" would be read as an option`,
        fix: `unset ${variable}, or set it to a value that does not start with "-"`,
      })
    }

    values[table] = {...values[table], [key]: value}
    origins[dotted] = `env:${variable}`
  }

  if (
    values.stack?.provider !== undefined &&
    !(STACK_PROVIDERS as readonly string[]).includes(values.stack.provider as string)
  ) {
    throw new InputError(`invalid stack provider "${values.stack.provider}" from ${origins['stack.provider']}`, {
      why: `yard runs the stack with one of the compose tools ${STACK_PROVIDERS.join(', ')} (auto picks the first found)`,
      fix: origins['stack.provider']?.startsWith('env:')
        ? `set ${origins['stack.provider'].slice(4)} to one of them, or unset it`
        : 'set [stack] provider to one of them',
    })
  }

  const namespace = values.cluster?.namespace
  if (
    namespace !== undefined &&
    !(typeof namespace === 'string' && namespace.length <= 63 && NAME_PATTERN.test(namespace))
  ) {
    throw new InputError(
      `invalid Kubernetes namespace "${String(namespace)}" from ${originLabel(origins['cluster.namespace'], 'cluster', 'namespace')}`,
      {
        why: 'a namespace is a DNS-1123 label: a-z, 0-9 and inner hyphens, at most 63 characters',
        fix: `use "${prefixFromDirectory(String(namespace))}"`,
      },
    )
  }

  const config = withDefaults(values, origins, mainPath, env)
  checkPortRanges(config, origins, files)
  return {...config, pins, trust, origins, files}
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

function bigintSafe(_key: string, value: unknown) {
  return typeof value === 'bigint' ? value.toString() : value
}

function withDefaults(
  values: Record<string, Table>,
  origins: Record<string, Origin>,
  mainPath: string,
  env: NodeJS.ProcessEnv,
) {
  const def = <T>(dotted: string, value: T): T => {
    const [table, key] = dotted.split('.', 2)
    const current = values[table]?.[key]
    if (current !== undefined) return current as T
    origins[dotted] = 'default'
    return value
  }

  // The bare layout's main checkout is a worktree beside the bare repository: the repository's root
  // names it (DESIGN.md §3.3).
  const root = repositoryRoot(mainPath)
  const prefixValue = def('project.prefix', prefixFromDirectory(path.basename(root)))
  const prefix =
    origins['project.prefix'] === 'default'
      ? prefixValue
      : validatePrefix(prefixValue, originLabel(origins['project.prefix'], 'project', 'prefix'))
  const namespace = def('cluster.namespace', 'yard')
  const optional = (table: string, key: string) => values[table]?.[key] as string | undefined
  return {
    project: stripUndefined({prefix, 'main-worktree': optional('project', 'main-worktree')}),
    worktrees: stripUndefined({
      root: path.resolve(mainPath, def('worktrees.root', root === mainPath ? `${mainPath}-worktrees` : root)),
      base: optional('worktrees', 'base'),
      'transcripts-archive': optional('worktrees', 'transcripts-archive'),
      copy: def('worktrees.copy', ['.env']),
      'keep-ignored': def('worktrees.keep-ignored', def('worktrees.copy', ['.env'])),
    }),
    machine: {
      backend: def('machine.backend', process.platform === 'darwin' ? 'podman-machine' : 'native'),
      name: def('machine.name', `yard-${prefix}`),
      cpus: def('machine.cpus', 2),
      'memory-mib': def('machine.memory-mib', 4096),
      'disk-gib': def('machine.disk-gib', 60),
    },
    stack: stripUndefined({
      backend: def('stack.backend', 'compose-stack'),
      provider: def<(typeof STACK_PROVIDERS)[number]>('stack.provider', 'auto'),
      files: values.stack?.files as string[] | undefined,
      profiles: def('stack.profiles', [] as string[]),
      external: def<(typeof STACK_EXTERNAL)[number]>('stack.external', 'refuse'),
      'allow-shared': def('stack.allow-shared', [] as string[]),
    }),
    box: {
      ...stripUndefined({image: optional('box', 'image')}),
      mounts: def<(typeof BOX_MOUNTS)[number]>('box.mounts', 'all'),
    },
    cache: {
      backend: def('cache.backend', 'git-cache'),
      root: path.resolve(mainPath, def('cache.root', path.join(stateDir(env), 'caches'))),
      'fetch-through-seconds': def('cache.fetch-through-seconds', 10),
      ...stripUndefined({lfs: optional('cache', 'lfs') as 'all' | 'off' | undefined}),
    },
    cluster: stripUndefined({
      backend: def('cluster.backend', 'k8s-sandbox'),
      runtime: def<(typeof CLUSTER_RUNTIMES)[number]>('cluster.runtime', 'podman'),
      context: optional('cluster', 'context'),
      namespace,
      image: optional('cluster', 'image'),
      'cache-root': def('cluster.cache-root', `/var/lib/yard/${namespace}/caches`),
      'refresh-interval': optional('cluster', 'refresh-interval'),
      'ready-timeout-seconds': def('cluster.ready-timeout-seconds', 120),
      'cache-timeout-seconds': def('cluster.cache-timeout-seconds', 600),
    }),
    ports: (values.ports ?? {}) as Record<string, number>,
  }
}

/** "env YARD_PREFIX" or "yard.toml [project] prefix", for messages. */
export function originLabel(origin: Origin | undefined, table: string, key: string): string {
  if (origin?.startsWith('env:')) return `env ${origin.slice(4)}`
  return `${origin ?? 'default'} [${table}] ${key}`
}

/**
 * Checks that no two `[ports]` ranges `[base, base + 89]` overlap (DESIGN.md §3.4, "Ports"):
 * otherwise one worktree's APP_PORT is another's API_PORT.
 * @throws InputError (exit 2) naming both keys and where they are set.
 */
function checkPortRanges(
  config: {ports: Record<string, number>},
  origins: Record<string, Origin>,
  files: {main: string; checkout?: string; local: string},
): void {
  const fileOf = (key: string) => {
    const origin = origins[`ports.${key}`]
    return origin === LOCAL_CONFIG_FILE
      ? files.local
      : origin === CONFIG_FILE
        ? files.main
        : (files.checkout ?? files.main)
  }

  const entries = Object.entries(config.ports).sort((a, b) => a[1] - b[1])
  for (let i = 1; i < entries.length; i++) {
    const [lowKey, lowBase] = entries[i - 1]
    const [highKey, highBase] = entries[i]
    if (highBase <= lowBase + OFFSET_SLOTS) {
      const where = [...new Set([fileOf(lowKey), fileOf(highKey)])].join(' and ')
      throw new InputError(
        `${where}: [ports] ${lowKey} = ${lowBase} and ${highKey} = ${highBase} overlap: ${lowKey} uses ${lowBase}..${lowBase + OFFSET_SLOTS}`,
        {
          why: `every checkout adds an offset of up to ${OFFSET_SLOTS} to each base, so bases must be at least ${OFFSET_SLOTS + 1} apart or one worktree's ${highKey} is another's ${lowKey}`,
          fix: `set ${highKey} to ${lowBase + OFFSET_SLOTS + 1} or more in [ports] of ${fileOf(highKey)}`,
        },
      )
    }
  }
}
