/**
 * The one process adapter (STYLE.md, "Processes and git"): argv arrays, never a shell string;
 * `+ cmd` echo with `--verbose`; time budgets that kill the whole process group; a typed failure
 * carrying the command, exit code and stderr.
 *
 * Two libraries of one family serve it. execa runs what yard reads or watches (captured output,
 * input, line transforms, budgets); it is imported on the first such run, since its module graph
 * costs more than the one engine call of `yard exec` it would lead to (DESIGN.md §9 "Start-up").
 * A command that takes the terminal (exec, shell: `stdio: 'inherit'` with nothing to transform)
 * runs through nano-spawn, execa's authors' small wrapper of node:child_process, with the same
 * argv array and environment.
 */
import {constants as osConstants} from 'node:os'
import {onExit} from 'signal-exit'

import {OperationError} from './errors.js'
import {withoutProgress} from './progress.js'
import {shellCommand} from './shell.js'

export interface RunOptions {
  cwd?: string
  /** Extra environment, merged over the runner's and the process's. */
  env?: Record<string, string | undefined>
  /** Text written to the child's stdin. */
  input?: string
  /** Kill the child's whole process group after this many milliseconds. */
  timeoutMs?: number
  /** Named in the error when the budget runs out ("fetch budget of 5 min"). */
  budget?: string
  /** `inherit` hands the terminal to the child (exec, shells); output is then not captured. */
  stdio?: 'pipe' | 'inherit'
  /**
   * With `inherit`: each line the child writes to stdout is handed here as it comes, and reaches
   * the terminal only when this returns true (to drop a tool's own chatter); never buffered.
   */
  stdoutFilter?: (line: string) => boolean
  /**
   * With `inherit`: a line the child writes to stderr that starts with `Error: ` (an engine's own
   * failure, as podman prints it) and that this returns true for is held back from the terminal
   * and returned in `stderr`; everything else reaches the terminal as it comes. Lets one
   * `podman exec` stand for inspect + exec: its own error is read and said in yard's words.
   */
  stderrHold?: (line: string) => boolean
  /**
   * With `inherit`: both of the child's streams, line by line as they come, go through this, and
   * what it returns reaches yard's stdout (a capture's `stdout`); undefined drops the line. For
   * output that is the user's data whichever stream the tool used (`yard logs`).
   */
  outputLines?: (line: string) => string | undefined
  /** Return a failed result instead of throwing. */
  allowFailure?: boolean
  /**
   * Handed the child's stderr as it comes (a progress listener); it is still captured, without
   * git's progress redraws (progress.ts withoutProgress).
   */
  onStderr?: (chunk: string) => void
  /** Handed the child's stdout as it comes (debootstrap's `I:` stages); it is still captured. */
  onStdout?: (chunk: string) => void
}

export interface RunResult {
  argv: string[]
  exitCode: number
  stdout: string
  stderr: string
  timedOut: boolean
}

export interface RunnerOptions {
  /** Echo every command as `+ cmd` before it runs. */
  verbose?: boolean
  /** Where echoes go; defaults to stderr. */
  log?: (line: string) => void
  /** The environment every child gets (default: process.env), e.g. with CONTAINERS_CONF. */
  env?: Record<string, string | undefined>
  /** Called with every argv before it runs: tests record what yard asked for. */
  onSpawn?: (argv: string[], options: RunOptions) => void
  /** Where children that ask for the terminal go when there is none to give (see TerminalCapture). */
  capture?: TerminalCapture
  /**
   * Told, synchronously, the process group of a child run in its own group (one with a budget)
   * right after it starts, and undefined once it has exited: a lock holder records it, since
   * such a child survives a kill of yard (lock.ts recordGroup).
   */
  onGroup?: (pgid: number | undefined) => void
}

/**
 * For a process whose stdin and stdout are not a terminal but a protocol channel (`yard mcp`):
 * a child run with `stdio: 'inherit'` (exec, logs) gets no stdin, its output is handed here as it
 * comes (after `stdoutFilter`), and its process group is killed after `timeoutMs` (exit 124).
 */
export interface TerminalCapture {
  /** Kill such a child's whole process group after this many milliseconds (default: no limit). */
  timeoutMs?: number
  write(stream: 'stdout' | 'stderr', text: string): void
  /** Told when such a child ended: whether `timeoutMs` ran out (its exit code is then 124). */
  ended?(outcome: {timedOut: boolean}): void
}

