import {Flags} from '@oclif/core'

import {type PruneEntry, pruneWorktrees} from '../../core/worktree/index.js'
import {BaseCommand} from '../base.js'

export default class WorktreePrune extends BaseCommand {
  static hiddenAliases = ['wt:prune']
  static summary = 'Unregister the worktrees under the root whose directories are gone, one by one'
  static description =
    'Only worktrees under the worktrees root, each with its own `git worktree remove`, never a bare `git worktree prune` (which would also drop a worktree whose volume is merely unmounted elsewhere). Locked worktrees are kept. Pins and stacks stay: `yard worktree remove NAME` finishes them.'

  static examples = ['<%= config.bin %> worktree prune --dry-run', '<%= config.bin %> worktree prune']
  static flags = {
    'dry-run': Flags.boolean({description: 'list what would be unregistered; change nothing', default: false}),
  }

  async run(): Promise<PruneEntry[]> {
    const {flags} = await this.parse(WorktreePrune)
    const entries = await pruneWorktrees(this.context, {dryRun: flags['dry-run']})
    this.print(
      entries.length === 0
        ? 'nothing to prune: every worktree under the root has its directory'
        : entries.map((entry) => `${entry.action} ${entry.name} (${entry.path})`).join('\n'),
    )
    return entries
  }
}
