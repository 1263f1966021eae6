/**
 * Ctrl-C (SIGINT) and `kill` (SIGTERM) during a command that makes several things in a row
 * (a sandbox create: a pod, a pin, cache leases, locks). Node's default ends the process at once,
 * so the command's own rollback never runs and what it made stays behind, half-made. While such a
 * command runs, the first signal only marks it interrupted: a git process in flight is ended, a
 * podman step finishes, the next checkpoint
 * throws InterruptedError, and the command undoes what it made on its way out, as for any
 * failure; it then exits 130. A second signal ends the process at once, as without this.
 */
import {ExitCode, YardError} from '../../sdk/errors.js'
import {signalRunningGroups} from '../../sdk/process.js'

const SIGNALS = ['SIGINT', 'SIGTERM'] as const

/** Exit status of a process ended by `signal`: 128 + its number (SIGINT 130, SIGTERM 143). */
const SIGNAL_STATUS: Record<(typeof SIGNALS)[number], number> = {SIGINT: 130, SIGTERM: 143}

/** Thrown at a checkpoint after SIGINT or SIGTERM: what the command made was undone (exit 130). */
export class InterruptedError extends YardError {
  constructor(what: string, cause?: unknown) {
    super(ExitCode.cancelled, `${what} was interrupted; what it had made was undone`, {
      fix: 'run the same command again',
      cause,
    })
    this.name = 'InterruptedError'
  }
}

/** What holdingInterrupts gives its work. */
export interface Interrupt {
  /**
   * From here on a signal is held (before, while nothing is made yet, such as waiting for a lock,
   * it ends the process at once, as without this).
   */
  arm(): void
  /**
   * A checkpoint between two steps.
   * @throws InterruptedError once a signal came.
   */
  check(): void
}

/**
 * Runs `work` with SIGINT and SIGTERM held once it called `arm()` (see the module comment): the
 * first one warns, sends SIGINT to the git commands running in their own process groups
 * (signalRunningGroups), and makes `check()` throw InterruptedError; a second one, or one before
 * `arm()`, ends the process with 128 + the signal's number. A signal after the work's last
 * checkpoint keeps what it made, and says so. The handlers are removed when `work` settles.
 * @param what the command as the user typed it, for messages (`yard sandbox create web`).
 * @returns what `work` resolves.
 * @throws whatever `work` throws (InterruptedError from a checkpoint after a signal).
 */
export async function holdingInterrupts<T>(
  what: string,
  warn: (message: string) => void,
  work: (interrupt: Interrupt) => Promise<T>,
): Promise<T> {
  let armed = false
  let interrupted = false
  const onSignal = (signal: (typeof SIGNALS)[number]) => {
    if (!armed || interrupted) process.exit(SIGNAL_STATUS[signal])
    interrupted = true
    warn(
      `interrupted: ${what} stops at its next step and undoes what it made (${signal} again to stop at once, leaving it half-made)`,
    )
    // git runs in process groups of its own, out of the terminal's reach: a clone or fetch ends now.
    // podman's steps are short and end on their own: a `kube play` stopped half-way leaves a pod
    // the rollback does not know was made.
    signalRunningGroups('SIGINT', ['git'])
  }

  for (const signal of SIGNALS) process.on(signal, onSignal)
  try {
    const result = await work({
      arm() {
        armed = true
      },
      check() {
        if (interrupted) throw new InterruptedError(what)
      },
    })
    if (interrupted) warn(`note: ${what} had made everything when the signal came, so it is kept`)
    return result
  } catch (error) {
    // A child the same Ctrl-C ended fails its step: the work undid what it made, as for a checkpoint.
    if (interrupted && !(error instanceof InterruptedError)) throw new InterruptedError(what, error)
    throw error
  } finally {
    for (const signal of SIGNALS) process.off(signal, onSignal)
  }
}
