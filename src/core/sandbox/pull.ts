/**
 * `yard sandbox pull NAME[/BRANCH]` (DESIGN.md §5.2): a sandbox's commits into the main checkout
 * without the pod reaching anything — the way to keep work from a sandbox whose origin is a path
 * on this host (the pod cannot push there). The branch is bundled in the pod, copied out by the
 * runtime, and fetched into `refs/remotes/sandbox/<name>/<branch>` (`<name>@<slot>` for a slot but
 * the first, pulledRefPrefix); with `--branch LOCAL`, the
 * local branch is also created or fast-forwarded (a diverged one only with `--force`).
 */
import {promises as fs} from 'node:fs'
import os from 'node:os'
import path from 'node:path'

import type {YardContext} from '../kernel/context.js'
import type {Backends} from '../registry/backends.js'

import {InputError, OperationError, RefusedError} from '../../sdk/errors.js'
import {branchDirectory, checkBranchDirectory} from '../../sdk/sandbox-repos.js'
import {requireValidBranchName} from '../workspace/git.js'
import {gitFailure} from '../worktree/git-failure.js'
import {pulledRefPrefix} from './restore.js'
import {openSandboxes, requireSandbox} from './sandbox.js'

export interface PullOptions {
  /** `NAME` or `NAME/BRANCH` (BRANCH: the git branch or its directory; default the one attached at create). */
  target: string
  slot?: string
  /** `--branch LOCAL`: also create or fast-forward this local branch. */
  branch?: string
  force: boolean
  runtime?: string
}

export interface PullResult {
  name: string
  slot: string
  /** The sandbox's branch that was pulled. */
  branch: string
  commit: string
  /** `refs/remotes/sandbox/<name>/<branch>` (`<name>@<slot>` for a slot but the first), always updated. */
  ref: string
  /** The local branch updated with `--branch`, and how; null without it. */
  local: {ref: string; action: 'created' | 'fast-forwarded' | 'up to date' | 'forced'} | null
}

/**
 * Pulls a sandbox branch into the main checkout (see the module comment).
 * @throws InputError (exit 2) for an unknown sandbox, slot or branch directory, an invalid or
 *   option-like `--branch`, or a backend that cannot pull; RefusedError (exit 3) when `--branch`
 *   names a local branch that has commits the sandbox's lacks (without `force`), or one checked
 *   out in a worktree with other commits; OperationError (exit 1) when git or the runtime fails.
 */
export async function pullSandbox(context: YardContext, backends: Backends, options: PullOptions): Promise<PullResult> {
  const slash = options.target.indexOf('/')
  const name = slash === -1 ? options.target : options.target.slice(0, slash)
  const asked = slash === -1 ? undefined : options.target.slice(slash + 1)
  if (asked !== undefined) checkBranchDirectory(branchDirectory(asked), asked)
  if (options.branch !== undefined && options.branch.startsWith('-'))
    throw new InputError(`invalid --branch "${options.branch}": it starts with "-"`, {
      fix: 'choose a branch name that does not start with "-"',
    })
  const session = await openSandboxes(context, backends, options.runtime)
  const {mainPath} = session.workspace
  if (options.branch !== undefined) requireValidBranchName(options.branch)
  const {sandbox} = await requireSandbox(context, session, name)
  const slots = sandbox.spec.repos.map((repo) => repo.slot)
  const slot = options.slot ?? slots[0]
  if (!slots.includes(slot))
    throw new InputError(`the sandbox ${name} has no slot ${slot}`, {fix: `use one of: ${slots.join(', ')}`})
  if (!session.backend.bundleBranch)
    throw new InputError(`the sandbox backend ${session.backend.id} cannot pull a branch`, {
      fix: 'push from inside the sandbox instead (yard exec NAME/BRANCH -- git push)',
    })

  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'yard-pull-'))
  try {
    const file = path.join(scratch, 'branch.bundle')
    const place = {slot, directory: branchDirectory(asked ?? sandbox.spec.branch)}
    const {branch, commit} = await session.backend.bundleBranch(sandbox, place, file)
    const ref = `${pulledRefPrefix(name, sandbox.spec.repos, slot)}/${branch}`
    // The remote-tracking ref mirrors the sandbox's branch, so it may move any way (`+`).
    const fetched = await context.runner.git(
      ['fetch', '--quiet', '--no-tags', '--', file, `+refs/heads/${branch}:${ref}`],
      {cwd: mainPath, allowFailure: true, timeoutMs: 600_000, budget: 'fetch'},
    )
    if (fetched.exitCode !== 0)
      throw new OperationError(`could not fetch ${branch} of the sandbox ${name} into ${mainPath}`, {
        why: gitFailure(fetched.stderr) || undefined,
        fix: 'fix what git reports, then run yard sandbox pull again',
      })
    // Only now that the host holds it: the sandbox counts the commit as saved (rm no longer refuses on it).
    await session.backend.markPulled?.(sandbox, place, branch, commit)
    const local =
      options.branch === undefined
        ? null
        : await updateLocal(context, mainPath, {
            local: options.branch,
            commit,
            ref,
            force: options.force,
            from: `${name}/${branch}`,
          })
    return {name, slot, branch, commit, ref, local}
  } finally {
    await fs.rm(scratch, {recursive: true, force: true})
  }
}

/**
 * Creates or fast-forwards `refs/heads/<local>` to `commit` (git refuses one checked out
 * elsewhere); a diverged one only with `force`.
 */
async function updateLocal(
  context: YardContext,
  mainPath: string,
  request: {local: string; commit: string; ref: string; force: boolean; from: string},
): Promise<NonNullable<PullResult['local']>> {
  const ref = `refs/heads/${request.local}`
  const git = async (args: string[]) => context.runner.git(args, {cwd: mainPath, allowFailure: true})
  const current = (await git(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`])).stdout.trim()
  if (current === request.commit) return {ref, action: 'up to date'}
  const fastForward =
    current === '' || (await git(['merge-base', '--is-ancestor', current, request.commit])).exitCode === 0
  if (!fastForward && !request.force) {
    const ahead = (await git(['rev-list', '--count', current, '--not', request.commit])).stdout.trim()
    throw new RefusedError(
      `the local branch ${request.local} has ${ahead} commit${ahead === '1' ? '' : 's'} that ${request.from} lacks`,
      {
        why: "moving it to the sandbox's commit would drop them from the branch",
        fix: `merge instead (git merge ${request.ref}), pull into another branch (--branch NEW), or pass --force to move ${request.local} anyway`,
      },
    )
  }

  // Through fetch, not update-ref: git refuses to move a branch checked out in a worktree.
  const moved = await git(['fetch', '--quiet', '--no-tags', '.', `${fastForward ? '' : '+'}${request.ref}:${ref}`])
  if (moved.exitCode !== 0) {
    throw new RefusedError(`could not move the local branch ${request.local} to ${request.commit.slice(0, 12)}`, {
      why: gitFailure(moved.stderr) || 'git refused',
      fix: `the branch is probably checked out in a worktree: there run git merge --ff-only ${request.ref}`,
    })
  }

  return {ref, action: current === '' ? 'created' : fastForward ? 'fast-forwarded' : 'forced'}
}
