import {Args} from '@oclif/core'

import {execInBox, SHELL_ARGV} from '../core/box.js'
import {loadRegistry} from '../core/registry.js'
import {BaseCommand} from './base.js'

/** `yard shell [NAME]` (DESIGN.md §4.2): a login shell in the box. */
export default class Shell extends BaseCommand {
  static summary = "Open a shell in a checkout's dev box"
  static description = 'bash -l when the box image has bash, else sh -l, in the checkout\'s directory; exits with the shell\'s exit code.'
  static examples = ['<%= config.bin %> shell feat']
  static enableJsonFlag = false
  static args = {name: Args.string({description: 'worktree name, or main (default: YARD_WORKTREE, the current directory, main)'})}

  async run(): Promise<void> {
    const {args} = await this.parse(Shell)
    const code = await execInBox(this.context, await loadRegistry(this.config), {name: args.name, argv: SHELL_ARGV, tty: Boolean(process.stdin.isTTY)})
    if (code !== 0) this.exit(code)
  }
}
