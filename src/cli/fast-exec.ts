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
 * - `DEBUG` and `YARD_CONTENT_TYPE` are unset (oclif's debug output and stack traces; JSON output).
 *
 * Otherwise it answers undefined and oclif runs the command (src/commands/exec.ts) as always.
 * Both call the same use case (`execAnywhere`) and render errors the same way.
 */
// The use case's own modules, not the domains' index files: an index evaluates every use case it
// names (create, rm, pools…), which exec would load and never call.
import {createContext} from '../core/kernel/context.js'
import {ensureStateDir} from '../core/kernel/state.js'
import {createBackends} from '../core/registry/backends.js'
import {builtinRegistry} from '../core/registry/builtin.js'
import {execAnywhere} from '../core/sandbox/exec.js'
import {terminalSafe} from '../sdk/errors.js'
import {oclifAddsNothing, reportFailure} from './fast-path.js'

/** What the fast path runs: the target's name as given (undefined: the usual default) and the command. */
export interface FastExecRequest {
  name?: string
  command: string[]
}

/**
 * The request in `argv` (the words after `yard`) when the fast path may run it, else undefined.
 * Reads the user plugins' package.json (fast-path.ts oclifAddsNothing); an unreadable one that
 * exists is left to oclif, which warns about it.
 */
export function fastExecRequest(argv: readonly string[], env: NodeJS.ProcessEnv): FastExecRequest | undefined {
  if (argv[0] !== 'exec') return undefined
  const split = argv.indexOf('--')
  if (split === -1) return undefined
  const before = argv.slice(1, split)
  const command = argv.slice(split + 1)
  if (before.length > 1 || command.length === 0 || before.some((word) => word.startsWith('-'))) return undefined
  if (!oclifAddsNothing(env)) return undefined
  return {name: before[0], command}
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
    return reportFailure(error)
  }
}
