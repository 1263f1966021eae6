/**
 * yard's state directory (DESIGN.md §2): `YARD_STATE_DIR`, else the platform's data directory
 * for `yard` (XDG_DATA_HOME/yard on Linux, via env-paths).
 */
import envPaths from 'env-paths'
import path from 'node:path'

/** Absolute path of the state directory; not created here. */
export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  const override = env.YARD_STATE_DIR
  if (override && override.trim() !== '') return path.resolve(override)
  return envPaths('yard', {suffix: ''}).data
}

/** yard's containers.conf (DESIGN.md §8), written by `yard doctor --fix`. */
export function containersConfPath(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(stateDir(env), 'containers.conf')
}
