import type {StackContainer} from '../../core/backend.js'
import {boxPs} from '../../core/box.js'
import {loadRegistry} from '../../core/registry.js'
import {formatContainers} from '../../tui/containers.js'
import {BaseCommand, worktreeFlag} from '../base.js'

/** `yard box ps` (DESIGN.md §4.2). */
export default class BoxPs extends BaseCommand {
  static summary = "Show the targeted checkout's dev box"
  static examples = ['<%= config.bin %> box ps --json']
  static flags = {worktree: worktreeFlag}

  async run(): Promise<StackContainer[]> {
    const {flags} = await this.parse(BoxPs)
    const rows = await boxPs(this.context, await loadRegistry(this.config), flags.worktree)
    this.print(formatContainers(rows))
    return rows
  }
}
