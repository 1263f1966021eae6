import {boxDown} from '../../core/machine/index.js'
import {describeTarget} from '../../core/stack/index.js'
import {BaseCommand, targetArgs, targetName, worktreeFlag} from '../base.js'

/** `yard box down` (DESIGN.md §4.2). */
export default class BoxDown extends BaseCommand {
  static summary = "Remove the targeted checkout's dev box"
  static examples = ['<%= config.bin %> box down --worktree feat']
  static args = targetArgs
  static flags = {worktree: worktreeFlag}

  async run(): Promise<{project: string; removed: string[]}> {
    const {args, flags} = await this.parse(BoxDown)
    const worktree = targetName(args, flags)
    const outcome = await boxDown(this.context, this.backends, worktree)
    this.print(
      outcome.gone.length === 0
        ? `${describeTarget(outcome.target)}: no box runs, nothing to do`
        : outcome.gone.map((item) => `removed ${item}`).join('\n'),
    )
    return {project: outcome.target.project, removed: outcome.gone}
  }
}
