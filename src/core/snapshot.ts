/**
 * Snapshots of a worktree's uncommitted work before it is removed (DESIGN.md §4.1): a commit
 * whose parent is HEAD and whose tree holds the tracked changes and the untracked, non-ignored
 * files, kept under `refs/yard/removed/<name>-<UTC stamp>`. Built through a temporary copy of the
 * worktree's index, so the worktree, its index and its stash are left exactly as they were.
 */
import {promises as fs} from 'node:fs'
import os from 'node:os'
import path from 'node:path'

import type {YardContext} from './context.js'
import {OperationError} from './errors.js'
import {shellCommand} from './shell.js'

export const REMOVED_REFS = 'refs/yard/removed'

/** `20261129T081500Z` for a Date (UTC, to the second). */
export function utcStamp(now: Date): string {
  return now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')
}

/** The commands that bring a snapshot's changes back into a fresh worktree of the same branch. */
export function restoreHint(ref: string, name: string, branch: string | null, checkout: string): string {
  const add = branch === null ? ['yard', 'worktree', 'add', name, '--from', `${ref}~1`] : ['yard', 'worktree', 'add', name, branch]
  return `${shellCommand(add)} && ${shellCommand(['git', '-C', checkout, 'cherry-pick', '--no-commit', ref])}`
}

/**
 * Commits the checkout's uncommitted work (tracked changes and untracked, non-ignored files) on
 * top of HEAD without touching the checkout, and points a new `refs/yard/removed/…` ref at it.
 * @returns the ref's full name.
 * @throws OperationError (exit 1) when git cannot build the commit (an unborn HEAD, a broken index).
 */
export async function snapshotWorktree(context: YardContext, checkout: string, name: string, now = new Date()): Promise<string> {
  const git = (args: string[], env: Record<string, string> = {}) => context.runner.git(args, {cwd: checkout, env})
  const indexPath = path.resolve(checkout, (await git(['rev-parse', '--git-path', 'index'])).stdout.trim())
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'yard-snapshot-'))
  const index = path.join(scratch, 'index')
  try {
    // A copy of the real index keeps its stat data: `add -A` then hashes only what changed.
    await fs.copyFile(indexPath, index).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error
    })
    await git(['add', '--all', '--', ':/'], {GIT_INDEX_FILE: index})
    const tree = (await git(['write-tree'], {GIT_INDEX_FILE: index})).stdout.trim()
    const message = `yard: uncommitted work of worktree ${name}, saved before \`yard worktree remove\``
    const commit = await commitTree(context, checkout, ['commit-tree', tree, '-p', 'HEAD', '-m', message])
    let ref = `${REMOVED_REFS}/${name}-${utcStamp(now)}`
    // Two removes of one name within a second: never overwrite the first snapshot.
    for (let attempt = 2; ; attempt++) {
      const created = await context.runner.git(['update-ref', '--create-reflog', ref, commit, ''], {cwd: checkout, allowFailure: true})
      if (created.exitCode === 0) return ref
      if (attempt > 9) throw new OperationError(`could not create ${ref}`, {why: created.stderr.trim()})
      ref = `${REMOVED_REFS}/${name}-${utcStamp(now)}-${attempt}`
    }
  } finally {
    await fs.rm(scratch, {recursive: true, force: true})
  }
}

/** `git commit-tree`, with yard as the author when the user has no git identity configured. */
async function commitTree(context: YardContext, checkout: string, args: string[]): Promise<string> {
  const first = await context.runner.git(args, {cwd: checkout, allowFailure: true})
  if (first.exitCode === 0) return first.stdout.trim()
  if (!/tell me who you are|empty ident|unable to auto-detect email/i.test(first.stderr)) {
    throw new OperationError(`could not snapshot the uncommitted work in ${checkout}`, {why: first.stderr.trim(), fix: 'commit or stash the work yourself, then run the command again'})
  }
  const yard = {GIT_AUTHOR_NAME: 'yard', GIT_AUTHOR_EMAIL: 'yard@localhost', GIT_COMMITTER_NAME: 'yard', GIT_COMMITTER_EMAIL: 'yard@localhost'}
  return (await context.runner.git(args, {cwd: checkout, env: yard})).stdout.trim()
}
