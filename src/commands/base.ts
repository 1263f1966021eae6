/**
 * The one base command (STYLE.md, "One base command"): `--json`, `--verbose`, the shared
 * context, and one `catch` that renders every YardError the same way.
 */
import {Args, Command, Errors, Flags, type Interfaces} from '@oclif/core'

import {createContext, ensureStateDir, type YardContext} from '../core/kernel/index.js'
import {type Backends, createBackends, loadRegistry} from '../core/registry/index.js'
import {InputError, RefusedError, terminalSafe, YardError} from '../sdk/errors.js'
import {progressFor, type ProgressRenderer} from '../tui/progress-renderer.js'

export type BaseFlags<T extends typeof Command> = Interfaces.InferredFlags<
  (typeof BaseCommand)['baseFlags'] & T['flags']
>

export abstract class BaseCommand extends Command {
  static enableJsonFlag = true

  static baseFlags = {
    verbose: Flags.boolean({
      description: 'echo every external command as `+ cmd` and show stack traces',
      default: false,
      helpGroup: 'GLOBAL',
    }),
  }

  /** Whether the state directory is made sure of before the command runs (doctor checks it itself). */
  static usesStateDir = true

  private yardContext?: YardContext
  private yardBackends?: Backends
  private progressRenderer?: ProgressRenderer

  /**
   * Creates the state directory (0700) before anything can write under it: a recursive mkdir of
   * a subdirectory would make it world-readable, or hang under /proc (state.ts ensureStateDir).
   * @throws InputError (exit 2) for a state directory that cannot be created.
   */
  async init(): Promise<void> {
    await super.init()
    if ((this.constructor as typeof BaseCommand).usesStateDir) ensureStateDir(process.env)
  }

  /**
   * oclif reads standard input into the first argument a command line leaves out, unless that
   * argument says `ignoreStdin` (@oclif/core parser `tryStdin`): `echo main | yard nuke` would
   * target main, and `yard down` in a `while read` loop the line just read. No yard argument
   * takes its value from stdin, so every one is marked before parsing.
   */
  protected async parse<
    F extends Record<string, unknown>,
    B extends Record<string, unknown>,
    A extends Record<string, unknown>,
  >(options?: Interfaces.Input<F, B, A>, argv?: string[]): Promise<Interfaces.ParserOutput<F, B, A>> {
    const input = options ?? (this.constructor as unknown as Interfaces.Input<F, B, A>)
    for (const arg of Object.values(input.args ?? {})) arg.ignoreStdin = true
    return super.parse(input, argv)
  }

  /** The context for core calls; built once per invocation. */
  protected get context(): YardContext {
    if (!this.yardContext) {
      const verbose = this.argv.includes('--verbose')
      // Warnings go to stderr also with --json (oclif's logToStderr is silent then): stdout stays data;
      // names echoed in them reach the terminal escaped, as in errors.
      const progress = this.progress()
      // While a progress frame is drawn, a line goes above it: written past it, a redraw would tear it.
      const warn = (message: string) => {
        if (!progress?.note(terminalSafe(message))) process.stderr.write(terminalSafe(message) + '\n')
      }

      this.yardContext = createContext({verbose, warn, progress, log: warn})
    }

    return this.yardContext
  }

  /**
   * The backends of this invocation (core/registry/backends.ts), built once; the registry's
   * `yard:backends` hooks run on the first backend a use case asks for, never before.
   */
  protected get backends(): Backends {
    this.yardBackends ??= createBackends(async () => loadRegistry(this.config))
    return this.yardBackends
  }

  /**
   * The progress port of a long command (one that declares `--quiet`): Ink on a terminal, one
   * line per step off it, nothing with `--quiet` or `--json` (tui/progress-renderer.ts). Other commands
   * report nothing, so a use case they share (the dashboard's create) never draws over a screen.
   */
  private progress(): ProgressRenderer | undefined {
    const flags = (this.constructor as typeof Command).flags ?? {}
    if (!('quiet' in flags)) return undefined
    const silent = this.argv.includes('--quiet') || this.jsonEnabled()
    this.progressRenderer = progressFor(process.stderr, {silent})
    return this.progressRenderer
  }

  /** Ends the progress display (its last frame stays) before a result or an error is printed. */
  protected endProgress(outcome: 'done' | 'failed'): void {
    this.progressRenderer?.end(outcome)
  }

  protected async finally(error: Error | undefined): Promise<unknown> {
    this.endProgress(error ? 'failed' : 'done')
    return super.finally(error)
  }

  protected isVerbose(): boolean {
    return this.argv.includes('--verbose') || Boolean(process.env.DEBUG)
  }

