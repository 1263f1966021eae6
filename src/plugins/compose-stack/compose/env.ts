/**
 * The environment a compose project is interpolated with (compose specification,
 * "Interpolation"; DESIGN.md §4.2): the shell environment, then the checkout's `.env`, then the
 * project directory's `.env` (when the first compose file is elsewhere), each for what the ones
 * before leave unset, as docker compose does — except yard's own variables (`[ports]` keys, WORKTREE,
 * COMPOSE_PROJECT_NAME, YARD_*), which always win. An env file that sets one of them is a
 * warning naming the file and the key, and its value is not used.
 */
import {existsSync, statSync} from 'node:fs'

import type {Env, ResolveWarning} from './types.js'

import {readEnvFile} from './env-file.js'

/** True for a name yard owns in every stack's environment (DESIGN.md §3.5). */
export function isYardVariable(name: string, yardEnv: Env): boolean {
  return (
    yardEnv[name] !== undefined || name === 'WORKTREE' || name === 'COMPOSE_PROJECT_NAME' || name.startsWith('YARD_')
  )
}

/**
 * The defined entries of an environment, with `over` winning over `base`: a name `over` has with
 * an undefined value is unset (yard's WORKTREE is unset for main, whatever the shell has).
 */
export function layered(base: Env, over: Env = {}): Record<string, string> {
  const result: Record<string, string> = {}
  for (const [name, value] of Object.entries(base)) if (value !== undefined) result[name] = value
  for (const [name, value] of Object.entries(over)) {
    if (value === undefined) delete result[name]
    else result[name] = value
  }

  return result
}

/** Reads an env file when it exists (and is a file); `{}` otherwise. */
export function readOptionalEnvFile(file: string, lookup: Env): Record<string, string> {
  if (!existsSync(file) || !statSync(file).isFile()) return {}
  return readEnvFile(file, lookup)
}

/**
 * Adds an env file's values to `environment` where it has none, skipping yard's variables (with
 * a warning each). `environment` already holds the shell's and yard's values.
 */
export function addEnvFileValues(
  environment: Record<string, string>,
  values: Readonly<Record<string, string>>,
  file: string,
  yardEnv: Env,
  warn: (warning: ResolveWarning) => void,
): void {
  for (const [name, value] of Object.entries(values)) {
    if (isYardVariable(name, yardEnv)) {
      const used = yardEnv[name] === undefined ? 'it is not used' : `yard's value (${yardEnv[name]}) is used`
      warn({
        kind: 'yard-variable-in-env-file',
        file,
        key: name,
        message: `${file} sets ${name}, one of yard's variables; ${used}`,
      })
      continue
    }

    if (!(name in environment)) environment[name] = value
  }
}
