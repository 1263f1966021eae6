/**
 * Fixed host ports (DESIGN.md §4.2): a published host port that is the same in a worktree and in
 * main does not move with the offset, so two checkouts cannot run at once. Found by
 * interpolating every `ports` entry with the worktree's env and with main's and comparing the
 * host parts. Short syntax (`"5432:5432"`, `"127.0.0.1:5432:5432"`, `"[::1]:5432:5432"`,
 * ranges `"8000-8001:8000-8001"`, `/udp`) and long syntax (`published`, `target`) are read.
 */
import type {ComposeService} from './compose-model.js'
import {interpolate} from './interpolate.js'

export interface PortEntry {
  /** The published host port or range as written after interpolation (`5432`, `8000-8001`), absent when the engine picks one. */
  host?: string
  /** The container port or range. */
  container: string
}

/**
 * Reads one interpolated `ports` entry (compose spec, "ports"); undefined when it is not one.
 * Short syntax: `[IP:][HOST:]CONTAINER[/PROTOCOL]`, IPv6 addresses in brackets.
 */
export function parsePortEntry(entry: unknown): PortEntry | undefined {
  if (typeof entry === 'number') return {container: String(entry)}
  if (entry !== null && typeof entry === 'object' && !Array.isArray(entry)) {
    const {published, target} = entry as {published?: unknown; target?: unknown}
    if (target === undefined) return undefined
    const host = published === undefined || published === null || published === '' ? undefined : String(published)
    return {host, container: String(target)}
  }
  if (typeof entry !== 'string') return undefined
  let rest = entry.trim().replace(/\/[a-z]+$/i, '')
  if (rest.startsWith('[')) {
    const close = rest.indexOf(']')
    if (close === -1) return undefined
    rest = rest.slice(close + 2)
    const [host, container] = splitLast(rest)
    return container === undefined ? undefined : {host: host || undefined, container}
  }
  const parts = rest.split(':')
  if (parts.length === 1) return {container: parts[0]}
  if (parts.length === 2) return {host: parts[0] || undefined, container: parts[1]}
  if (parts.length === 3) return {host: parts[1] || undefined, container: parts[2]}
  return undefined
}

function splitLast(text: string): [string, string | undefined] {
  const at = text.lastIndexOf(':')
  return at === -1 ? ['', text] : [text.slice(0, at), text.slice(at + 1)]
}

/** Interpolates a raw entry (a string, or the string fields of a long-syntax mapping). */
function interpolateEntry(entry: unknown, env: Readonly<Record<string, string | undefined>>): unknown {
  try {
    if (typeof entry === 'string') return interpolate(entry, env)
    if (entry !== null && typeof entry === 'object' && !Array.isArray(entry)) {
      return Object.fromEntries(Object.entries(entry).map(([key, value]) => [key, typeof value === 'string' ? interpolate(value, env) : value]))
    }
    return entry
  } catch {
    return undefined
  }
}

export interface FixedPort {
  service: string
  /** The host port or range that is the same for the worktree and for main. */
  host: string
  container: string
  /** The `[ports]` key to use in the fix: the variable the entry names, else `<SERVICE>_PORT`. */
  key: string
}

/** The variables an entry names (`${DB_PORT:-5432}` → DB_PORT), in order. */
function variablesOf(entry: unknown): string[] {
  const text = typeof entry === 'string' ? entry : entry !== null && typeof entry === 'object' ? String((entry as {published?: unknown}).published ?? '') : ''
  return [...text.matchAll(/\$\{?([A-Za-z_][A-Za-z0-9_]*)/g)].map((match) => match[1])
}

/**
 * The published host ports of `services` that are the same with `env` (the worktree's) as with
 * `mainEnv`. Entries that do not parse, or publish no host port, are skipped.
 */
export function findFixedPorts(services: readonly ComposeService[], env: Readonly<Record<string, string | undefined>>, mainEnv: Readonly<Record<string, string | undefined>>): FixedPort[] {
  const fixed: FixedPort[] = []
  for (const service of services) {
    for (const raw of service.ports) {
      const mine = parsePortEntry(interpolateEntry(raw, env))
      const mains = parsePortEntry(interpolateEntry(raw, mainEnv))
      if (mine?.host === undefined || mains?.host === undefined || mine.host !== mains.host) continue
      const key = variablesOf(raw)[0] ?? `${service.name.toUpperCase().replaceAll(/[^A-Z0-9]+/g, '_').replace(/^(\d)/, '_$1')}_PORT`
      fixed.push({service: service.name, host: mine.host, container: mine.container, key})
    }
  }
  return fixed
}

/** The warning `up` prints for one fixed port, with the fix (DESIGN.md §4.2). */
export function describeFixedPort(port: FixedPort, checkout: string): string {
  const base = port.host.split('-')[0]
  return `warning: service ${port.service} of ${checkout} publishes host port ${port.host}, the same as in main: it does not move with the offset, so this checkout and main cannot both run it\n` +
    `  fix: publish "\${${port.key}:-${base}}:${port.container}" in the compose file and set [ports] ${port.key} = ${base} in yard.toml`
}
