/**
 * The Compose merge rules (compose specification, "Merge and override"; the exact behaviour is
 * compose-go's `override/merge.go`): mappings merge recursively, sequences append, scalars are
 * replaced. Exceptions: `command`, `entrypoint` and `healthcheck.test` are replaced;
 * `environment`, `labels`, `annotations`, `sysctls`, `build.args`, … merge key by key whatever
 * form each side uses (the list form `KEY=VALUE` converted; a bare `KEY` replaces the value with
 * the environment's); `depends_on` and a service's
 * `networks` merge as mappings (list entries become `{condition: service_started, required:
 * true}` / null); `build: ctx` merges as `{context: ctx}`; `logging` merges only with the same
 * driver; `ulimits` entries are replaced. Uniqueness of `ports`, `volumes`, … is `unique.ts`.
 * `!reset` and `!override` (see `yaml.ts`) are applied by `applyResets`.
 */
import {InputError} from '../../../sdk/errors.js'
import {isMapping, keyPath, type Mapping} from './types.js'

type Merger = (base: unknown, override: unknown, path: string[], file: string) => unknown

const replace: Merger = (_base, override) => override
const asMappings: Merger = (base, override, path, file) =>
  mergeMappings(toMapping(base, null), toMapping(override, null), path, file)
/**
 * `KEY=VALUE` attributes: key by key, a bare `KEY` (null) included — it replaces the value with the
 * environment's (compose-go mergeToSequence + unicity).
 */
const keyValues: Merger = (base, override) => ({...toMapping(base, null), ...toMapping(override, null)})
const asSequences: Merger = (base, override) => [...toSequence(base), ...toSequence(override)]

const dependsOn: Merger = (base, override, path, file) => {
  const defaults = () => ({condition: 'service_started', required: true})
  return mergeMappings(toMapping(base, defaults), toMapping(override, defaults), path, file)
}

const build: Merger = (base, override, path, file) => {
  const form = (value: unknown) => (typeof value === 'string' ? {context: value} : value)
  return mergeValue(form(base), form(override), path, file, true)
}

const logging: Merger = (base, override, path, file) => {
  if (!isMapping(base) || !isMapping(override)) return override ?? base
  const same = base.driver === override.driver || override.driver === undefined || base.driver === undefined
  return same ? mergeMappings(base, override, path, file) : override
}

/** `host:ip` lists append without repeats; two mappings merge; a mapping meeting a list becomes `host:ip` entries. */
const extraHosts: Merger = (base, override) => {
  if (isMapping(base) && isMapping(override)) return {...base, ...override}
  const list = (value: unknown) =>
    isMapping(value) ? Object.entries(value).map(([host, ip]) => `${host}:${String(ip)}`) : toSequence(value)
  const merged = list(base)
  for (const entry of list(override)) if (!merged.includes(entry)) merged.push(entry)
  return merged
}

/**
 * IPAM pools: an override's pool with the subnet of an earlier one merges onto it; others are added
 * (compose-go mergeIPAMConfig).
 */
const ipamConfig: Merger = (base, override, path, file) => {
  const merged = [...toSequence(base)]
  for (const pool of toSequence(override)) {
    const at = isMapping(pool)
      ? merged.findIndex((earlier) => isMapping(earlier) && earlier.subnet === pool.subnet)
      : -1
    if (at === -1) merged.push(pool)
    else merged[at] = mergeMappings({...(merged[at] as Mapping)}, pool as Mapping, path, file)
  }

  return merged
}

