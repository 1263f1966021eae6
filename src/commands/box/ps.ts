import type {StackContainer} from '../../sdk/stack.js'

import {boxPs} from '../../core/machine/index.js'
import {formatContainers} from '../../tui/containers.js'
import {BaseCommand, targetArgs, targetName, worktreeFlag} from '../base.js'

/** `yard box ps` (DESIGN.md §4.2). */
export default class BoxPs extends BaseCommand {
  static aliases = ['box:ls']
  static summary = "Show the targeted checkout's dev box"
  static examples = ['<%= config.bin %> box ps --json']
  static args = targetArgs
  static flags = {worktree: worktreeFlag}

  async run(): Promise<StackContainer[]> {
    const {args, flags} = await this.parse(BoxPs)
    const worktree = targetName(args, flags)
    const rows = await boxPs(this.context, this.backends, worktree)
    this.print(formatContainers(rows))
    return rows
  }
}
