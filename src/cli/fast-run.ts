/**
 * How the long commands' start-up paths without oclif (fast-create.ts, fast-worktree-add.ts) run
 * their use case, as BaseCommand runs a command that declares `--quiet`: the state directory made
 * sure of first, progress on stderr unless `--quiet` or `--json` (tui/progress-renderer.ts),
 * warnings above its frame and escaped, the result as JSON or as lines, and a failure rendered as
 * the command's `catch` renders it (fast-path.ts reportFailure).
 */
import type {YardContext} from '../core/kernel/context.js'
import type {Backends} from '../core/registry/backends.js'

// The modules themselves, not the domains' index files (fast-exec.ts says why).
import {createContext} from '../core/kernel/context.js'
import {ensureStateDir} from '../core/kernel/state.js'
import {createBackends} from '../core/registry/backends.js'
import {builtinRegistry} from '../core/registry/builtin.js'
import {terminalSafe} from '../sdk/errors.js'
import {progressFor} from '../tui/progress-renderer.js'
import {reportFailure, writeJson} from './fast-path.js'

/**
 * Runs `run` with a context over `env` and the built-in backends (the registry oclif would build
 * when no plugin is installed: builtinRegistry), then prints its result: `--json` as JSON,
 * else `lines(result)` escaped, one per line.
 * @returns the exit code: 0 after the result, or the failure's after it was rendered. Never throws.
 */
export async function runFastCommand<T>(
  env: NodeJS.ProcessEnv,
  output: {json: boolean; quiet: boolean},
  run: (context: YardContext, backends: Backends) => Promise<T>,
  lines: (result: T) => string[],
): Promise<number> {
  const progress = progressFor(process.stderr, {silent: output.quiet || output.json})
  const warn = (message: string) => {
    if (!progress.note(terminalSafe(message))) process.stderr.write(terminalSafe(message) + '\n')
  }

  try {
    ensureStateDir(env)
    const result = await run(createContext({env, warn, progress, log: warn}), createBackends(builtinRegistry))
    progress.end('done')
    if (output.json) writeJson(result)
    else for (const line of lines(result)) process.stdout.write(terminalSafe(line, {keepNewlines: true}) + '\n')
    return 0
  } catch (error) {
    progress.end('failed')
    return reportFailure(error, {json: output.json})
  }
}