/** Renders argv for display only (never executed): quotes words that need it (sdk/shell.ts). */
export function formatArgv(argv: string[]): string {
  return shellCommand(argv)
}

/** An execa line transform that passes on the lines `keep` returns true for. */
function keepLines(keep: (line: string) => boolean) {
  return function* (line: unknown) {
    if (keep(String(line))) yield line
  }
}

/** An execa line transform that hands each line, mapped by `map`, to `write` and passes nothing on. */
function forwardLines(map: (line: string) => string | undefined, write: (text: string) => void) {
  return function* (line: unknown) {
    const mapped = map(String(line))
    if (mapped !== undefined) write(mapped + '\n')
    yield* []
  }
}

/** The commands running now with a budget (each in its own group: `detached`): group id → program. */
const runningGroups = new Map<number, string>()
let endsGroupsOnExit = false

/**
 * Records a command running in its own group. Such a command is out of the reach of the
 * terminal's signals and of execa's `cleanup` (which skips detached children), so the first one
 * installs an exit hook (signal-exit: a normal exit, `process.exit`, or SIGINT, SIGTERM, SIGHUP…
 * that ends yard) that sends SIGTERM to every group still running: a yard killed mid-fetch leaves
 * no `git fetch` and `ssh` behind. A SIGKILL runs no hook; the locks end such orphans (lock.ts).
 */
function trackGroup(pgid: number, program: string): void {
  runningGroups.set(pgid, program)
  if (endsGroupsOnExit) return
  endsGroupsOnExit = true
  onExit(() => {
    for (const group of runningGroups.keys()) {
      try {
        process.kill(-group, 'SIGTERM')
      } catch {
        // Gone meanwhile.
      }
    }
  })
}

/**
 * Sends `signal` to the process group of every command of one of `programs` running now in its
 * own group (those with a time budget: a terminal's Ctrl-C does not reach them). An interrupted
 * command (kernel/interrupt.ts) ends the clone or fetch in flight with it instead of waiting for
 * its end.
 */
export function signalRunningGroups(signal: NodeJS.Signals, programs: string[]): void {
  for (const [pgid, program] of runningGroups) {
    if (!programs.includes(program)) continue
    try {
      process.kill(-pgid, signal)
    } catch {
      // Gone meanwhile.
    }
  }
}

/** Runs external commands. One instance per command invocation, built by the base command. */
export class ProcessRunner {
  constructor(readonly options: RunnerOptions = {}) {}

  /** A runner with the same settings and extra environment. */
  withEnv(env: Record<string, string | undefined>): ProcessRunner {
    return new ProcessRunner({...this.options, env: {...this.options.env, ...env}})
  }

  /** A runner with the same settings that reports its children's process groups to `onGroup`. */
  withGroupReporter(onGroup: (pgid: number | undefined) => void): ProcessRunner {
    // The same class: tests and callers extend the runner to watch what runs.
    return new (this.constructor as new (options: RunnerOptions) => ProcessRunner)({...this.options, onGroup})
  }

