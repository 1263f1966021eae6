/**
 * The one base command (STYLE.md, "One base command"): `--json`, `--verbose`, the shared
 * context, and one `catch` that renders every YardError the same way.
 */
import {Command, Errors, Flags, Interfaces} from '@oclif/core'

import {createContext, YardContext} from '../core/context.js'
import {YardError} from '../core/errors.js'

export type BaseFlags<T extends typeof Command> = Interfaces.InferredFlags<(typeof BaseCommand)['baseFlags'] & T['flags']>

export abstract class BaseCommand extends Command {
  static enableJsonFlag = true

  static baseFlags = {
    verbose: Flags.boolean({description: 'echo every external command as `+ cmd` and show stack traces', default: false, helpGroup: 'GLOBAL'}),
  }

  private yardContext?: YardContext

  /** The context for core calls; built once per invocation. */
  protected get context(): YardContext {
    if (!this.yardContext) {
      const verbose = this.argv.includes('--verbose')
      // Warnings go to stderr also with --json (oclif's logToStderr is silent then): stdout stays data.
      this.yardContext = createContext({verbose, warn: (message) => process.stderr.write(message + '\n')})
    }
    return this.yardContext
  }

  protected isVerbose(): boolean {
    return this.argv.includes('--verbose') || Boolean(process.env.DEBUG)
  }

  /** Writes plain text to stdout unless `--json` is set. */
  protected print(text: string): void {
    if (!this.jsonEnabled()) this.log(text)
  }

  protected async catch(error: Error & {exitCode?: number}): Promise<unknown> {
    // A command that reported and then chose its exit code (doctor) is not an error to render.
    if (error instanceof Errors.ExitError) throw error
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
    return super.catch(error)
  }
}

/** `--worktree NAME`: the checkout a command acts on (DESIGN.md §3.3). */
export const worktreeFlag = Flags.string({
  char: 'w',
  description: 'target this worktree (default: YARD_WORKTREE, then the current directory, then main)',
  helpValue: 'NAME',
})
