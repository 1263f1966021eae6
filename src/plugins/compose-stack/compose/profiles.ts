/**
 * `profiles:` (compose specification, "Profiles"): a service with profiles is active only when
 * one of them is enabled (`*` enables all); a service without is always active. yard starts the
 * whole project (no service arguments), so inactive services are left out of the model. An
 * active service that needs an inactive one makes the model invalid, as the specification says
 * (`consistency.ts` checks it).
 */
import {isMapping, type Mapping} from './types.js'

/**
 * The enabled profiles: `COMPOSE_PROFILES` (comma-separated) and `[stack] profiles`. Like compose's
 * loader (compose-go `WithDefaultProfiles(strings.Split(COMPOSE_PROFILES, ","))`), an unset or empty
 * `COMPOSE_PROFILES`, or an empty item in it, enables the empty profile: a service listing `""`
 * among its profiles (`profiles: ["", debug]`, a known way to run it by default) is active then.
 */
export function enabledProfiles(composeProfiles: string | undefined, configured: readonly string[] = []): string[] {
  const fromEnv = (composeProfiles ?? '').split(',').map((name) => name.trim())
  return [...new Set([...fromEnv, ...configured])]
}

/**
 * Removes the services of no enabled profile from `services`, in place, and the `profiles` key
 * of the others: the rendered file runs every service it has, whichever profiles the provider
 * is told of (`[stack] profiles` reaches only yard). Returns the removed services' names with
 * their profiles (for `checkReferences`, which refuses an active service needing one).
 */
export function applyProfiles(services: Record<string, Mapping>, enabled: readonly string[]): Map<string, string[]> {
  const all = enabled.includes('*')
  const inactive = new Map<string, string[]>()
  for (const [name, service] of Object.entries(services)) {
    const profiles = isMapping(service) && Array.isArray(service.profiles) ? service.profiles.map(String) : []
    if (profiles.length === 0 || all || profiles.some((profile) => enabled.includes(profile))) {
      if (isMapping(service)) delete service.profiles
      continue
    }

    inactive.set(name, profiles)
    delete services[name]
  }

  return inactive
}
