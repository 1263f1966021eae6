/**
 * `profiles:` (compose specification, "Profiles"): a service with profiles is active only when
 * one of them is enabled (`*` enables all); a service without is always active. yard starts the
 * whole project (no service arguments), so inactive services are left out of the model. An
 * active service that needs an inactive one (`depends_on` with `required` not false, `links`,
 * `volumes_from`, `network_mode`/`ipc`/`pid: service:…`) makes the model invalid, as the
 * specification says; a `depends_on` entry with `required: false` is dropped.
 */
import {InputError} from '../../../core/errors.js'
import {isMapping, type Mapping} from './types.js'

/** The enabled profiles: `COMPOSE_PROFILES` (comma-separated) and `[stack] profiles`. */
export function enabledProfiles(composeProfiles: string | undefined, configured: readonly string[] = []): string[] {
  const fromEnv = (composeProfiles ?? '').split(',').map((name) => name.trim()).filter((name) => name !== '')
  return [...new Set([...fromEnv, ...configured])]
}

/**
 * Removes the services of no enabled profile from `services`, in place; returns their names
 * with their profiles.
 * @throws InputError (exit 2) when an active service needs a removed one, naming both and the
 *   profiles that would enable it.
 */
export function applyProfiles(services: Record<string, Mapping>, enabled: readonly string[]): Map<string, string[]> {
  const all = enabled.includes('*')
  const inactive = new Map<string, string[]>()
  for (const [name, service] of Object.entries(services)) {
    const profiles = isMapping(service) && Array.isArray(service.profiles) ? service.profiles.map(String) : []
    if (profiles.length === 0 || all || profiles.some((profile) => enabled.includes(profile))) continue
    inactive.set(name, profiles)
    delete services[name]
  }
  if (inactive.size === 0) return inactive
  for (const [name, service] of Object.entries(services)) {
    if (!isMapping(service)) continue
    const needs = (other: string, how: string) => {
      const profiles = inactive.get(other)
      if (profiles === undefined) return
      throw new InputError(`service ${name} needs service ${other} (${how}), which is only in profile${profiles.length > 1 ? 's' : ''} ${profiles.join(', ')}, not enabled`, {
        why: 'a service of a profile that is not enabled is left out of the project (compose specification, "Profiles")',
        fix: `enable ${profiles[0]} with COMPOSE_PROFILES or [stack] profiles, or give ${other} no profiles`,
      })
    }
    if (Array.isArray(service.depends_on)) service.depends_on.forEach((other) => needs(String(other), 'depends_on'))
    else if (isMapping(service.depends_on)) {
      for (const [other, condition] of Object.entries(service.depends_on)) {
        if (!inactive.has(other)) continue
        if (isMapping(condition) && condition.required === false) delete service.depends_on[other]
        else needs(other, 'depends_on')
      }
    }
    if (Array.isArray(service.links)) service.links.forEach((link) => needs(String(link).split(':')[0], 'links'))
    if (Array.isArray(service.volumes_from)) {
      for (const from of service.volumes_from.map(String)) if (!from.startsWith('container:')) needs(from.split(':')[0], 'volumes_from')
    }
    for (const key of ['network_mode', 'ipc', 'pid']) {
      const value = service[key]
      if (typeof value === 'string' && value.startsWith('service:')) needs(value.slice('service:'.length), key)
    }
  }
  return inactive
}
