import {Args, Flags} from '@oclif/core'

import {SHELL_ARGV} from '../core/machine/index.js'
import {execAnywhere} from '../core/sandbox/index.js'
import {BaseCommand, targetName, worktreeFlag} from './base.js'

/** `yard shell [NAME]` (DESIGN.md §4.2): a login shell in the box. */
export default class Shell extends BaseCommand {
  static summary = "Open a shell in a checkout's dev box"
  static description =
    "bash -l when the box image has bash, else sh -l, in the checkout's directory; exits with the shell's exit code."

  static examples = ['<%= config.bin %> shell feat']
  static enableJsonFlag = false
  static args = {
    name: Args.string({
      description:
        'worktree name or main (default: YARD_WORKTREE, the current directory, main); SANDBOX[/BRANCH] for a sandbox',
    }),
  }

  static flags = {
    worktree: worktreeFlag,
    sandbox: Flags.string({description: "open it in this sandbox's attached branch", helpValue: 'NAME'}),
    slot: Flags.string({description: 'the sandbox slot (default: the first)'}),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Shell)
    const code = await execAnywhere(this.context, this.backends, {
      name: targetName(args, flags),
      sandbox: flags.sandbox,
      slot: flags.slot,
      argv: SHELL_ARGV,
      tty: Boolean(process.stdin.isTTY),
    })
    if (code !== 0) this.exit(code)
  }
}
