/**
 * Host paths a compose file binds that a machine cannot see (DESIGN.md §4.3): a VM sees only its
 * mounts (the main checkout and the worktrees root), so a bind from elsewhere is an empty
 * directory inside it. Read leniently: a file yard cannot read or parse is the stack backend's
 * to report.
 */
import os from 'node:os'
import path from 'node:path'

import {writtenServices} from '../stack/compose-files.js'

export interface OutsideBind {
  file: string
  service: string
  /** The host path as the engine would get it (interpolated, absolute). */
  source: string
}

type Mapping = Record<string, unknown>
const isMapping = (value: unknown): value is Mapping =>
  value !== null && typeof value === 'object' && !Array.isArray(value)

/** `$VAR`, `${VAR}`, `${VAR:-default}` and `${VAR-default}` (compose spec, "Interpolation"); `$$` is `$`. */
function interpolate(text: string, env: Record<string, string>): string {
  return text.replaceAll(
    /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?)-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
    (whole, braced?: string, colon?: string, fallback?: string, bare?: string) => {
      if (whole === '$$') return '$'
      const value = env[braced ?? bare ?? '']
      if (fallback !== undefined && (value === undefined || (colon === ':' && value === ''))) return fallback
      return value ?? ''
    },
  )
}

/** The host side of a service's volume entry when it is a bind (short or long syntax), else undefined. */
function bindSource(entry: unknown): string | undefined {
  if (typeof entry === 'string') {
    const [source, target] = entry.split(':', 2)
    if (target === undefined) return undefined
    return /^(\/|\.|~)/.test(source) ? source : undefined
  }

  return isMapping(entry) && entry.type === 'bind' && typeof entry.source === 'string' ? entry.source : undefined
}

const inside = (child: string, parent: string) => {
  const relative = path.relative(parent, child)
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative))
}

/**
 * Every bind of the compose files whose host path lies outside all of `mounts` (absolute paths).
 * Relative sources resolve against the first file's directory (compose's project directory), `~`
 * against the home directory; `env` interpolates.
 */
export async function bindsOutside(
  files: string[],
  env: Record<string, string>,
  mounts: string[],
): Promise<OutsideBind[]> {
  const projectDir = path.dirname(files[0] ?? '.')
  const found: OutsideBind[] = []
  for (const {file, service, body} of await writtenServices(files)) {
    for (const entry of Array.isArray(body.volumes) ? body.volumes : []) {
      const long = typeof entry === 'string' ? undefined : bindSource(entry)
      const written =
        typeof entry === 'string'
          ? bindSource(interpolate(entry, env))
          : long === undefined
            ? undefined
            : interpolate(long, env)
      if (written === undefined) continue
      const source = written.startsWith('~')
        ? path.join(env.HOME ?? os.homedir(), written.slice(1))
        : path.resolve(projectDir, written)
      if (mounts.every((mount) => !inside(source, mount))) found.push({file, service, source})
    }
  }

  return found
}

/** The warning for one bind outside the mounts, naming the path and the fix. */
export function describeOutsideBind(bind: OutsideBind, machineName: string, mounts: string[]): string {
  return (
    `warning: service ${bind.service} (${bind.file}) binds ${bind.source}, outside machine ${machineName}'s mounts (${mounts.join(', ')}): inside the VM it is an empty directory\n` +
    '  move it under the main checkout or the worktrees root, or use a named volume'
  )
}
