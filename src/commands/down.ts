import {describeTarget, stackDown} from '../core/stack/index.js'
import {BaseCommand, targetArgs, targetName, worktreeFlag} from './base.js'

/** `yard down` (DESIGN.md §4.2). */
export default class Down extends BaseCommand {
  static summary = "Stop the targeted checkout's stack: containers and network go, volumes stay"
  static description =
    "Talks to the engine directly, by the project label, so it works with every compose provider and after the worktree's directory is gone."

  static examples = ['<%= config.bin %> down', '<%= config.bin %> down --worktree feat']
  static args = targetArgs
  static flags = {worktree: worktreeFlag}

  async run(): Promise<{project: string; removed: string[]}> {
    const {args, flags} = await this.parse(Down)
    const worktree = targetName(args, flags)
    const outcome = await stackDown(this.context, this.backends, worktree)
    this.print(
      outcome.gone.length === 0
        ? `${describeTarget(outcome.target)}: nothing runs, nothing to do`
        : outcome.gone.map((item) => `removed ${item}`).join('\n'),
    )
    return {project: outcome.target.project, removed: outcome.gone}
  }
}
