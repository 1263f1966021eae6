import {Flags} from '@oclif/core'

import {listSandboxes, type SandboxListRow} from '../../core/sandbox/index.js'
import {BaseCommand} from '../base.js'

/** `yard sandbox list [--json]` (DESIGN.md §5.2, Appendix A). */
export default class SandboxList extends BaseCommand {
  static aliases = ['sandbox:ls']
  static summary = "List the project's sandboxes"
  static description =
    'Each sandbox with its runtime, phase, offset and ports, and per slot the cache (stale when its last fetch failed) and the worktrees, those with unsaved work (modified or untracked files, commits the cache lacks: what `yard sandbox rm` refuses on) marked `unsaved: …` and, in one that uses LFS, how many LFS files are still pointers.'

  static examples = ['<%= config.bin %> sandbox list --json']
  static flags = {
    runtime: Flags.string({
      description: 'podman or kubernetes (default [cluster] runtime)',
      options: ['podman', 'kubernetes'],
    }),
  }

  async run(): Promise<SandboxListRow[]> {
    const {flags} = await this.parse(SandboxList)
    const rows = await listSandboxes(this.context, this.backends, flags.runtime)
    if (rows.length === 0) this.print('no sandboxes')
    for (const row of rows) {
      this.print(
        `${row.name} (${row.project}) ${row.runtime} ${row.phase} ${row.start ?? 'cold'} offset ${row.offset} ${Object.entries(
          row.ports,
        )
          .map(([key, port]) => `${key}=${port}`)
          .join(' ')}`,
      )
      if (row.worktreesError !== undefined) this.print(`  worktrees unreadable: ${row.worktreesError}`)
      for (const repo of row.repos) {
        this.print(`  ${repo.slot}: ${repo.identity} [${repo.key}]${repo.stale ? ' stale' : ''}`)
        for (const worktree of repo.worktrees) {
          const pointers = worktree.lfsPointers
            ? ` ${worktree.lfsPointers} LFS pointer${worktree.lfsPointers === 1 ? '' : 's'} unresolved`
            : ''
          this.print(`    ${worktree.path} ${worktree.branch ?? '(detached)'}${describeUnsaved(worktree)}${pointers}`)
        }
      }
    }

    return rows
  }
}

/**
 * ` unsaved: modified or untracked files, unpushed wt/x (2 commits)`: what `sandbox rm` would
 * refuse on, or nothing.
 */
function describeUnsaved(worktree: SandboxListRow['repos'][number]['worktrees'][number]): string {
  if (!worktree.unsaved) return ''
  const parts = [
    ...(worktree.dirty ? ['modified or untracked files'] : []),
    ...((worktree.unpushed ?? []).length > 0 ? [`unpushed ${(worktree.unpushed ?? []).join(', ')}`] : []),
  ]
  return `  unsaved: ${parts.join(', ')}`
}
