/**
 * Reading `podman exec`'s own failure from its result, so that one exec stands for inspect +
 * exec (DESIGN.md §4.2): a missing container, one not running, or a working directory missing
 * in it. The runner holds these lines back from the terminal (RunOptions.stderrHold) and the
 * caller says them in yard's words.
 */
import type {RunResult} from './process.js'

/**
 * What podman (4.x, with crun or runc) says on stderr when its exec never started the command:
 * the container is gone or not running, or the working directory is missing in it (exit 127,
 * the same code as a command not found, so only the words tell them apart).
 */
const ENGINE_EXEC_FAILURES: ReadonlyArray<readonly [RegExp, 'no-container' | 'not-running' | 'no-directory']> = [
  [/^Error: no container with (name or ID|ID or name) .* found: no such container/, 'no-container'],
  [/^Error: can only create exec sessions on running containers/, 'not-running'],
  // runc: chdir to cwd ("/x") set in config.json failed: no such file or directory; crun: chdir to
  // `/x`: No such file or directory
  [/^Error: .*chdir to .*no such file or directory/i, 'no-directory'],
]

/** Which engine failure an exec's result is, if any (a command's own exit code is never one). */
export function execFailure(
  result: Pick<RunResult, 'exitCode' | 'stderr'>,
): 'no-container' | 'not-running' | 'no-directory' | undefined {
  if (result.exitCode === 0) return undefined
  const line = result.stderr.split('\n').find((text) => ENGINE_EXEC_FAILURES.some(([pattern]) => pattern.test(text)))
  return line === undefined ? undefined : ENGINE_EXEC_FAILURES.find(([pattern]) => pattern.test(line))![1]
}

/** For RunOptions.stderrHold: whether a stderr line is one of the engine failures above. */
export function isEngineExecFailure(line: string): boolean {
  return ENGINE_EXEC_FAILURES.some(([pattern]) => pattern.test(line))
}
