/**
 * `yard worktree prune` (DESIGN.md §4.1): unregisters, one by one, the worktrees under the root
 * whose directories are gone. Never a bare `git worktree prune`, which would also drop worktrees
 * elsewhere and those on a volume that is merely not mounted right now (case 4 of the shared
 * cases). Locked worktrees are kept. Pins, stacks and transcripts are left for `yard worktree
 * remove NAME`, which finishes them.
 */
import {existsSync} from 'node:fs'

import type {YardContext} from '../kernel/context.js'

import {openWorkspace, worktreesUnderRoot} from '../workspace/workspace.js'

export interface PruneEntry {
  name: string
  path: string
  branch: string | null
  /** `pruned` (or, with `--dry-run`, would be), or `kept` because it is locked. */
  action: 'pruned' | 'would prune' | 'kept (locked)'
}

/**
 * Unregisters every worktree under the root whose directory is missing, each with its own
 * `git worktree remove <path>`; with `dryRun` only lists them.
 * @throws InputError (exit 2) outside a repository; OperationError (exit 1) when git refuses one
 *   (the entries before it stay pruned).
 */
export async function pruneWorktrees(context: YardContext, options: {dryRun: boolean}): Promise<PruneEntry[]> {
  const workspace = await openWorkspace(context)
  const gone = (await worktreesUnderRoot(workspace, context)).filter(({worktree}) => !existsSync(worktree.path))
  const entries: PruneEntry[] = []
  for (const {name, worktree} of gone) {
    const entry: PruneEntry = {
      name,
      path: worktree.path,
      branch: worktree.branch ?? null,
      action: worktree.locked ? 'kept (locked)' : options.dryRun ? 'would prune' : 'pruned',
    }
    // git removes the registration of a worktree whose directory is gone without touching any other.
    if (entry.action === 'pruned')
      await context.runner.git(['worktree', 'remove', worktree.path], {cwd: workspace.mainPath})
    entries.push(entry)
  }

  return entries
}
