/**
 * Relative paths made absolute (compose specification: "build" → context, "volumes" → short
 * and long syntax, "env_file", "secrets"/"configs" → file, "extends" → file; the exact list is
 * compose-go's `paths/resolve.go`). `~` and `~/…` are the user's home. Remote build contexts
 * (urls, `git@…`, `github.com/…`, `service:…`, any `scheme://`) stay as written;
 * `build.dockerfile` stays relative to the context, as the specification defines it.
 */
import path from 'node:path'

import {isMapping, type Mapping} from './types.js'

/**
 * Sets `build.context` to `.` where a `build` mapping has none (compose-go SetDefaultValues: once
 * a project's files are merged, so an `extends` base can still give the context).
 */
export function defaultBuildContexts(model: Mapping): void {
  if (!isMapping(model.services)) return
  for (const service of Object.values(model.services)) {
    if (isMapping(service) && isMapping(service.build) && service.build.context === undefined)
      service.build.context = '.'
  }
}

/** Makes the relative paths of a loaded model absolute against `base`, in place; absolute paths stay. */
export function resolvePaths(model: Mapping, base: string, home: string): void {
  const abs = (value: unknown): unknown => (typeof value === 'string' ? absolutePath(value, base, home) : value)
  if (isMapping(model.services)) {
    for (const service of Object.values(model.services))
      if (isMapping(service)) resolveServicePaths(service, base, home, abs)
  }

  for (const section of ['secrets', 'configs']) {
    const resources = model[section]
    if (!isMapping(resources)) continue
    for (const resource of Object.values(resources))
      if (isMapping(resource) && typeof resource.file === 'string') resource.file = abs(resource.file)
  }

  if (isMapping(model.volumes)) {
    for (const volume of Object.values(model.volumes)) {
      // A local volume with `o: bind` is a bind mount of `device` (compose-go volumeDriverOpts).
      if (
        !isMapping(volume) ||
        (volume.driver !== undefined && volume.driver !== 'local') ||
        !isMapping(volume.driver_opts)
      )
        continue
      if (volume.driver_opts.o === 'bind' && typeof volume.driver_opts.device === 'string')
        volume.driver_opts.device = abs(volume.driver_opts.device)
    }
  }
}

function resolveServicePaths(service: Mapping, base: string, home: string, abs: (value: unknown) => unknown): void {
  if (typeof service.build === 'string') service.build = contextPath(service.build, base, home)
  else if (isMapping(service.build)) {
    if (typeof service.build.context === 'string')
      service.build.context = contextPath(service.build.context, base, home)
    const additional = service.build.additional_contexts
    if (isMapping(additional)) {
      for (const [name, context] of Object.entries(additional))
        if (typeof context === 'string') additional[name] = contextPath(context, base, home)
    }
  }

  if (typeof service.env_file === 'string') service.env_file = abs(service.env_file)
  else if (Array.isArray(service.env_file)) {
    service.env_file = service.env_file.map((entry) =>
      isMapping(entry) ? {...entry, path: abs(entry.path)} : abs(entry),
    )
  }

  if (typeof service.label_file === 'string') service.label_file = abs(service.label_file)
  else if (Array.isArray(service.label_file)) service.label_file = service.label_file.map(abs)
  if (isMapping(service.extends) && typeof service.extends.file === 'string')
    service.extends.file = abs(service.extends.file)
  if (isMapping(service.develop) && Array.isArray(service.develop.watch)) {
    for (const rule of service.develop.watch)
      if (isMapping(rule) && typeof rule.path === 'string') rule.path = abs(rule.path)
  }

  if (Array.isArray(service.volumes)) service.volumes = service.volumes.map((volume) => volumePath(volume, base, home))
}

/** A bind mount's source made absolute: `./data:/data` and `~/x:/x` (short), `type: bind` (long). */
function volumePath(volume: unknown, base: string, home: string): unknown {
  if (isMapping(volume)) {
    if (volume.type === 'bind' && typeof volume.source === 'string')
      return {...volume, source: absolutePath(volume.source, base, home)}
    return volume
  }

  if (typeof volume !== 'string') return volume
  const colon = volume.indexOf(':')
  if (colon === -1) return volume
  const source = volume.slice(0, colon)
  // compose-go format.ParseVolume: a source starting with `.`, `/` or `~` is a path, anything else a volume name.
  if (!/^[.~]/.test(source)) return volume
  return absolutePath(source, base, home) + volume.slice(colon)
}

function contextPath(context: string, base: string, home: string): string {
  if (context.includes('://') || context.startsWith('service:')) return context
  if (['http://', 'https://', 'git://', 'ssh://', 'github.com/', 'git@'].some((prefix) => context.startsWith(prefix)))
    return context
  return absolutePath(context, base, home)
}

/** `value` absolute against `base`, with `~` expanded to `home`; an empty string stays empty. */
export function absolutePath(value: string, base: string, home: string): string {
  if (value === '~') return home
  if (value.startsWith('~/')) return path.join(home, value.slice(2))
  if (value === '' || path.isAbsolute(value)) return value
  return path.join(base, value)
}
