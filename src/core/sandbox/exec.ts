/**
 * `yard exec` and `yard shell` into a sandbox (DESIGN.md §5.2): `NAME/BRANCH` or `--sandbox NAME`
 * → the sandbox; a plain `NAME` → the local worktree's box when that worktree exists, else the
 * sandbox of that name; `--local` forces the box. The box's path (machine/box.ts) and the
 * sandbox's (exec-sandbox.ts) are loaded when chosen: an agent's every instruction loads one.
 */
import {existsSync} from 'node:fs'

import type {YardContext} from '../kernel/context.js'
import type {Backends} from '../registry/backends.js'

import {InputError} from '../../sdk/errors.js'
import {nameProblem} from '../identity/identity.js'
import {checkoutProblem, openWorkspace, type Workspace, worktreePath} from '../workspace/workspace.js'

export interface ExecRequest {
  /** `NAME`, `NAME/BRANCH` (BRANCH: the git branch or its directory), `main`, or undefined. */
  name?: string
  /** `--sandbox NAME`. */
  sandbox?: string
  /** `--slot SLOT` (default: the first). */
  slot?: string
  /** `--local`: the box, never a sandbox. */
  local?: boolean
  argv: string[]
  tty: boolean
}

/**
 * Runs argv in the box or sandbox the request names; resolves with the command's exit code.
 * @throws InputError (exit 2) for an empty command, an unknown worktree, sandbox, slot or branch
 *   directory (`NAME/..`, `NAME/.` and `NAME/` name none); YardError 125 when yard or the runtime
 * fails before the command runs.
 */
export async function execAnywhere(context: YardContext, backends: Backends, request: ExecRequest): Promise<number> {
  if (request.argv.length === 0)
    throw new InputError('no command given after --', {
      fix: 'yard exec [NAME[/BRANCH]] -- CMD [ARG…], e.g. yard exec feat -- git status',
    })
  const slash = request.name?.indexOf('/') ?? -1
  if (request.sandbox !== undefined || slash > 0) {
    if (request.local)
      throw new InputError('--local names a box, but a sandbox was named', {
        fix: 'leave out --local, or name a worktree without /BRANCH',
      })
    const name = request.sandbox ?? request.name!.slice(0, slash)
    const branch = slash > 0 ? request.name!.slice(slash + 1) : undefined
    if (request.sandbox !== undefined && request.name !== undefined)
      throw new InputError(`both --sandbox ${request.sandbox} and ${request.name} name a target`, {
        fix: 'yard exec --sandbox NAME -- CMD, or yard exec NAME/BRANCH -- CMD',
      })
    const {execInSandbox} = await import('./exec-sandbox.js')
    return execInSandbox(context, backends, {
      name,
      branch,
      slot: request.slot,
      argv: request.argv,
      tty: request.tty,
    }).catch(async (error: unknown) => {
      // No sandbox of that name, but a worktree: NAME/BRANCH was meant for the worktree's box.
      if (!(error instanceof InputError) || !error.message.startsWith(`there is no sandbox ${name} `)) throw error
      const workspace = await openWorkspace(context).catch(() => undefined)
      if (!workspace || checkoutProblem(workspace.commonDir, worktreePath(workspace, name)) !== undefined) throw error
      throw new InputError(error.message, {
        why: `${name} is a worktree, and NAME/BRANCH (or --sandbox) names a sandbox's branch: a worktree has one branch, its own`,
        fix: `yard exec ${name} -- CMD runs in the box of worktree ${name}`,
      })
    })
  }

  // A name no worktree or sandbox can have names none: said so, not as a name to be made.
  const invalid = request.name === undefined ? undefined : nameProblem(request.name)
  if (invalid !== undefined && request.name !== 'main') {
    const lower = request.name!.toLowerCase()
    const meant = lower !== request.name && nameProblem(lower) === undefined ? lower : undefined
    throw new InputError(`no worktree or sandbox can be named "${request.name}": ${invalid}`, {
      why: `\`yard exec NAME\` runs in the box of worktree NAME, else in sandbox NAME, and names are DNS-1123 labels`,
      fix: `${meant ? `did you mean ${meant}? ` : ''}see \`yard worktree list\` and \`yard sandbox list\` for the names; leave NAME out for the current worktree`,
    })
  }

  // The workspace opened here is the box's too: one `git rev-parse` and config load per exec.
  let workspace: Workspace | undefined
  if (!request.local && request.name !== undefined && request.name !== 'main') {
    workspace = await openWorkspace(context)
    const checkout = worktreePath(workspace, request.name)
    // A directory of the worktrees root that is no checkout (no `.git` in it), or another
    // repository's, is no worktree.
    const problem = checkoutProblem(workspace.commonDir, checkout)
    if (problem) {
      const {execInSandbox, sandboxExists} = await import('./exec-sandbox.js')
      if (await sandboxExists(context, backends, request.name)) {
        return execInSandbox(context, backends, {
          name: request.name,
          slot: request.slot,
          argv: request.argv,
          tty: request.tty,
        })
      }

      const {name} = request
      throw new InputError(`there is no worktree ${name}: ${checkout} ${problem}, and no sandbox is named ${name}`, {
        why: `\`yard exec ${name}\` runs in the box of worktree ${name}, else in sandbox ${name} (NAME/BRANCH names a sandbox's branch)`,
        fix: existsSync(checkout)
          ? `${checkout} is in the way of a worktree of that name: move it out of the worktrees root, or use another name; \`yard worktree list\` shows the worktrees`
          : `see \`yard worktree list\` and \`yard sandbox list\`; make one with \`yard worktree add ${name}\` or \`yard sandbox create ${name} --repo URL\``,
      })
    }
  }

  const {execInBox} = await import('../machine/box.js')
  return execInBox(context, backends, {name: request.name, argv: request.argv, tty: request.tty, workspace})
}
