/**
 * yard's state directory (DESIGN.md §2): `YARD_STATE_DIR`, else the platform's data directory
 * for `yard` (XDG_DATA_HOME/yard on Linux, via env-paths). It holds records that may name private
 * repositories, so yard creates it readable by its owner only (0700).
 */
import envPaths from 'env-paths'
import {existsSync, mkdirSync, statSync} from 'node:fs'
import path from 'node:path'

import {InputError} from '../../sdk/errors.js'

/**
 * Absolute path of the state directory; not created here.
 * @throws InputError (exit 2) for a relative YARD_STATE_DIR.
 */
export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  const override = env.YARD_STATE_DIR
  if (override === undefined || override.trim() === '') return envPaths('yard', {suffix: ''}).data
  if (!path.isAbsolute(override)) {
    throw new InputError(`YARD_STATE_DIR must be an absolute path, not "${override}"`, {
      why: 'a relative state directory would change with the directory yard runs from',
      fix: `export YARD_STATE_DIR="${path.resolve(override)}" (or unset it for the default)`,
    })
  }

  return path.normalize(override)
}

/**
 * Makes sure the state directory exists, creating what is missing one level at a time, the state
 * directory itself with mode 0700. A level at a time because Node's recursive mkdir never returns
 * where the kernel answers ENOENT for a parent that exists (/proc, /sys): the nearest existing
 * ancestor must be a directory that takes new directories.
 * @returns the state directory.
 * @throws InputError (exit 2) naming the state directory, the ancestor in the way and why.
 */
export function ensureStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const directory = stateDir(env)
  const missing: string[] = []
  let existing = directory
  while (!existsSync(existing) && path.dirname(existing) !== existing) {
    missing.unshift(existing)
    existing = path.dirname(existing)
  }

  const fix = env.YARD_STATE_DIR?.trim()
    ? 'export YARD_STATE_DIR=/a/directory/you/own (or unset it for the default)'
    : 'set YARD_STATE_DIR to a directory you can create and write'
  if (!statSync(existing).isDirectory()) {
    throw new InputError(`cannot create the state directory ${directory}`, {
      why: `${existing} is a file, not a directory (ENOTDIR)`,
      fix,
    })
  }

  for (const level of missing) {
    try {
      mkdirSync(level, {mode: level === directory ? 0o700 : 0o755})
    } catch (error) {
      const {code} = error as NodeJS.ErrnoException
      if (code === 'EEXIST' && statSync(level).isDirectory()) continue
      const parent = path.dirname(level)
      const why =
        code === 'ENOENT'
          ? `${parent} takes no new directories (ENOENT: a virtual filesystem such as /proc or /sys)`
          : `${level} cannot be created (${code ?? (error as Error).message})`
      throw new InputError(`cannot create the state directory ${directory}`, {why, fix})
    }
  }

  return directory
}

/** yard's containers.conf (DESIGN.md §8), written by `yard doctor --fix`. */
export function containersConfPath(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(stateDir(env), 'containers.conf')
}
