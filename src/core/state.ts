/**
 * yard's state directory (DESIGN.md §2): `YARD_STATE_DIR`, else the platform's data directory
 * for `yard` (XDG_DATA_HOME/yard on Linux, via env-paths).
 */
import envPaths from 'env-paths'
import path from 'node:path'

import {InputError} from './errors.js'

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

/** yard's containers.conf (DESIGN.md §8), written by `yard doctor --fix`. */
export function containersConfPath(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(stateDir(env), 'containers.conf')
}
