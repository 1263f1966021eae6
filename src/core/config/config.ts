/**
 * Config loading (DESIGN.md §3.2): project-wide tables from the main checkout's `yard.toml`;
 * per-checkout tables (`[ports]`, `[stack]`, `[box]`) from the targeted checkout's `yard.toml`
 * when it has the table, else from main's; the main checkout's `yard.local.toml` deep-merged over
 * both; then the environment overrides of Appendix B. Every value keeps its origin.
 */
import {existsSync, readFileSync} from 'node:fs'
import path from 'node:path'

import type {Trust} from '../worktree/trust-record.js'
import type {FileTables} from './config-files.js'

import {InputError} from '../../sdk/errors.js'
import {NAME_PATTERN, OFFSET_SLOTS, prefixFromDirectory, validatePrefix} from '../identity/identity.js'
import {stateDir} from '../kernel/state.js'
import {repositoryRoot} from '../workspace/bare-layout.js'
import {ConfigCache, readableStat} from './config-cache.js'
import {
  type BOX_MOUNTS,
  CHECKOUT_TABLES,
  type CLUSTER_RUNTIMES,
  CONFIG_FILE,
  ENV_OVERRIDES,
  LOCAL_CONFIG_FILE,
  PROJECT_TABLES,
  type STACK_EXTERNAL,
  STACK_PROVIDERS,
} from './config-keys.js'

export {configCachePath} from './config-cache.js'
export {LOCAL_CONFIG_FILE} from './config-keys.js'
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
  /**
   * The repository's config cache file (configCachePath): files unchanged since they were last
   * validated are not parsed again. Without it every file is parsed and validated.
   */
  cache?: string
}

type Table = Record<string, unknown>

const PER_CHECKOUT: readonly string[] = CHECKOUT_TABLES

/**
 * What one config file gives (config-files.ts validatedTables): from the cache when the file is
 * unchanged since it was validated, else read, validated and kept. An absent file gives empty
 * tables, and needs no parser. @throws InputError (exit 2) as validatedTables does.
 */
async function fileTables(file: string, kind: 'yard' | 'local', cache: ConfigCache): Promise<FileTables> {
  const stats = readableStat(file)
  if (stats === undefined) return kind === 'local' ? {tables: {}, trust: {}} : {tables: {}}
  const kept = cache.get(file, kind, stats)
  if (kept !== undefined) return kept
  const {validatedTables} = await import('./config-files.js')
  const tables = validatedTables(file, kind)
  cache.set(file, kind, stats, tables)
  return tables
}

function stripUndefined<T extends Table>(table: T): T {
  return Object.fromEntries(Object.entries(table).filter(([, value]) => value !== undefined)) as T
}

/**
 * Loads the effective config for one checkout (DESIGN.md §3.2).
 * @throws InputError (exit 2) for a TOML syntax error (file:line:column), an invalid or unknown
 *   key (file, key path, "did you mean"), an invalid prefix, or overlapping `[ports]` ranges.
 */
export async function loadConfig(options: LoadConfigOptions): Promise<ProjectConfig> {
  const {mainPath, checkout, env} = options
  const files = {
    main: path.join(mainPath, CONFIG_FILE),
    checkout: checkout ? path.join(checkout.path, CONFIG_FILE) : undefined,
    local: path.join(mainPath, LOCAL_CONFIG_FILE),
  }
  const cache = ConfigCache.open(options.cache)
  const mainToml = (await fileTables(files.main, 'yard', cache)).tables
  const local = await fileTables(files.local, 'local', cache)
  const trust: Record<string, Trust> = local.trust ?? {}
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
    files.checkout && !untrusted ? (await fileTables(files.checkout, 'yard', cache)).tables : undefined
  const localToml = local.tables
  cache.save()
  const checkoutOrigin = checkout ? `${checkout.name}/${CONFIG_FILE}` : CONFIG_FILE

  const values: Record<string, Table> = {}
  const origins: Record<string, Origin> = {}
  const take = (table: string, source: Table | undefined, origin: Origin) => {
    const content = source?.[table] as Table | undefined
    if (content === undefined) return
    values[table] = {...values[table], ...stripUndefined(content)}
    for (const key of Object.keys(stripUndefined(content))) origins[`${table}.${key}`] = origin
  }

  for (const table of [...PROJECT_TABLES, ...CHECKOUT_TABLES]) {
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
