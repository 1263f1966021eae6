/**
 * Typed errors and exit codes (STYLE.md, "Errors and exit codes").
 *
 * Every user-facing failure is a `YardError`: it says what happened, why, and how to fix it.
 * The base command renders them all the same way; nothing else prints a stack trace.
 */

/** Exit codes shared by every command (STYLE.md). */
export const ExitCode = {
  ok: 0,
  failed: 1,
  invalid: 2,
  refused: 3,
  execFailed: 125,
  cannotRun: 126,
  notFound: 127,
  cancelled: 130,
} as const

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode]

export interface YardErrorOptions {
  /** Why it happened (one sentence). */
  why?: string
  /** How to fix it: a command to run when there is one. */
  fix?: string
  /** The underlying error, kept for `--verbose`. */
  cause?: unknown
}

/**
 * Marks every YardError, whichever copy of this module made it: a backend plugin imports the
 * errors through `@yard-dev/cli/backend`, often from its own copy of the package, and its
 * errors must still render with their exit code (DESIGN.md §7).
 */
const YARD_ERROR = Symbol.for('@yard-dev/cli.YardError')

/** A failure the user can act on. `code` is the process exit code. */
export class YardError extends Error {
  readonly code: ExitCodeValue
  readonly why?: string
  readonly fix?: string

  /**
   * `value instanceof YardError` holds for a YardError of any copy of this module (checked by a
   * registered symbol); the subclasses keep the plain prototype check.
   */
  static [Symbol.hasInstance](value: unknown): boolean {
    if (this !== YardError) return Function.prototype[Symbol.hasInstance].call(this, value)
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[YARD_ERROR] === true
  }

  constructor(code: ExitCodeValue, what: string, options: YardErrorOptions = {}) {
    super(what, options.cause === undefined ? undefined : {cause: options.cause})
    this.name = 'YardError'
    this.code = code
    this.why = options.why
    this.fix = options.fix
    Object.defineProperty(this, YARD_ERROR, {value: true})
  }

  /** The full message: what, why, how to fix. */
  render(): string {
    const lines = [this.message]
    if (this.why) lines.push(`  why: ${this.why}`)
    if (this.fix) lines.push(`  fix: ${this.fix}`)
    return lines.join('\n')
  }
}

/** Invalid input (flags, names, urls, config): exit 2, nothing was changed. */
export class InputError extends YardError {
  constructor(what: string, options: YardErrorOptions = {}) {
    super(ExitCode.invalid, what, options)
    this.name = 'InputError'
  }
}

/** Refused to protect work or data: exit 3, says which flag or action proceeds. */
export class RefusedError extends YardError {
  constructor(what: string, options: YardErrorOptions = {}) {
    super(ExitCode.refused, what, options)
    this.name = 'RefusedError'
  }
}

/** An external tool (git, podman, a backend) said no: exit 1, with its stderr. */
export class OperationError extends YardError {
  constructor(what: string, options: YardErrorOptions = {}) {
    super(ExitCode.failed, what, options)
    this.name = 'OperationError'
  }
}
