import {listWorktrees, WorktreeRow} from '../../core/worktree-list.js'
import {formatTable} from '../../tui/table.js'
import {BaseCommand} from '../base.js'

/** `yard worktree list` (DESIGN.md §4.1, Appendix A). */
export default class WorktreeList extends BaseCommand {
  static aliases = ['worktree:ls']
  static hiddenAliases = ['wt:list', 'wt:ls']
  static summary = 'List the main checkout and its worktrees with branch, offset, dirty counts and ahead/behind'
  static description = 'Main first, then every worktree git knows under the worktrees root. Ahead/behind is against the branch\'s upstream, else its recorded base (branch.<branch>.yardBase). MISSING: the directory is gone (`yard worktree remove NAME` finishes it, `yard worktree prune` unregisters it).'
  static examples = ['<%= config.bin %> worktree list', '<%= config.bin %> worktree list --json']

  async run(): Promise<WorktreeRow[]> {
    await this.parse(WorktreeList)
    const rows = await listWorktrees(this.context)
    this.print(
      formatTable<WorktreeRow>(
        [
          {header: 'NAME', cell: (row) => row.name},
          {header: 'BRANCH', cell: (row) => row.branch ?? `(detached ${row.head?.slice(0, 8) ?? ''})`},
          {header: 'OFFSET', cell: (row) => `${row.offset} ${row.offsetSource}`},
          {header: 'DIRTY', cell: (row) => (row.dirty === null ? null : `${row.dirty.modified}M ${row.dirty.untracked}U`)},
          {header: 'AHEAD/BEHIND', cell: (row) => (row.ahead === null ? null : `+${row.ahead} -${row.behind}`)},
          {header: 'STATE', cell: (row) => [row.missing ? 'missing' : '', row.locked ? 'locked' : ''].filter(Boolean).join(',') || 'ok'},
          {header: 'PATH', cell: (row) => row.path},
        ],
        rows,
      ),
    )
    return rows
  }
}
