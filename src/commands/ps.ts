import type {StackContainer} from '../core/backend.js'
import {loadRegistry} from '../core/registry.js'
import {stackPs} from '../core/stack.js'
import {formatContainers} from '../tui/containers.js'
import {BaseCommand, worktreeFlag} from './base.js'

/** `yard ps` (DESIGN.md §4.2, Appendix A). */
export default class Ps extends BaseCommand {
  static summary = "List the targeted checkout's stack containers"
  static examples = ['<%= config.bin %> ps', '<%= config.bin %> ps --worktree feat --json']
  static flags = {worktree: worktreeFlag}

  async run(): Promise<StackContainer[]> {
    const {flags} = await this.parse(Ps)
    const rows = await stackPs(this.context, await loadRegistry(this.config), flags.worktree)
    this.print(formatContainers(rows))
    return rows
  }
}
