/**
 * References between the parts of a resolved model (compose-go `loader/validate.go`
 * checkConsistency; compose specification, "Profiles"): every service a service needs
 * (`depends_on`, `links`, `volumes_from`, `network_mode`/`ipc`/`pid: service:…`), and every
 * network, named volume, secret and config it uses, must be in the model. A needed service left
 * out by its profiles says which profile enables it. A `depends_on` with `required: false` on a
 * missing service is dropped, as Compose skips it.
 */
import {InputError} from '../../../sdk/errors.js'
import {isMapping, type Mapping} from './types.js'

/**
 * Checks the references of every service, in place (dropping optional `depends_on` entries
 * that point nowhere).
 * @param inactive services left out by profiles, with their profiles
 * @throws InputError (exit 2) naming the service and what it refers to.
 */
export function checkReferences(
  model: Mapping,
  services: Record<string, Mapping>,
  inactive: ReadonlyMap<string, string[]>,
): void {
  const declared = (section: string) => (isMapping(model[section]) ? model[section] : {})
  for (const [name, service] of Object.entries(services)) {
    if (!isMapping(service)) continue
    const needs = (other: string, how: string) => {
      if (other in services) return
      const profiles = inactive.get(other)
      if (profiles !== undefined) {
        throw new InputError(
          `service ${name} needs service ${other} (${how}), which is only in profile${profiles.length > 1 ? 's' : ''} ${profiles.join(', ')}, not enabled`,
          {
            why: 'a service of a profile that is not enabled is left out of the project (compose specification, "Profiles")',
            fix: `enable ${profiles[0]} with COMPOSE_PROFILES or [stack] profiles, or give ${other} no profiles`,
          },
        )
      }

      throw new InputError(`service ${name} depends on undefined service ${other} (${how})`, {
        fix: `define service ${other}, or remove it from services.${name}.${how}`,
      })
    }

    const uses = (section: string, resource: string, key: string) => {
      if (resource in declared(section)) return
      throw new InputError(`service ${name} refers to undefined ${section.replace(/s$/, '')} ${resource}`, {
        fix: `declare it under the top-level ${section}:, or remove it from services.${name}.${key}`,
      })
    }

    if (Array.isArray(service.depends_on)) for (const other of service.depends_on) needs(String(other), 'depends_on')
    else if (isMapping(service.depends_on)) {
      for (const [other, condition] of Object.entries(service.depends_on)) {
        if (other in services) continue
        if (isMapping(condition) && condition.required === false) delete service.depends_on[other]
        else needs(other, 'depends_on')
      }
    }

    if (Array.isArray(service.links)) for (const link of service.links) needs(String(link).split(':', 1)[0], 'links')
    if (Array.isArray(service.volumes_from)) {
      for (const from of service.volumes_from.map(String))
        if (!from.startsWith('container:')) needs(from.split(':', 1)[0], 'volumes_from')
    }

    for (const key of ['network_mode', 'ipc', 'pid']) {
      const value = service[key]
      if (typeof value === 'string' && value.startsWith('service:')) needs(value.slice('service:'.length), key)
    }

    const networks = Array.isArray(service.networks)
      ? service.networks.map(String)
      : isMapping(service.networks)
        ? Object.keys(service.networks)
        : []
    for (const network of networks) if (network !== 'default') uses('networks', network, 'networks')
    for (const volume of Array.isArray(service.volumes) ? service.volumes : []) {
      const source = namedVolume(volume)
      if (source !== undefined) uses('volumes', source, 'volumes')
    }

    for (const section of ['secrets', 'configs']) {
      const entries = service[section]
      if (!Array.isArray(entries)) continue
      for (const entry of entries) {
        const source = isMapping(entry) ? entry.source : entry
        if (typeof source === 'string') uses(section, source, section)
      }
    }
  }
}

/**
 * The volume name of a `volumes` entry that mounts a named volume; undefined for binds, tmpfs and
 * anonymous volumes.
 */
export function namedVolume(entry: unknown): string | undefined {
  if (isMapping(entry)) {
    const type = entry.type ?? 'volume'
    return type === 'volume' && typeof entry.source === 'string' && entry.source !== '' ? entry.source : undefined
  }

  if (typeof entry !== 'string') return undefined
  const colon = entry.indexOf(':')
  if (colon === -1) return undefined
  const source = entry.slice(0, colon)
  return /^[./~]/.test(source) || source === '' ? undefined : source
}
