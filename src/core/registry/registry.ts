/**
 * The backend registry (DESIGN.md §2 "Backends", §7): runs the oclif hook `yard:backends` once
 * per process, checks every factory it returns, and indexes the good ones by kind and id.
 *
 * A plugin that throws, times out, returns something malformed or declares another contract
 * major is recorded (`broken` / `incompatible`, with the reason) and skipped; loading the
 * registry never throws because of a plugin.
 *
 * oclif is imported only when its hooks are run (`loadRegistry`): `builtinRegistry`
 * (builtin.ts) builds the same registry of yard's own backends without it.
 */
import type {Interfaces} from '@oclif/core'

import {InputError, OperationError, YardError} from '../../sdk/errors.js'
import {type Backend, type BackendFactory, type BackendKind, type FactoryCheck} from '../../sdk/factory.js'
import {describeValue} from '../../sdk/factory.js'
import {type BackendContext} from '../../sdk/target.js'

/** The oclif hook every backend plugin (built-in or not) declares in its package.json. */
export const BACKENDS_HOOK = 'yard:backends'

/** How long one plugin's hook may take to answer, in milliseconds, unless told otherwise. */
export const DEFAULT_HOOK_TIMEOUT_MS = 5000

export type BackendStatus = 'ok' | 'broken' | 'incompatible'

/** One row of `yard backends` (DESIGN.md Appendix A). */
export interface BackendEntry {
  /** The backend id, or null when the plugin gave none (its hook failed, or the id was no string). */
  id: string | null
  /** The kind as declared, or null when the plugin gave none. */
  kind: string | null
  /** The plugin's package name. */
  plugin: string
  /** The plugin's package version. */
  version: string
  /** The contract as declared (`1`, `"1.x"`), or null when unknown. */
  contract: number | string | null
  status: BackendStatus
  /** Why the entry is not `ok`. */
  error?: string
}

/** The backend type a kind selects: `machine` → `MachineBackend`. */
export type BackendOfKind<K extends BackendKind> = Extract<Backend, {kind: K}>

export interface LoadRegistryOptions {
  /** Per hook, in milliseconds (positive; 0 would disable oclif's timer); default `DEFAULT_HOOK_TIMEOUT_MS`. */
  timeoutMs?: number
}

/** The config key that selects the backend of a kind (DESIGN.md §2: sandboxes are `[cluster]`). */
export function backendConfigKey(kind: BackendKind): string {
  return `[${kind === 'sandbox' ? 'cluster' : kind}] backend`
}

/** One checked hook result: its listing entry, and the factory when the entry is `ok`. */
export interface RegistryRow {
  entry: BackendEntry
  factory?: BackendFactory
}

interface Provided {
  factory: BackendFactory
  plugin: string
}

/** Backend factories indexed by kind and id, plus every entry a plugin failed to provide. */
export class Registry {
  private readonly byKey = new Map<string, Provided>()

  /** Builds the index from rows already checked; the first `ok` row per kind and id wins. */
  constructor(private readonly rows: readonly RegistryRow[]) {
    for (const row of rows) {
      if (row.factory)
        this.byKey.set(key(row.factory.kind, row.factory.id), {factory: row.factory, plugin: row.entry.plugin})
    }
  }

  /** Every entry, in plugin load order (the CLI's own first), as `yard backends` shows them. */
  entries(): BackendEntry[] {
    return this.rows.map((row) => ({...row.entry}))
  }

  /** The ids of the usable backends of a kind, sorted. */
  ids(kind: BackendKind): string[] {
    return this.rows
      .filter((row) => row.factory?.kind === kind)
      .map((row) => row.entry.id!)
      .sort()
  }

  /** The usable factory for a kind and id, or undefined. */
  factory<K extends BackendKind>(kind: K, id: string): BackendFactory<BackendOfKind<K>> | undefined {
    return this.byKey.get(key(kind, id))?.factory as BackendFactory<BackendOfKind<K>> | undefined
  }

  /**
   * Creates the backend of a kind selected by id. `origin` is where the id came from (a config
   * origin such as `yard.toml` or `env:YARD_MACHINE_BACKEND`), for the fix of an unknown id.
   *
   * @throws InputError (exit 2) when no usable backend has that id: names the id, the ids
   *   available, why a plugin's entry for it is unusable, and the config key that selects it.
   * @throws OperationError (exit 1) when the factory throws (a YardError passes through) or
   *   returns something of another kind or id.
   */
  async create<K extends BackendKind>(
    kind: K,
    id: string,
    context: BackendContext,
    origin?: string,
  ): Promise<BackendOfKind<K>> {
    const provided = this.byKey.get(key(kind, id))
    if (!provided) throw this.unknownBackend(kind, id, origin)
    let backend: unknown
    try {
      backend = await provided.factory.create(context)
    } catch (error) {
      if (error instanceof YardError) throw error
      throw new OperationError(`could not create the ${kind} backend "${id}"`, {
        why: `its factory in plugin ${provided.plugin} threw: ${errorMessage(error)}`,
        fix: `run again with --verbose for the plugin's stack trace, or select another backend with ${backendConfigKey(kind)}`,
        cause: error,
      })
    }

    const made = backend as Partial<Backend> | null
    if (typeof made !== 'object' || made === null || made.kind !== kind || made.id !== id) {
      throw new OperationError(`the ${kind} backend "${id}" from plugin ${provided.plugin} is malformed`, {
        why: `its create() returned ${describeMade(backend)}, expected an object with kind "${kind}" and id "${id}"`,
        fix: `report this to the plugin's authors, or select another backend with ${backendConfigKey(kind)}`,
      })
    }

    return backend as BackendOfKind<K>
  }

