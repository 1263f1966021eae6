/**
 * The last steps of a resolution (compose-go `loader/environment.go`, `types/project.go`
 * WithServicesEnvironmentResolved; compose specification, "Extension"): `x-*` extension fields
 * removed wherever the model allows them; `environment` and `labels` as string mappings; a
 * service's `env_file` files read into its `environment` (later files over earlier ones,
 * `environment` over all; their `${…}` interpolated with the project environment, then the
 * service's own) and removed, since the rendered file has no need of them; a bare
 * `environment` entry (`KEY`) takes the project environment's value, and is dropped when it has
 * none (the container would not get it either); repeated `ports`, `volumes`, … removed.
 */
import {existsSync} from 'node:fs'

import {InputError} from '../../../sdk/errors.js'
import {readEnvFile} from './env-file.js'
import {toMapping} from './merge.js'
import {checkConfined} from './read.js'
import {isMapping, type Mapping} from './types.js'
import {enforceUniqueness} from './unique.js'

/** Keys whose values are user data (variable names, label keys, options), never extension fields. */
const DATA_KEYS = new Set([
  'environment',
  'labels',
  'annotations',
  'args',
  'sysctls',
  'driver_opts',
  'options',
  'extra_hosts',
  'additional_contexts',
  'storage_opt',
  'ulimits',
])

/** Removes `x-*` keys from the model and every structural mapping in it, in place. */
export function removeExtensions(value: unknown): void {
  if (Array.isArray(value)) {
    for (const item of value) removeExtensions(item)
    return
  }

  if (!isMapping(value)) return
  for (const key of Object.keys(value)) {
    if (key.startsWith('x-')) delete value[key]
    else if (!DATA_KEYS.has(key)) removeExtensions(value[key])
  }
}

/**
 * Gives the bare entries of every service's `environment` and `build.args` (`- KEY`, `KEY:`) their value from
 * `env`, where it has one, in place (compose-go ResolveEnvironment, run once a project's files
 * are merged — so an included project's bare entries take its own `.env` values too).
 */
export function resolveBareEnvironment(model: Mapping, env: Readonly<Record<string, string>>): void {
  if (!isMapping(model.services)) return
  const resolved = (entries: unknown): Mapping => {
    const mapping = toMapping(entries, null)
    for (const [key, value] of Object.entries(mapping))
      if ((value === null || value === undefined) && env[key] !== undefined) mapping[key] = env[key]
    return mapping
  }

  for (const service of Object.values(model.services)) {
    if (!isMapping(service)) continue
    if (service.environment !== undefined && service.environment !== null)
      service.environment = resolved(service.environment)
    // docker compose gives a bare build arg (`args: [VERSION]`) the project environment's value
    // when it builds (pkg/compose/build.go, resolveAndMergeBuildArgs); the rendered file is run
    // away from the project's .env, so the value is written in now.
    if (isMapping(service.build) && service.build.args !== undefined && service.build.args !== null)
      service.build.args = resolved(service.build.args)
  }
}

/**
 * Folds `env_file` into `environment`, resolves bare entries, stringifies values, and makes
 * `labels` a string mapping, for every service in place.
 * @throws InputError naming the service and file when a required env file is missing.
 */
export function normalizeServices(
  services: Record<string, Mapping>,
  projectEnv: Readonly<Record<string, string>>,
): void {
  for (const [name, service] of Object.entries(services)) {
    if (!isMapping(service)) continue
    const declared = toMapping(service.environment ?? {}, null)
    const resolved: Record<string, string> = {}
    for (const [key, value] of Object.entries(declared)) {
      const text = value === null || value === undefined ? projectEnv[key] : stringOf(value)
      if (text !== undefined) resolved[key] = text
    }

    const fromFiles: Record<string, string> = {}
    for (const entry of envFileEntries(service.env_file)) {
      // Outside an untrusted worktree refused before it is looked for (read.ts).
      checkConfined(entry.path, 'env file')
      if (!existsSync(entry.path)) {
        if (!entry.required) continue
        throw new InputError(`env file ${entry.path} of service ${name} does not exist`, {
          why: "a service's env_file is read for its environment",
          fix: `create it, or mark it optional with {path: …, required: false}`,
        })
      }

      const lookup = new Proxy({}, {get: (_, key: string) => projectEnv[key] ?? resolved[key]}) as Record<
        string,
        string | undefined
      >
      Object.assign(fromFiles, readEnvFile(entry.path, lookup))
    }

    delete service.env_file
    const environment = {...fromFiles, ...resolved}
    if (Object.keys(environment).length > 0) service.environment = environment
    else delete service.environment
    if (service.labels !== undefined) {
      const labels = toMapping(service.labels, null)
      service.labels = Object.fromEntries(
        Object.entries(labels).map(([key, value]) => [key, value === null ? '' : stringOf(value)]),
      )
    }
  }

  enforceUniqueness(services)
}

function envFileEntries(value: unknown): Array<{path: string; required: boolean}> {
  if (value === undefined || value === null) return []
  const list = Array.isArray(value) ? value : [value]
  return list.map((entry) =>
    isMapping(entry)
      ? {path: String(entry.path), required: entry.required !== false}
      : {path: String(entry), required: true},
  )
}

/** Compose writes booleans and numbers of `environment` and `labels` as their YAML text. */
function stringOf(value: unknown): string {
  return typeof value === 'string' ? value : String(value)
}
