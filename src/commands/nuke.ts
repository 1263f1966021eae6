import {Flags} from '@oclif/core'

import {describeTarget, stackNuke} from '../core/stack/index.js'
import {BaseCommand, targetArgs, targetName, worktreeFlag} from './base.js'

/** `yard nuke` (DESIGN.md §4.2): no prompt, its name is the explicit request. */
export default class Nuke extends BaseCommand {
  static summary = "Remove the targeted checkout's stack, box and volumes"
  static description =
    "Everything `down` removes, the box, and the project's volumes: for a worktree only volumes labelled with its project and owner and named <project>_…; for main all of main's labelled volumes; and yard's own state of the stack (<state dir>/stacks/<project>/, the rendered compose file). Shared caches and images stay. Does not prompt; --dry-run lists what would go."

  static examples = ['<%= config.bin %> nuke --worktree feat --dry-run', '<%= config.bin %> nuke --worktree feat']
  static args = targetArgs
  static flags = {
    worktree: worktreeFlag,
    'dry-run': Flags.boolean({description: 'list what would be removed; remove nothing'}),
  }

  async run(): Promise<{project: string; dryRun: boolean; removed: string[]}> {
    const {args, flags} = await this.parse(Nuke)
    const worktree = targetName(args, flags)
    const dryRun = flags['dry-run']
    const outcome = await stackNuke(this.context, this.backends, {flag: worktree, dryRun})
    const verb = dryRun ? 'would remove' : 'removed'
    this.print(
      outcome.gone.length === 0
        ? `${describeTarget(outcome.target)}: nothing to remove, nothing to do`
        : outcome.gone.map((item) => `${verb} ${item}`).join('\n'),
    )
    return {project: outcome.target.project, dryRun, removed: outcome.gone}
  }
}