/** Path patterns (`*` is any key) and their merge rule. */
const SPECIALS: Array<[string[], Merger]> = [
  [['services', '*', 'command'], replace],
  [['services', '*', 'entrypoint'], replace],
  [['services', '*', 'healthcheck', 'test'], replace],
  [['services', '*', 'environment'], keyValues],
  [['services', '*', 'labels'], keyValues],
  [['services', '*', 'annotations'], keyValues],
  [['services', '*', 'sysctls'], keyValues],
  [['services', '*', 'build', 'args'], keyValues],
  [['services', '*', 'build', 'labels'], keyValues],
  [['services', '*', 'build', 'additional_contexts'], keyValues],
  [['services', '*', 'build', 'extra_hosts'], extraHosts],
  [['services', '*', 'deploy', 'labels'], keyValues],
  [['services', '*', 'extra_hosts'], extraHosts],
  [['services', '*', 'dns'], asSequences],
  [['services', '*', 'dns_opt'], asSequences],
  [['services', '*', 'dns_search'], asSequences],
  [['services', '*', 'tmpfs'], asSequences],
  [['services', '*', 'env_file'], asSequences],
  [['services', '*', 'label_file'], asSequences],
  [['services', '*', 'depends_on'], dependsOn],
  [['services', '*', 'networks'], asMappings],
  [['services', '*', 'build'], build],
  [['services', '*', 'logging'], logging],
  [['services', '*', 'ulimits', '*'], replace],
  [['networks', '*', 'labels'], keyValues],
  [['networks', '*', 'ipam', 'config'], ipamConfig],
  [['volumes', '*', 'labels'], keyValues],
]

function specialFor(path: readonly string[]): Merger | undefined {
  for (const [pattern, merger] of SPECIALS) {
    if (pattern.length === path.length && pattern.every((part, index) => part === '*' || part === path[index]))
      return merger
  }

  return undefined
}

/**
 * Merges `override` (a later file, or the service that `extends` another) onto `base`, returning
 * the result; `base` may be changed in place. `path` is where the two values sit in the model
 * (`['services', 'web']` for a service).
 * @throws InputError naming `file` and the key when a mapping meets a scalar or a sequence.
 */
export function mergeValue(
  base: unknown,
  override: unknown,
  path: string[],
  file: string,
  skipSpecial = false,
): unknown {
  const special = skipSpecial ? undefined : specialFor(path)
  if (special) return special(base, override, path, file)
  if (override === undefined || override === null) return base
  if (base === undefined || base === null) return override
  if (isMapping(base)) {
    if (!isMapping(override)) throw mismatch(path, file)
    return mergeMappings(base, override, path, file)
  }

  if (Array.isArray(base)) {
    if (!Array.isArray(override)) throw mismatch(path, file)
    return [...base, ...override]
  }

  return override
}

function mergeMappings(base: Mapping, override: Mapping, path: string[], file: string): Mapping {
  for (const [key, value] of Object.entries(override)) {
    base[key] = key in base ? mergeValue(base[key], value, [...path, key], file) : value
  }

  return base
}

function mismatch(path: string[], file: string): InputError {
  return new InputError(`${file}: cannot override ${keyPath(path)}`, {
    why: 'a mapping can only be merged with a mapping, and a sequence with a sequence (compose specification, "Merge and override")',
    fix: `write ${keyPath(path)} in ${file} in the same form as the file it overrides`,
  })
}

/** The mapping form of `KEY=VALUE` / `KEY` lists (a bare `KEY` maps to `empty()`, or null). */
export function toMapping(value: unknown, empty: (() => unknown) | null): Mapping {
  if (isMapping(value)) return value
  const mapping: Mapping = {}
  if (typeof value === 'string') value = [value]
  if (!Array.isArray(value)) return mapping
  for (const entry of value) {
    const text = String(entry)
    const equals = empty === null ? text.indexOf('=') : -1
    if (equals === -1) mapping[text] = empty === null ? null : empty()
    else mapping[text.slice(0, equals)] = text.slice(equals + 1)
  }

  return mapping
}

function toSequence(value: unknown): unknown[] {
  if (Array.isArray(value)) return value
  if (value === undefined || value === null) return []
  if (isMapping(value))
    return Object.entries(value).map(([key, item]) => (item === null ? key : `${key}=${String(item)}`))
  return [value]
}

/**
 * Applies a document's `!reset` and `!override` paths to the model it is about to be merged
 * onto: the value at each path is removed, so the document's own value (if any) takes its place
 * instead of merging with it (compose specification, "Reset value" and "Replace value").
 */
export function applyResets(target: Mapping, paths: readonly string[][]): void {
  for (const path of paths) {
    let node: unknown = target
    for (const key of path.slice(0, -1))
      node = isMapping(node) ? node[key] : Array.isArray(node) ? node[Number(key)] : undefined
    const last = path.at(-1)
    if (last === undefined) continue
    if (isMapping(node)) delete node[last]
  }
}
