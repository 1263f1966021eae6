import {type CheckoutContainers, describeRunState, psAllCheckouts} from '../../core/stack/index.js'
import {listWorktrees, type WorktreeRow} from '../../core/worktree/index.js'
import {formatTable} from '../../tui/table.js'
import {BaseCommand} from '../base.js'

/** `yard worktree list` (DESIGN.md §4.1, Appendix A). */
export default class WorktreeList extends BaseCommand {
  static aliases = ['worktree:ls']
  static hiddenAliases = ['wt:list', 'wt:ls']
  static summary = 'List the main checkout and its worktrees with branch, offset, dirty counts and ahead/behind'
  static description =
    "Main first, then every worktree git knows under the worktrees root. Ahead/behind is against the branch's upstream, else its recorded base (branch.<branch>.yardBase). STACK: its stack's containers, `running 2/3` (running of all), `stopped 0/2` or `-`. BOX: its dev container (`yard box up`), the same way. STATE: `ok`, or any of `missing` (the directory is gone: `yard worktree remove NAME` finishes it, `yard worktree prune` unregisters it), `locked`, `untrusted` (it runs on a machine of its own: yard worktree add --untrusted)."

  static examples = ['<%= config.bin %> worktree list', '<%= config.bin %> worktree list --json']

  async run(): Promise<WorktreeRow[]> {
    await this.parse(WorktreeList)
    const listing = listWorktrees(this.context)
    // --json keeps its shape (`yard ps --all --json` has the containers); the text asks the
    // engine too, and a stack backend that cannot answer leaves the column unknown.
    if (this.jsonEnabled()) return listing
    const [rows, containers] = await Promise.all([
      listing,
      psAllCheckouts({...this.context, warn() {}}, this.backends).catch(() => undefined),
    ])
    const byName = new Map(containers?.map((checkout) => [checkout.worktree, checkout]))
    const known = (row: WorktreeRow, describe: (checkout: CheckoutContainers) => string) => {
      const checkout = byName.get(row.name)
      return checkout ? describe(checkout) : containers ? '-' : 'unknown'
    }

    this.print(
      formatTable<WorktreeRow>(
        [
          {header: 'NAME', cell: (row) => row.name},
          {header: 'BRANCH', cell: (row) => row.branch ?? `(detached ${row.head?.slice(0, 8) ?? ''})`},
          {header: 'OFFSET', cell: (row) => `${row.offset} ${row.offsetSource}`},
          {
            header: 'DIRTY',
            cell: (row) => (row.dirty === null ? null : `${row.dirty.modified}M ${row.dirty.untracked}U`),
          },
          {header: 'AHEAD/BEHIND', cell: (row) => (row.ahead === null ? null : `+${row.ahead} -${row.behind}`)},
          {header: 'STACK', cell: (row) => known(row, (checkout) => describeRunState(checkout.stack))},
          {header: 'BOX', cell: (row) => known(row, (checkout) => describeRunState(checkout.box))},
          {
            header: 'STATE',
            cell: (row) =>
              [row.missing ? 'missing' : '', row.locked ? 'locked' : '', row.trust === 'untrusted' ? 'untrusted' : '']
                .filter(Boolean)
                .join(',') || 'ok',
          },
          {header: 'PATH', cell: (row) => row.path},
        ],
        rows,
      ),
    )
    return rows
  }
}
