/**
 * Which compose files a checkout's stack uses (DESIGN.md §4.2): `[stack] files` (relative to the
 * checkout), else the first that exists of `compose.yaml`, `compose.yml`, `docker-compose.yaml`,
 * `docker-compose.yml`. None → the checkout is box-only. Paths are made absolute against the
 * targeted checkout, never the main one (DESIGN.md §3.5).
 */
import {existsSync, lstatSync, readFileSync} from 'node:fs'
import path from 'node:path'

import {InputError} from '../../sdk/errors.js'

/** The default discovery order. */
export const DEFAULT_COMPOSE_FILES = [
  'compose.yaml',
  'compose.yml',
  'docker-compose.yaml',
  'docker-compose.yml',
] as const

/**
 * The absolute compose files of a checkout; an empty list means box-only.
 * @param configured `[stack] files` when set (each relative to the checkout, or absolute)
 * @param origin where `[stack] files` was set, for the error
 * @throws InputError (exit 2) when a configured file does not exist, naming it and the key.
 */
export function composeFiles(checkoutPath: string, configured: string[] | undefined, origin = 'yard.toml'): string[] {
  if (configured === undefined) {
    // lstat: a name that is there but no readable file (a dangling link) is the stack's to refuse, not box-only.
    const found = DEFAULT_COMPOSE_FILES.map((name) => path.join(checkoutPath, name)).find((file) => present(file))
    return found === undefined ? [] : [found]
  }

  return configured.map((file) => {
    const absolute = path.resolve(checkoutPath, file)
    if (!existsSync(absolute)) {
      throw new InputError(`compose file ${absolute} does not exist`, {
        why: `[stack] files (${origin}) lists ${file}, relative to the checkout ${checkoutPath}`,
        fix: `create it, or correct [stack] files in ${origin}`,
      })
    }

    return absolute
  })
}

/** Something is there under this name, a dangling symbolic link included. */
function present(file: string): boolean {
  try {
    lstatSync(file)
    return true
  } catch {
    return false
  }
}

/**
 * Every service of the compose files as written (before yard renders them), with the file it is
 * in: for the lenient checks that warn or refuse before the stack backend runs. A file yard cannot
 * read or parse is skipped: it is the stack backend's to report. yaml is loaded here, when a check
 * needs it, not by every command that loads the stack's module.
 * @returns each service as `{file, service, body}`, `body` `{}` when it is not a mapping.
 */
export async function writtenServices(
  files: readonly string[],
): Promise<Array<{file: string; service: string; body: Record<string, unknown>}>> {
  const {parse} = await import('../../sdk/yaml.js')
  const isMapping = (value: unknown): value is Record<string, unknown> =>
    value !== null && typeof value === 'object' && !Array.isArray(value)
  const found: Array<{file: string; service: string; body: Record<string, unknown>}> = []
  for (const file of files) {
    let document: unknown
    try {
      document = parse(readFileSync(file, 'utf8'))
    } catch {
      continue
    }

    const services = isMapping(document) && isMapping(document.services) ? document.services : {}
    for (const [service, body] of Object.entries(services))
      found.push({file, service, body: isMapping(body) ? body : {}})
  }

  return found
}
