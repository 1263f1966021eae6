/**
 * Reading `podman exec`'s own failure from its result, so that one exec stands for inspect +
 * exec (DESIGN.md §4.2): a missing container, one not running, or a working directory missing
 * in it. The runner holds these lines back from the terminal (RunOptions.stderrHold) and the
 * caller says them in yard's words.
 */
import type {ProcessRunner, RunResult} from './process.js'

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

/** podman's exit codes for its own exec failures (4.3, runc or crun). */
const ENGINE_EXIT_CODES: Readonly<Record<'no-container' | 'not-running' | 'no-directory', readonly number[]>> = {
  'no-container': [125],
  'not-running': [125, 255],
  'no-directory': [126, 127],
}

/** What the engine says of an exec's container now: absent, running, or another state. */
export type ExecProbe = () => Promise<'absent' | 'running' | 'other'>

/** The probe of a podman-like engine (`command`: podman, docker): `container inspect` of `container`. */
export function engineProbe(runner: ProcessRunner, command: string, container: string): ExecProbe {
  return async () => {
    const inspected = await runner.run(command, ['container', 'inspect', '--format', '{{.State.Status}}', container], {
      allowFailure: true,
    })
    if (inspected.exitCode !== 0) return 'absent'
    return inspected.stdout.trim() === 'running' ? 'running' : 'other'
  }
}

/**
 * The engine failure `result` shows, once confirmed: a held line names it (execFailure) and the
 * exit code is the engine's for it; given a `probe`, a missing or stopped container is also
 * confirmed by it (one inspect, on this failure path only). A command of the user's that prints
 * such a line itself and exits so is then not taken for one: its output and exit code are its
 * own. A caller that would run the command again on a failure (the box, after a stale record)
 * must give a probe; one that only reports it may go by the exec's result alone. A missing
 * directory is always read from the exec (runc's and crun's words, exit 127): asking would take
 * an exec of its own.
 */
export async function confirmedExecFailure(
  result: Pick<RunResult, 'exitCode' | 'stderr'>,
  probe?: ExecProbe,
): Promise<'no-container' | 'not-running' | 'no-directory' | undefined> {
  const failure = execFailure(result)
  if (failure === undefined || !ENGINE_EXIT_CODES[failure].includes(result.exitCode)) return undefined
  if (failure === 'no-directory' || probe === undefined) return failure
  const state = await probe()
  if (failure === 'no-container') return state === 'absent' ? failure : undefined
  return state === 'other' ? failure : undefined
}

/** For RunOptions.stderrHold: whether a stderr line is one of the engine failures above. */
export function isEngineExecFailure(line: string): boolean {
  return ENGINE_EXEC_FAILURES.some(([pattern]) => pattern.test(line))
}