  /**
   * Runs `file args…` and resolves with its output.
   * @throws OperationError (exit 1) when it exits non-zero, cannot start, or exceeds its budget,
   *   unless `allowFailure`; the message names the command, code and stderr.
   */
  async run(file: string, args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
    const argv = [file, ...args]
    this.options.onSpawn?.(argv, options)
    if (this.options.verbose)
      (this.options.log ?? ((line) => process.stderr.write(line + '\n')))(`+ ${formatArgv(argv)}`)
    const capture = options.stdio === 'inherit' ? this.options.capture : undefined
    const inherit = options.stdio === 'inherit' && !capture
    const filter = options.stdoutFilter
    const hold = (inherit || capture) && options.outputLines === undefined ? options.stderrHold : undefined
    const timeoutMs = capture ? capture.timeoutMs : options.timeoutMs
    const group = timeoutMs !== undefined && !inherit
    const lines = options.stdio === 'inherit' ? options.outputLines : undefined
    if (inherit && filter === undefined && lines === undefined && options.input === undefined)
      return this.settle(argv, options, await runOnTerminal(file, args, this.environment(options), options.cwd, hold))
    const forward =
      lines && forwardLines(lines, (text) => (capture ? capture.write('stdout', text) : process.stdout.write(text)))
    const {execa} = await import('execa')
    const child = execa(file, args, {
      cwd: options.cwd,
      env: this.environment(options),
      extendEnv: false,
      input: options.input,
      stdin: inherit ? 'inherit' : options.input === undefined ? 'ignore' : undefined,
      stdout: forward
        ? [forward]
        : inherit
          ? filter
            ? [keepLines(filter), 'inherit']
            : 'inherit'
          : capture && filter
            ? [keepLines(filter)]
            : 'pipe',
      buffer: capture || forward ? false : {stdout: !(inherit && filter), stderr: hold === undefined},
      stderr: forward ? [forward] : inherit && hold === undefined ? 'inherit' : 'pipe',
      reject: false,
      stripFinalNewline: false,
      // Its own process group, so a budget kills grandchildren too (git spawns ssh, remote-https…).
      detached: group,
      cleanup: true,
    })
    if (capture && !forward) {
      for (const stream of ['stdout', 'stderr'] as const) {
        if (stream === 'stderr' && hold) continue
        child[stream]?.setEncoding('utf8')
        child[stream]?.on('data', (text: string) => capture.write(stream, text))
      }
    }

    const held = hold
      ? holdEngineErrors(child.stderr!, hold, (text) =>
          capture ? capture.write('stderr', text) : process.stderr.write(text),
        )
      : undefined
    for (const [stream, listener] of [
      ['stderr', options.onStderr],
      ['stdout', options.onStdout],
    ] as const) {
      if (listener && !inherit && !capture)
        child[stream]?.on('data', (chunk: Buffer | string) => listener(String(chunk)))
    }

    const reportGroup = group && child.pid !== undefined ? this.options.onGroup : undefined
    // The exit hook first: once the group is reported, a signal that ends yard must end it too.
    if (group && child.pid !== undefined) trackGroup(child.pid, file.split('/').at(-1) ?? file)
    reportGroup?.(child.pid)
    let timedOut = false
    const timer = group
      ? setTimeout(() => {
          timedOut = true
          try {
            if (child.pid) process.kill(-child.pid, 'SIGKILL')
          } catch {
            child.kill('SIGKILL')
          }
        }, timeoutMs)
      : undefined
    const result = await child
    if (child.pid !== undefined) runningGroups.delete(child.pid)
    if (timer) clearTimeout(timer)
    capture?.ended?.({timedOut})
    reportGroup?.(undefined)
    return this.settle(argv, options, {
      exitCode: result.exitCode ?? (result.failed ? 1 : 0),
      stdout: typeof result.stdout === 'string' ? result.stdout : '',
      stderr: held
        ? held()
        : typeof result.stderr === 'string'
          ? options.onStderr
            ? withoutProgress(result.stderr)
            : result.stderr
          : '',
      timedOut,
      notFound: (result as {code?: string}).code === 'ENOENT',
      timeoutMs,
    })
  }

  /** The runner's environment is the whole environment (the context's, which tests replace), plus the run's. */
  private environment(options: RunOptions): Record<string, string | undefined> {
    return {...(this.options.env ?? process.env), ...options.env}
  }

  /** A run's outcome as `run` resolves or throws it: budget, not found, or a non-zero exit. */
  private settle(argv: string[], options: RunOptions, ended: Ended): RunResult {
    const {timedOut, notFound, timeoutMs} = ended
    const file = argv[0]
    const outcome: RunResult = {argv, exitCode: ended.exitCode, stdout: ended.stdout, stderr: ended.stderr, timedOut}
    if (timedOut) {
      outcome.exitCode = 124 // as timeout(1)
      if (!options.allowFailure) {
        throw new OperationError(
          `${formatArgv(argv)} was stopped: it exceeded its ${options.budget ?? 'time'} budget of ${formatDuration(timeoutMs!)}`,
          {
            why: 'the command did not finish in time, so its whole process group was killed',
            fix: 'check the network or the remote, then run the command again',
          },
        )
      }

      return outcome
    }

    if (notFound) {
      outcome.exitCode = 127
      if (!options.allowFailure) {
        throw new OperationError(`${file} is not installed or not on PATH`, {
          why: `yard needs ${file} for this command`,
          fix: 'run scripts/setup-system (or install it with your package manager), then `yard doctor`',
        })
      }

      return outcome
    }

    if (outcome.exitCode !== 0 && !options.allowFailure) {
      const stderr = outcome.stderr.trim()
      throw new OperationError(`${formatArgv(argv)} failed with exit code ${outcome.exitCode}`, {
        why: stderr === '' ? undefined : stderr,
      })
    }

    return outcome
  }

