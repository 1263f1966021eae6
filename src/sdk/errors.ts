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
 * errors must still render with their exit code (DESIGN.md §7); a module yard imports lazily
 * can also come from a second copy when the first was loaded as CommonJS (tests run under tsx).
 * Its value is the names of the error's classes, from its own up to `YardError`.
 */
const YARD_ERROR = Symbol.for('@yard-dev/cli.YardError')

/** A failure the user can act on. `code` is the process exit code. */
export class YardError extends Error {
  readonly code: ExitCodeValue
  readonly why?: string
  readonly fix?: string

  /**
   * `value instanceof YardError` (or a subclass: `InputError`, …) holds for an error made by any
   * copy of this module: by the prototype chain, else by the registered symbol naming its classes.
   */
  static [Symbol.hasInstance](value: unknown): boolean {
    if (Function.prototype[Symbol.hasInstance].call(this, value)) return true
    if (typeof value !== 'object' || value === null) return false
    const classes = (value as Record<symbol, unknown>)[YARD_ERROR]
    return Array.isArray(classes) && classes.includes(this.name)
  }

  constructor(code: ExitCodeValue, what: string, options: YardErrorOptions = {}) {
    super(what, options.cause === undefined ? undefined : {cause: options.cause})
    this.name = 'YardError'
    this.code = code
    // A tool's stderr (an ENOSPC checkout prints a line per file) is bounded here, once for every error.
    this.why = options.why === undefined ? undefined : boundLines(options.why)
    this.fix = options.fix
    const classes: string[] = []
    for (
      let kind: unknown = new.target;
      typeof kind === 'function' && kind !== Error;
      kind = Object.getPrototypeOf(kind)
    )
      classes.push(kind.name)
    Object.defineProperty(this, YARD_ERROR, {value: classes})
  }

  /**
   * The full message for a terminal: what, why, how to fix, each through `terminalSafe` (what and
   * fix keep only their indented continuation lines; the lines of a why, a tool's stderr, are
   * indented below it).
   */
  render(): string {
    const lines = [terminalSafe(this.message)]
    if (this.why) lines.push(`  why: ${terminalSafe(this.why.replaceAll('\n', '\n       '))}`)
    if (this.fix) lines.push(`  fix: ${terminalSafe(this.fix)}`)
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

/** How many first and last lines of a long text `boundLines` keeps. */
export const KEPT_LINES = 10

/**
 * The first and last `keep` lines of a long text with `… N lines omitted …` between them; a text
 * of at most 2 × keep + 1 lines as it is. For tools' stderr inside errors (a failed checkout of
 * 10,000 files prints 10,000 lines).
 */
export function boundLines(text: string, keep = KEPT_LINES): string {
  const lines = text.split('\n')
  if (lines.length <= 2 * keep + 1) return text
  return [...lines.slice(0, keep), `… ${lines.length - 2 * keep} lines omitted …`, ...lines.slice(-keep)].join('\n')
}

/**
 * Text safe to write to a terminal: control characters (C0 but tab and newline, DEL, C1) written
 * as `\xHH`, so a name holding an escape sequence cannot move the cursor, retitle the window or
 * hide text (ECMA-48); a newline is kept only where it starts an indented line (yard's own
 * continuation lines), any other is written `\n`, so a name cannot fake a line of its own.
 * `keepNewlines`: for text whose lines are all its author's (oclif's own usage errors).
 */
export function terminalSafe(text: string, options: {keepNewlines?: boolean} = {}): string {
  const escaped = text.replaceAll(
    /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/g,
    (char) => String.raw`\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`,
  )
  return options.keepNewlines ? escaped : escaped.replaceAll(/\n(?! {2})/g, String.raw`\n`)
}