  private unknownBackend(kind: BackendKind, id: string, origin?: string): InputError {
    const available = this.ids(kind)
    const unusable = this.rows.find((row) => row.entry.kind === kind && row.entry.id === id && !row.factory)?.entry
    const choice = available.length > 0 ? `one of: ${available.join(', ')}` : `the id of an installed ${kind} backend`
    const why = unusable
      ? `plugin ${unusable.plugin} provides it, but it is ${unusable.status}: ${unusable.error}`
      : available.length > 0
        ? `the ${kind} backends available are: ${available.join(', ')}`
        : `no ${kind} backend is installed`
    // The fix names what set the id: an environment variable (env:NAME), a file, else yard.toml.
    const variable = origin?.startsWith('env:') ? origin.slice(4) : undefined
    const setting =
      variable === undefined
        ? `set ${backendConfigKey(kind)} in ${origin === undefined || origin === 'default' ? 'yard.toml' : origin} to ${choice}`
        : `set the environment variable ${variable} to ${choice} (or unset it)`
    return new InputError(`unknown ${kind} backend "${id}"${variable === undefined ? '' : ` from ${variable}`}`, {
      why,
      fix: `${setting}, or install the plugin that provides "${id}" (yard plugins install <package>); yard backends lists what is installed`,
    })
  }
}

const registries = new WeakMap<Interfaces.Config, Promise<Registry>>()

/**
 * The registry of a CLI configuration: runs `yard:backends` in every loaded plugin on the first
 * call and returns the same registry afterwards (one hook run per process and Config; later
 * options are ignored).
 *
 * Each plugin's hook gets `timeoutMs` to load and answer, on its own clock: a plugin whose module
 * never finishes loading is reported alone and cannot hang the CLI. Never rejects because of a
 * plugin: failures become `broken` / `incompatible` entries.
 */
export async function loadRegistry(config: Interfaces.Config, options: LoadRegistryOptions = {}): Promise<Registry> {
  let registry = registries.get(config)
  if (!registry) {
    registry = runBackendsHook(config, options.timeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS)
    registries.set(config, registry)
  }

  return registry
}

type HookPlugin = Interfaces.Plugin

/** What one plugin's `yard:backends` hooks gave: each hook's result, and why a hook failed. */
export interface HookOutcome {
  /** The plugin's package name and version, as listings show them. */
  plugin: {name: string; version: string}
  results: unknown[]
  failures: string[]
}

/** How one element of a hook's result is checked: `checkFactory` (sdk/factory-check.ts), or a trust of yard's own. */
export type FactoryChecker = (value: unknown, position: number, plugin: string) => FactoryCheck

/**
 * The registry of what the plugins' hooks gave, in plugin order: every result checked by `check`
 * (`checkFactory` for whatever oclif loaded), the first `ok` factory of a kind and id kept, later
 * duplicates `broken`.
 */
export function registryOf(outcomes: readonly HookOutcome[], check: FactoryChecker): Registry {
  const rows: RegistryRow[] = []
  const seen = new Map<string, string>()
  for (const {plugin, results, failures} of outcomes) {
    if (results.length === 0 && failures.length === 0)
      rows.push({entry: brokenEntry(plugin, `its ${BACKENDS_HOOK} hook exports no function`)})
    for (const result of results) rows.push(...checkResult(plugin, result, seen, check))
    for (const failure of failures) rows.push({entry: brokenEntry(plugin, failure)})
  }

  return new Registry(rows)
}

async function runBackendsHook(config: Interfaces.Config, timeoutMs: number): Promise<Registry> {
  const plugins = config.getPluginsList().filter((plugin) => (plugin.hooks[BACKENDS_HOOK] ?? []).length > 0)
  const oclif = await loadOclif()
  // Each plugin's hooks run on their own clock, so one that hangs (even while its module loads)
  // is reported alone and every other plugin, the built-ins included, still registers.
  const outcomes = await Promise.all(
    plugins.map(async (plugin) => ({plugin, ...(await runPluginHooks(oclif, config, plugin, timeoutMs))})),
  )
  return registryOf(outcomes, (await import('../../sdk/factory-check.js')).checkFactory)
}

type Oclif = Pick<typeof import('@oclif/core'), 'Errors' | 'ModuleLoader'> &
  Pick<typeof import('@oclif/core/config'), 'tsPath'>

