import type {StackContainer} from '../core/backend.js'
import {loadRegistry} from '../core/registry.js'
import {stackPs} from '../core/stack.js'
import {formatContainers} from '../tui/containers.js'
import {BaseCommand, targetArgs, targetName, worktreeFlag} from './base.js'

/** `yard ps` (DESIGN.md §4.2, Appendix A). */
export default class Ps extends BaseCommand {
  static summary = "List the targeted checkout's stack containers"
  static examples = ['<%= config.bin %> ps', '<%= config.bin %> ps --worktree feat --json']
  static args = targetArgs
  static flags = {worktree: worktreeFlag}

  async run(): Promise<StackContainer[]> {
    const {args, flags} = await this.parse(Ps)
    const worktree = targetName(args, flags)
    const rows = await stackPs(this.context, await loadRegistry(this.config), worktree)
    this.print(formatContainers(rows))
    return rows
  }
}
