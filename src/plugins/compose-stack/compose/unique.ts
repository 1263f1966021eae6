/**
 * Uniqueness of sequence entries after a merge (compose specification, "Merge and override" →
 * "Unique resources"; compose-go `override/uncity.go`): `ports` are unique by {ip, target,
 * published, protocol}, `volumes`, `devices`, `secrets` and `configs` by their target in the
 * container, the other listed attributes by their value. A later entry with the key of an
 * earlier one replaces it in the earlier one's place.
 */
import {isMapping, type Mapping} from './types.js'

type Indexer = (entry: unknown) => string

const byValue: Indexer = (entry) => (isMapping(entry) ? JSON.stringify(entry) : String(entry))

/** `[ip:][published:]target[/protocol]`, or the long form, as `ip:published:target/protocol`. */
export const portKey: Indexer = (entry) => {
  if (isMapping(entry)) {
    return `${String(entry.host_ip ?? '0.0.0.0')}:${String(entry.published ?? '')}:${String(entry.target ?? '')}/${String(entry.protocol ?? 'tcp')}`
  }

  const text = String(entry)
  const slash = text.lastIndexOf('/')
  const protocol = slash === -1 ? 'tcp' : text.slice(slash + 1)
  let rest = slash === -1 ? text : text.slice(0, slash)
  let ip = ''
  if (rest.startsWith('[')) {
    const close = rest.indexOf(']')
    ip = rest.slice(0, close + 1)
    rest = rest.slice(close + 2)
  }

  const parts = rest.split(':')
  if (!ip && parts.length === 3) ip = parts.shift()!
  const target = parts.pop() ?? ''
  const published = parts.pop() ?? ''
  return `${ip || '0.0.0.0'}:${published}:${target}/${protocol}`
}

/**
 * The container path of a `volumes` / `devices` entry: `source:target[:mode]`, `target`, or
 * `target:` of the long form.
 */
export const mountTarget: Indexer = (entry) => {
  if (isMapping(entry)) return String(entry.target ?? '')
  const parts = String(entry).split(':')
  return parts.length === 1 ? parts[0] : parts[1]
}

const secretOrConfig =
  (directory: string): Indexer =>
  (entry) => {
    if (isMapping(entry))
      return entry.target === undefined ? `${directory}/${String(entry.source)}` : String(entry.target)
    return `${directory}/${String(entry)}`
  }

const envFilePath: Indexer = (entry) => (isMapping(entry) ? String(entry.path) : String(entry))

const SERVICE_INDEXERS: Record<string, Indexer> = {
  ports: portKey,
  volumes: mountTarget,
  devices: mountTarget,
  secrets: secretOrConfig('/run/secrets'),
  configs: secretOrConfig(''),
  env_file: envFilePath,
  expose: byValue,
  cap_add: byValue,
  cap_drop: byValue,
  profiles: byValue,
  links: byValue,
  dns: byValue,
  dns_opt: byValue,
  dns_search: byValue,
  tmpfs: byValue,
  security_opt: byValue,
  extra_hosts: byValue,
}

/** Removes repeated entries, in place, from every service's unique sequences (and network aliases). */
export function enforceUniqueness(services: Record<string, Mapping>): void {
  for (const service of Object.values(services)) {
    if (!isMapping(service)) continue
    for (const [key, indexer] of Object.entries(SERVICE_INDEXERS)) {
      const value = service[key]
      if (Array.isArray(value)) service[key] = unique(value, indexer)
    }

    if (isMapping(service.networks)) {
      for (const network of Object.values(service.networks)) {
        if (isMapping(network) && Array.isArray(network.aliases)) network.aliases = unique(network.aliases, byValue)
      }
    }
  }
}

function unique(entries: unknown[], indexer: Indexer): unknown[] {
  const result: unknown[] = []
  const seen = new Map<string, number>()
  for (const entry of entries) {
    const key = indexer(entry)
    const at = seen.get(key)
    if (at === undefined) {
      seen.set(key, result.length)
      result.push(entry)
    } else {
      result[at] = entry
    }
  }

  return result
}
