/**
 * Snapshots of a worktree's uncommitted work before it is removed (DESIGN.md §4.1): a commit
 * whose parent is HEAD and whose tree holds the tracked changes and the untracked, non-ignored
 * files, kept under `refs/yard/removed/<name>-<UTC stamp>`. Built through a temporary copy of the
 * worktree's index, so the worktree, its index and its stash are left exactly as they were.
 * A HEAD on no branch (detached, a rebase stopped at `edit`) with nothing uncommitted gets the
 * ref pointed at HEAD itself, so its commits stay reachable.
 */
import {promises as fs} from 'node:fs'
import os from 'node:os'
import path from 'node:path'

import type {YardContext} from '../kernel/context.js'

import {OperationError} from '../../sdk/errors.js'
import {formatArgv} from '../../sdk/process.js'
import {untrustedGit} from '../workspace/git-link.js'

export const REMOVED_REFS = 'refs/yard/removed'

/** `20261129T081500Z` for a Date (UTC, to the second). */
export function utcStamp(now: Date): string {
  return now
    .toISOString()
    .replaceAll(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')
}

/**
 * The commands that bring a snapshot back into a fresh worktree NAME: the same branch with the
 * changes cherry-picked; for a worktree that was on no branch, a new branch
 * `restored/<ref's last part>` from the saved HEAD (`<ref>~1` when the ref holds changes on top).
 */
export function restoreHint(
  ref: string,
  name: string,
  branch: string | null,
  checkout: string,
  changes = true,
): string {
  const add = formatArgv(
    branch === null
      ? ['yard', 'worktree', 'add', name, restoredBranch(ref), '--from', changes ? `${ref}~1` : ref]
      : ['yard', 'worktree', 'add', name, branch],
  )
  return changes ? `${add} && ${formatArgv(['git', '-C', checkout, 'cherry-pick', '--no-commit', ref])}` : add
}

/** The branch a restore of a worktree that was on no branch creates: `restored/<name>-<stamp>`. */
export function restoredBranch(ref: string): string {
  return `restored/${ref.slice(REMOVED_REFS.length + 1)}`
}

/** What goes into a snapshot. */
export interface SnapshotOptions {
  /** Commit the uncommitted work on top of HEAD; false: the ref points at HEAD (a HEAD on no branch). */
  changes: boolean
  /**
   * Paths (relative to the checkout) left out: nested repositories, archived on their own; in an
   * untrusted worktree its checked-out submodules too (they keep HEAD's gitlink).
   */
  exclude?: string[]
  /**
   * An untrusted worktree of the repository at `commonDir`: every git runs through git-link.ts
   * untrustedGit (the repository's record of the worktree, never its `.git`; no submodule).
   */
  untrusted?: {commonDir: string}
}

/**
 * Commits the checkout's uncommitted work (tracked changes and untracked, non-ignored files) on
 * top of HEAD without touching the checkout, and points a new `refs/yard/removed/…` ref at it
 * (with `changes` false: at HEAD).
 * @returns the ref's full name.
 * @throws OperationError (exit 1) when git cannot build the commit (an unborn HEAD, a broken index).
 */
export async function snapshotWorktree(
  context: YardContext,
  checkout: string,
  name: string,
  options: SnapshotOptions = {changes: true},
  now = new Date(),
): Promise<string> {
  const config = options.untrusted ? untrustedGit(options.untrusted.commonDir, checkout) : []
  const git = async (args: string[], env: Record<string, string> = {}) =>
    context.runner.git([...config, ...args], {cwd: checkout, env})
  if (!options.changes)
    return createRef(
      context,
      checkout,
      name,
      (await git(['rev-parse', '--verify', 'HEAD^{commit}'])).stdout.trim(),
      now,
      config,
    )
  const indexPath = path.resolve(checkout, (await git(['rev-parse', '--git-path', 'index'])).stdout.trim())
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'yard-snapshot-'))
  const index = path.join(scratch, 'index')
  try {
    // A copy of the real index keeps its stat data: `add -A` then hashes only what changed.
    await fs.copyFile(indexPath, index).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error
    })
    const exclude = (options.exclude ?? []).map((item) => `:(top,exclude,literal)${item}`)
    await git(['add', '--all', '--', ':/', ...exclude], {GIT_INDEX_FILE: index})
    const tree = (await git(['write-tree'], {GIT_INDEX_FILE: index})).stdout.trim()
    const message = `yard: uncommitted work of worktree ${name}, saved before \`yard worktree remove\``
    const commit = await commitTree(context, checkout, [...config, 'commit-tree', tree, '-p', 'HEAD', '-m', message])
    return await createRef(context, checkout, name, commit, now, config)
  } finally {
    await fs.rm(scratch, {recursive: true, force: true})
  }
}

/**
 * A new `refs/yard/removed/<name>-<stamp>` at `commit`; two removes of one name within a second
 * never overwrite the first.
 */
async function createRef(
  context: YardContext,
  checkout: string,
  name: string,
  commit: string,
  now: Date,
  config: readonly string[],
): Promise<string> {
  let ref = `${REMOVED_REFS}/${name}-${utcStamp(now)}`
  for (let attempt = 2; ; attempt++) {
    const created = await context.runner.git([...config, 'update-ref', '--create-reflog', ref, commit, ''], {
      cwd: checkout,
      allowFailure: true,
    })
    if (created.exitCode === 0) return ref
    if (attempt > 9) throw new OperationError(`could not create ${ref}`, {why: created.stderr.trim()})
    ref = `${REMOVED_REFS}/${name}-${utcStamp(now)}-${attempt}`
  }
}

/** `git commit-tree`, with yard as the author when the user has no git identity configured. */
async function commitTree(context: YardContext, checkout: string, args: string[]): Promise<string> {
  const first = await context.runner.git(args, {cwd: checkout, allowFailure: true})
  if (first.exitCode === 0) return first.stdout.trim()
  if (!/tell me who you are|empty ident|unable to auto-detect email/i.test(first.stderr)) {
    throw new OperationError(`could not snapshot the uncommitted work in ${checkout}`, {
      why: first.stderr.trim(),
      fix: 'commit or stash the work yourself, then run the command again',
    })
  }

  const yard = {
    GIT_AUTHOR_NAME: 'yard',
    GIT_AUTHOR_EMAIL: 'yard@localhost',
    GIT_COMMITTER_NAME: 'yard',
    GIT_COMMITTER_EMAIL: 'yard@localhost',
  }
  return (await context.runner.git(args, {cwd: checkout, env: yard})).stdout.trim()
}
