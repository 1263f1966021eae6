/**
 * `yard exec NAME -- CMD…` without oclif (DESIGN.md §4.2, §9 "Start-up"). Agents run an exec
 * for every instruction, and oclif's configuration (its package, the manifest, every plugin's
 * package.json) costs more than the engine call it leads to. bin/run.js hands this module the
 * arguments first; it runs the request itself only when oclif would add nothing to it:
 *
 * - the words are `exec [NAME] -- CMD [ARG…]`: no flag (`--help`, `--verbose`, `-w`, `--sandbox`,
 *   … go to oclif), NAME not starting with `-`, a command after `--`;
 * - no plugin is installed or linked (oclif's user plugins: `oclif.plugins` of the package.json
 *   in its data directory, `YARD_DATA_DIR` or `$XDG_DATA_HOME/yard`), so yard's own backends are
 *   all a registry could hold (`builtinRegistry`);
 * - `DEBUG` is unset (oclif's debug output and stack traces).
 *
 * Otherwise it answers undefined and oclif runs the command (src/commands/exec.ts) as always.
 * Both call the same use case (`execAnywhere`) and render errors the same way.
 */
import {readFileSync} from 'node:fs'
import {homedir} from 'node:os'
import path from 'node:path'

// The use case's own modules, not the domains' index files: an index evaluates every use case it
// names (create, rm, pools…), which exec would load and never call.
import {createContext} from '../core/kernel/context.js'
import {ensureStateDir} from '../core/kernel/state.js'
import {createBackends} from '../core/registry/backends.js'
import {builtinRegistry} from '../core/registry/builtin.js'
import {execAnywhere} from '../core/sandbox/exec.js'
import {terminalSafe, YardError} from '../sdk/errors.js'

/** What the fast path runs: the target's name as given (undefined: the usual default) and the command. */
export interface FastExecRequest {
  name?: string
  command: string[]
}

/**
 * The request in `argv` (the words after `yard`) when the fast path may run it, else undefined.
 * Reads the user plugins' package.json (sync, a few hundred bytes); an unreadable one that exists
 * is left to oclif, which warns about it.
 */
export function fastExecRequest(argv: readonly string[], env: NodeJS.ProcessEnv): FastExecRequest | undefined {
  if (argv[0] !== 'exec' || env.DEBUG) return undefined
  const split = argv.indexOf('--')
  if (split === -1) return undefined
  const before = argv.slice(1, split)
  const command = argv.slice(split + 1)
  if (before.length > 1 || command.length === 0 || before.some((word) => word.startsWith('-'))) return undefined
  if (hasUserPlugins(env) !== false) return undefined
  return {name: before[0], command}
}

/**
 * Whether oclif would load a user or linked plugin: true, false, or undefined when the file
 * exists but cannot be read as JSON (oclif's to judge). oclif's data directory rule
 * (Config.dataDir): `<BIN>_DATA_DIR`, else `$XDG_DATA_HOME/<dirname>`, else `~/.local/share/<dirname>`
 * with `~` from HOME (Config.home).
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
 * Runs `yard exec` for `argv` without oclif when `fastExecRequest` allows it: the exit code to
 * leave with (the command's, or a YardError's after its what/why/fix on stderr), or undefined when
 * oclif must run the command instead.
 */
export async function fastExec(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<number | undefined> {
  const request = fastExecRequest(argv, env)
  if (request === undefined) return undefined
  // As BaseCommand's: warnings escaped, on stderr.
  const warn = (message: string) => process.stderr.write(terminalSafe(message) + '\n')
  try {
    ensureStateDir(env)
    const context = createContext({env, warn, log: warn})
    return await execAnywhere(context, createBackends(builtinRegistry), {
      name: request.name,
      argv: request.command,
      tty: Boolean(process.stdin.isTTY),
    })
  } catch (error) {
    if (error instanceof YardError) {
      process.stderr.write(error.render() + '\n')
      return error.code
    }

    // What oclif prints for an error that is no YardError; --verbose (oclif's path) shows the stack.
    const message = error instanceof Error ? error.message : String(error)
    process.stderr.write(terminalSafe(`Error: ${message}`) + '\n  (run again with --verbose for the stack trace)\n')
    return 1
  }
}
