/**
 * What yard's start-up paths without oclif share (DESIGN.md §9 "Start-up"; fast-exec.ts,
 * fast-create.ts): when oclif would add nothing to a request, and how a failure is rendered the
 * way BaseCommand's `catch` renders it.
 */
import {readFileSync} from 'node:fs'
import {homedir} from 'node:os'
import path from 'node:path'

import {YardError} from '../sdk/errors.js'

/**
 * Whether oclif would add nothing to a request of yard's own commands in this environment: no
 * user or linked plugin (their hooks and commands), `DEBUG` and `YARD_DEBUG` unset (oclif's debug
 * output and stack traces; oclif reads `<BIN>_DEBUG`) and `YARD_CONTENT_TYPE` unset (oclif's way
 * of asking every command for JSON).
 */
export function oclifAddsNothing(env: NodeJS.ProcessEnv): boolean {
  return !env.DEBUG && !env.YARD_DEBUG && env.YARD_CONTENT_TYPE === undefined && hasUserPlugins(env) === false
}

/**
 * Whether oclif would load a user or linked plugin: true, false, or undefined when the file
 * exists but cannot be read as JSON (oclif's to judge). oclif's data directory rule
 * (Config.dataDir): `<BIN>_DATA_DIR`, else `$XDG_DATA_HOME/<dirname>`, else `~/.local/share/<dirname>`
 * with `~` from HOME (Config.home). Reads that package.json (sync, a few hundred bytes).
 */
function hasUserPlugins(env: NodeJS.ProcessEnv): boolean | undefined {
  const home = env.HOME || homedir()
  const dataDir = env.YARD_DATA_DIR || path.join(env.XDG_DATA_HOME || path.join(home, '.local', 'share'), 'yard')
  let text: string
  try {
    text = readFileSync(path.join(dataDir, 'package.json'), 'utf8')
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? false : undefined
  }

  try {
    const plugins = (JSON.parse(text) as {oclif?: {plugins?: unknown}}).oclif?.plugins
    return plugins === undefined ? false : !Array.isArray(plugins) || plugins.length > 0
  } catch {
    return undefined
  }
}

/**
 * Writes `error` as BaseCommand's `catch` does and resolves the exit code: a YardError's
 * what/why/fix on stderr (with `json`, `{"error": {code, message, why, fix}}` on stdout); any
 * other error as oclif's Command.catch and error handler write it — with `json` its
 * `toErrorJson` on stdout (exit 1), else oclif's own handler, loaded for this (it prints and
 * exits the process).
 */
export async function reportFailure(error: unknown, options: {json?: boolean} = {}): Promise<number> {
  if (error instanceof YardError) {
    if (options.json) writeJson({error: {code: error.code, message: error.message, why: error.why, fix: error.fix}})
    else process.stderr.write(error.render() + '\n')
    return error.code
  }

  if (options.json) {
    writeJson({error: error instanceof Error ? {...error, message: error.message, name: error.name} : error})
    return 1
  }

  // A failure yard did not foresee: rare, so oclif is loaded to print it as it always has.
  const {Errors} = await import('@oclif/core')
  await Errors.handle(error as Error)
  return 1
}

/** A command's `--json` result on stdout, as oclif's `logJson` writes it (two-space indent, no theme). */
export function writeJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, undefined, 2) + '\n')
}
