/**
 * `yard worktree remove --delete-branch`: the worktree's branch goes too, but only when it is
 * merged into its base, so deleting it loses no commit (git-branch(1) `-d` asks the same of
 * HEAD; yard asks it of the branch's recorded base, else the default branch).
 */
import type {YardContext} from '../kernel/context.js'

import {RefusedError} from '../../sdk/errors.js'
import {shellCommand} from '../../sdk/shell.js'
import {branchConfig, readRefs} from '../workspace/git.js'
import {DEFAULT_BASES, ORIGIN_HEAD, shortRef} from './base.js'
import {BASE_KEY} from './list.js'

/**
 * The base `branch` must be merged into: `branch.<branch>.yardBase`, else origin/HEAD, else the
 * first of origin/main, main, origin/master, master that exists (DESIGN.md §4.1).
 */
async function baseOf(context: YardContext, mainPath: string, branch: string): Promise<string | undefined> {
  const recorded = (await branchConfig(context.runner, mainPath, BASE_KEY.toLowerCase())).get(branch)
  if (recorded) return recorded
  const refs = await readRefs(context.runner, mainPath, [ORIGIN_HEAD, ...DEFAULT_BASES])
  return [ORIGIN_HEAD, ...DEFAULT_BASES].find((ref) => refs.has(ref) && ref !== `refs/heads/${branch}`)
}

/**
 * Checks, before anything is removed, that `branch` may be deleted with its worktree.
 * @returns the base it is merged into, shortened (`main`, `origin/main`).
 * @throws RefusedError (exit 3) when it has commits its base lacks, or no base is known.
 */
export async function requireMergedBranch(context: YardContext, mainPath: string, branch: string): Promise<string> {
  const base = await baseOf(context, mainPath, branch)
  if (base === undefined)
    throw new RefusedError(`not deleting branch ${branch}: yard knows no base to check it is merged into`, {
      fix: 'leave out --delete-branch, and delete it yourself when it is merged',
    })
  const merged = await context.runner.git(['merge-base', '--is-ancestor', `refs/heads/${branch}`, base], {
    cwd: mainPath,
    allowFailure: true,
  })
  if (merged.exitCode !== 0) {
    throw new RefusedError(`not deleting branch ${branch}: it is not merged into ${shortRef(base)}`, {
      why: 'its commits that are not on the base would be lost with it',
      fix: `merge it first, or leave out --delete-branch (the branch is kept); to delete it anyway: ${shellCommand(['git', 'branch', '-D', branch])} after the remove`,
    })
  }

  return shortRef(base)
}

/** Deletes `branch` (its worktree is gone by now); it was checked merged by `requireMergedBranch`. */
export async function deleteBranch(context: YardContext, mainPath: string, branch: string): Promise<void> {
  await context.runner.git(['branch', '-D', '--', branch], {cwd: mainPath})
}