  /**
   * Asks before a destructive step (DESIGN.md Appendix B). `yes` skips the question; without a
   * terminal on stdin the question cannot be asked, which refuses like a "no".
   * @throws RefusedError (exit 3) when declined or not askable; YardError (exit 130) on Ctrl-C.
   */
  protected async confirmOrRefuse(question: string, options: {yes: boolean; flag: string}): Promise<void> {
    if (options.yes) return
    if (!process.stdin.isTTY) {
      throw new RefusedError(`${question} Not confirmed: there is no terminal to ask on`, {
        fix: `pass ${options.flag} to go ahead without the question`,
      })
    }

    const {confirm} = await import('../tui/confirm.js')
    if (!(await confirm(question, {input: process.stdin, output: process.stderr}))) {
      throw new RefusedError('declined: nothing was changed', {fix: `answer y to go ahead, or pass ${options.flag}`})
    }
  }

  /**
   * Writes plain text to stdout unless `--json` is set, control characters escaped
   * (`terminalSafe`): a path or name holding an escape sequence cannot drive the terminal.
   */
  protected print(text: string): void {
    this.endProgress('done')
    if (!this.jsonEnabled()) this.log(terminalSafe(text, {keepNewlines: true}))
  }

  /** `print` for output that is data for another program (`yard env` for `eval`): written as it is. */
  protected printData(text: string): void {
    if (!this.jsonEnabled()) this.log(text)
  }

  protected async catch(error: Error & {exitCode?: number}): Promise<unknown> {
    // A command that reported and then chose its exit code (doctor) is not an error to render.
    if (error instanceof Errors.ExitError) throw error
    this.endProgress('failed')
    if (error instanceof YardError) {
      process.exitCode = error.code
      if (this.jsonEnabled()) {
        this.logJson({error: {code: error.code, message: error.message, why: error.why, fix: error.fix}})
      } else {
        this.logToStderr(error.render())
        if (this.isVerbose() && error.stack) this.logToStderr(error.stack)
      }

      return this.exit(error.code)
    }

    if (error instanceof Errors.CLIError) {
      // oclif's own errors (unknown flag, bad flag value, missing argument): invalid input.
      const parse = 'parse' in error
      const code = parse ? 2 : (error.oclif?.exit ?? 1)
      const message = error.message
        .split('\n')
        .map((line) => line.trim())
        .filter(
          (line) => line !== '' && line !== 'The following error occurred:' && !line.startsWith('See more help with'),
        )
        .join('; ')
      const help = `run \`${this.config.bin} ${this.id?.replaceAll(':', ' ') ?? ''} --help\` for its flags and arguments`
      const fix = parse ? help : undefined
      process.exitCode = code
      if (this.jsonEnabled()) this.logJson({error: {code, message, fix}})
      else if (fix && fix !== help) this.logToStderr(terminalSafe(`${message}\n  fix: ${fix}`, {keepNewlines: true}))
      else
        this.logToStderr(
          terminalSafe(error.message + (fix && !error.message.includes('--help') ? `\n  fix: ${fix}` : ''), {
            keepNewlines: true,
          }),
        )
      if (this.isVerbose() && error.stack) this.logToStderr(error.stack)
      return this.exit(code)
    }

    return super.catch(error)
  }
}

/**
 * `--quiet` of a long command: no progress (the result line and errors still print). Declaring
 * it is what gives a command its progress display (BaseCommand.progress).
 */
export const quietFlag = Flags.boolean({description: 'show no progress, only the result', default: false})

/** `--worktree NAME`: the checkout a command acts on (DESIGN.md §3.3). */
/**
 * `yard machine … --worktree NAME`: an untrusted worktree's own machine (never from YARD_WORKTREE
 * or the directory).
 */
export const machineWorktreeFlag = Flags.string({
  description: "the untrusted worktree NAME's own machine, yard-<prefix>-NAME (default: the shared machine)",
  helpValue: 'NAME',
})

export const worktreeFlag = Flags.string({
  char: 'w',
  description: 'target this worktree (default: YARD_WORKTREE, then the current directory, then main)',
  helpValue: 'NAME',
})

/**
 * The shared grammar of every command that targets a checkout: `yard CMD NAME`, `yard CMD -w NAME`
 * and `yard CMD --worktree NAME` are the same request; `targetName` resolves them.
 */
export const targetArgs = {
  name: Args.string({description: 'the worktree to target, or main (the same as --worktree NAME)'}),
}

/**
 * The one rule for the checkout a command names: the positional NAME or `--worktree NAME`,
 * which must agree when both are given; undefined leaves the choice to YARD_WORKTREE, the
 * current directory, then main (DESIGN.md §3.3, `resolveTarget`).
 * @throws InputError (exit 2) when NAME and --worktree name different checkouts.
 */
export function targetName(args: {name?: string}, flags: {worktree?: string}): string | undefined {
  if (args.name !== undefined && flags.worktree !== undefined && args.name !== flags.worktree) {
    throw new InputError(`both ${args.name} and --worktree ${flags.worktree} name a checkout`, {
      fix: `give one name, as NAME or as --worktree NAME: ${args.name} or ${flags.worktree}`,
    })
  }

  return args.name ?? flags.worktree
}