/** oclif's module loader and errors, imported by the one path that runs hooks through oclif. */
async function loadOclif(): Promise<Oclif> {
  const [{Errors, ModuleLoader}, {tsPath}] = await Promise.all([import('@oclif/core'), import('@oclif/core/config')])
  return {Errors, ModuleLoader, tsPath}
}

/** The oclif hook context handed to `this` of a hook (as `Config.runHook` builds it). */
function hookContext({Errors}: Oclif, config: Interfaces.Config) {
  return {
    config,
    debug() {},
    error(message: string | Error, options: {exit?: number} = {}) {
      Errors.error(message, options as {exit: number})
    },
    exit(code = 0) {
      Errors.exit(code)
    },
    log(message?: string, ...args: string[]) {
      process.stdout.write([message ?? '', ...args].join(' ') + '\n')
    },
    warn(message: string | Error) {
      Errors.warn(message)
    },
  }
}

const search = (module: Record<string, unknown>) =>
  typeof module === 'function'
    ? module
    : typeof module.default === 'function'
      ? module.default
      : Object.values(module).find((value) => typeof value === 'function')

/**
 * Loads and calls each `yard:backends` hook of one plugin, each within `timeoutMs` (loading
 * included). Never rejects: failures come back as reasons.
 */
async function runPluginHooks(
  oclif: Oclif,
  config: Interfaces.Config,
  plugin: HookPlugin,
  timeoutMs: number,
): Promise<{results: unknown[]; failures: string[]}> {
  const results: unknown[] = []
  const failures: string[] = []
  for (const hook of plugin.hooks[BACKENDS_HOOK] ?? []) {
    const {identifier, target} = typeof hook === 'string' ? {identifier: 'default', target: hook} : hook
    const run = (async () => {
      const {module} = await oclif.ModuleLoader.loadWithData(plugin, await oclif.tsPath(plugin.root, target, plugin))
      const hookFn =
        (module as Record<string, unknown>)[identifier] ??
        (identifier === 'default' ? search(module as Record<string, unknown>) : undefined)
      if (typeof hookFn !== 'function') return {found: false as const}
      return {
        found: true as const,
        result: await hookFn.call(hookContext(oclif, config), {config, context: hookContext(oclif, config)}),
      }
    })()
    // Not unref'd on purpose: a hook that never settles must still end in a reported time-out
    // rather than an empty event loop (Node would exit 13 before anything is said).
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), timeoutMs)
    })
    try {
      const outcome = await Promise.race([run, late])
      if (outcome === 'late') failures.push(`its ${BACKENDS_HOOK} hook did not answer within ${timeoutMs} ms`)
      else if (outcome.found) results.push(outcome.result)
    } catch (error) {
      failures.push(`its ${BACKENDS_HOOK} hook threw: ${errorMessage(error)}`)
    } finally {
      clearTimeout(timer)
    }
  }

  return {results, failures}
}

/** Sorts one hook's result into rows; `seen` maps kind/id to the plugin that provided it first. */
function checkResult(
  plugin: HookOutcome['plugin'],
  result: unknown,
  seen: Map<string, string>,
  checkFactory: FactoryChecker,
): RegistryRow[] {
  if (!Array.isArray(result)) {
    return [
      {
        entry: brokenEntry(
          plugin,
          `its ${BACKENDS_HOOK} hook returned ${describeValue(result)}, not an array of backend factories`,
        ),
      },
    ]
  }

  return result.map((value: unknown, index) => {
    const fields = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {}
    const entry: BackendEntry = {
      id: typeof fields.id === 'string' ? fields.id : null,
      kind: typeof fields.kind === 'string' ? fields.kind : null,
      plugin: plugin.name,
      version: plugin.version,
      contract: typeof fields.contract === 'number' || typeof fields.contract === 'string' ? fields.contract : null,
      status: 'ok',
    }
    const check = checkFactory(value, index + 1, plugin.name)
    if (check.status !== 'ok') return {entry: {...entry, status: check.status, error: check.reason}}
    const owner = seen.get(key(check.factory.kind, check.factory.id))
    if (owner !== undefined) {
      return {
        entry: {
          ...entry,
          status: 'broken',
          error: `duplicate ${check.factory.kind} backend id "${check.factory.id}": already provided by ${owner}`,
        },
      }
    }

    seen.set(key(check.factory.kind, check.factory.id), plugin.name)
    return {entry, factory: check.factory}
  })
}

function brokenEntry(plugin: HookOutcome['plugin'], reason: string): BackendEntry {
  return {
    id: null,
    kind: null,
    plugin: plugin.name,
    version: plugin.version,
    contract: null,
    status: 'broken',
    error: reason,
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

function describeMade(value: unknown): string {
  if (typeof value !== 'object' || value === null) return describeValue(value)
  const {kind, id} = value as {kind?: unknown; id?: unknown}
  return `kind ${describeValue(kind)} and id ${describeValue(id)}`
}

function key(kind: string, id: string): string {
  return `${kind}\u0000${id}`
}