  /** Runs git with `GIT_TERMINAL_PROMPT=0` and `LC_ALL=C` (never prompts, parseable output). */
  async git(args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
    return this.run('git', args, {...options, env: {GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C', ...options.env}})
  }
}

/** How a child ended, before `settle` turns it into a RunResult or an error. */
interface Ended {
  exitCode: number
  stdout: string
  stderr: string
  timedOut: boolean
  notFound: boolean
  timeoutMs?: number
}

/**
 * Runs `file args…` on this terminal (stdin and stdout inherited; stderr too, unless `hold` asks
 * for the engine's own failures to be held back) through nano-spawn, in yard's process group, so
 * the terminal's signals reach it as they reach yard. `env` is the child's whole environment: a
 * variable of this process it lacks is unset in the child. Like execa's `cleanup`, a child still
 * running when yard exits is sent SIGTERM (signal-exit). Never rejects.
 */
async function runOnTerminal(
  file: string,
  args: readonly string[],
  env: Record<string, string | undefined>,
  cwd: string | undefined,
  hold: ((line: string) => boolean) | undefined,
): Promise<Ended> {
  const {default: spawn} = await import('nano-spawn')
  const unset = Object.fromEntries(Object.keys(process.env).map((key) => [key, undefined]))
  const subprocess = spawn(file, args, {
    cwd,
    env: {...unset, ...env},
    stdio: ['inherit', 'inherit', hold ? 'pipe' : 'inherit'],
  })
  const child = await subprocess.nodeChildProcess.catch(() => undefined)
  const held =
    hold && child?.stderr ? holdEngineErrors(child.stderr, hold, (text) => process.stderr.write(text)) : undefined
  const removeHook = child ? onExit(() => void child.kill('SIGTERM')) : undefined
  const ended = await subprocess.then(
    () => ({exitCode: 0, notFound: false}),
    (error: {exitCode?: number; signalName?: string; cause?: {code?: string}}) => ({
      // Ended by a signal: 128 + its number, as a shell reports it (141 for SIGPIPE under `| head`).
      exitCode: error.exitCode ?? signalExit(error.signalName) ?? 1,
      notFound: error.cause?.code === 'ENOENT',
    }),
  )
  removeHook?.()
  return {...ended, stdout: '', stderr: held ? held() : '', timedOut: false}
}

/** 128 + the number of signal `name` (SIGKILL → 137), or undefined for no known signal. */
function signalExit(name: string | undefined): number | undefined {
  const number = name === undefined ? undefined : (osConstants.signals as Record<string, number>)[name]
  return number === undefined ? undefined : 128 + number
}

const ERROR_PREFIX = 'Error: '

/**
 * Passes `stream` on to `write` as it comes, but for lines starting with `Error: ` that `hold`
 * returns true for: a line that could still become one (its text so far is a prefix of, or starts
 * with, `Error: `) waits for its end. Returns a function giving the held lines.
 */
function holdEngineErrors(
  stream: NodeJS.ReadableStream,
  hold: (line: string) => boolean,
  write: (text: string) => void,
): () => string {
  let pending = ''
  let held = ''
  const settle = (line: string) => {
    if (line.startsWith(ERROR_PREFIX) && hold(line.trimEnd())) held += line
    else write(line)
  }

  stream.setEncoding('utf8')
  stream.on('data', (text: string) => {
    pending += text
    let newline: number
    while ((newline = pending.indexOf('\n')) !== -1) {
      settle(pending.slice(0, newline + 1))
      pending = pending.slice(newline + 1)
    }

    const undecided = ERROR_PREFIX.startsWith(pending) || pending.startsWith(ERROR_PREFIX)
    if (!undecided) {
      write(pending)
      pending = ''
    }
  })
  return () => {
    if (pending !== '') settle(pending)
    pending = ''
    return held
  }
}

/** "5 min", "90 s", "250 ms" for a duration in milliseconds. */
export function formatDuration(ms: number): string {
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} min`
  if (ms >= 1000) return `${Math.round(ms / 100) / 10} s`
  return `${ms} ms`
}
