import {Args, Flags} from '@oclif/core'

import {InputError} from '../core/errors.js'
import {loadRegistry} from '../core/registry.js'
import {describeTarget, stackLogs} from '../core/stack.js'
import {BaseCommand, worktreeFlag} from './base.js'

/** `yard logs [SERVICE…] [-f]` (DESIGN.md §4.2): the compose provider's logs. */
export default class Logs extends BaseCommand {
  static summary = "Show the logs of the targeted checkout's stack"
  static examples = ['<%= config.bin %> logs', '<%= config.bin %> logs web -f --worktree feat']
  static strict = false
  static args = {service: Args.string({description: 'services to show (default: all)'})}
  static flags = {
    worktree: worktreeFlag,
    follow: Flags.boolean({char: 'f', description: 'keep following new lines'}),
  }

  async run(): Promise<void> {
    const {flags, argv} = await this.parse(Logs)
    if (this.jsonEnabled()) {
      throw new InputError('yard logs has no --json', {
        why: "logs prints the services' output as text, as it comes",
        fix: 'run yard logs without --json; use `yard ps --json` for the stack\'s state',
      })
    }
    const outcome = await stackLogs(this.context, await loadRegistry(this.config), {flag: flags.worktree, services: argv as string[], follow: flags.follow})
    if (outcome.boxOnly) this.print(`${describeTarget(outcome.target)} is box-only (no compose file): no stack logs`)
  }
}
