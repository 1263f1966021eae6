/**
 * `yard exec` and `yard shell` into a sandbox (DESIGN.md §5.2): `NAME/BRANCH` or `--sandbox NAME`
 * → the sandbox; a plain `NAME` → the local worktree's box when that worktree exists, else the
 * sandbox of that name; `--local` forces the box.
 */
import {existsSync} from 'node:fs'

import type {YardContext} from '../kernel/context.js'
import type {Backends} from '../registry/backends.js'

import {ExitCode, InputError, OperationError, YardError} from '../../sdk/errors.js'
import {serveAsks} from '../../sdk/fetch-through.js'
import {branchDirectory, checkBranchDirectory} from '../../sdk/sandbox-repos.js'
import {shellCommand} from '../../sdk/shell.js'
import {nameProblem} from '../identity/identity.js'
import {stateDir} from '../kernel/state.js'
import {execInBox} from '../machine/box.js'
import {checkoutProblem, openWorkspace, type Workspace, worktreePath} from '../workspace/workspace.js'
import {recordExec} from './exec-registry.js'
import {noSandbox, openSandboxCache, openSandboxes, requireSandbox, sandboxTarget} from './sandbox.js'

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

/** yard's own failure before the command ran is 125, as `podman exec` reports its own. */
function asExecFailure(error: unknown): never {
  if (error instanceof OperationError)
    throw new YardError(ExitCode.execFailed, error.message, {why: error.why, fix: error.fix, cause: error})
  throw error
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

  return execInBox(context, backends, {name: request.name, argv: request.argv, tty: request.tty, workspace})
}

async function sandboxExists(context: YardContext, backends: Backends, name: string): Promise<boolean> {
  try {
    const session = await openSandboxes(context, backends)
    await requireSandbox(context, session, name)
    return true
  } catch {
    return false
  }
}

/**
 * Runs argv in `/work/<slot>/<branch dir>` of sandbox `name` (DESIGN.md §5.2): the first slot
 * unless `slot`; the branch attached at create unless `branch`. When another `yard exec` that may
 * write (exec-registry.ts) runs in the same worktree, warns on stderr first: concurrent agents
 * belong in separate sandboxes (docs/sandboxes.md, "One agent per workspace"). On podman, while
 * the command runs, yard serves the pod's fetch-through asks (fetch-through.ts).
 */
export async function execInSandbox(
  context: YardContext,
  backends: Backends,
  options: {name: string; branch?: string; slot?: string; argv: string[]; tty: boolean},
): Promise<number> {
  // Checked before the runtime is asked anything: `NAME/..` is refused, not run in /work.
  if (options.branch !== undefined) checkBranchDirectory(branchDirectory(options.branch), options.branch)
  const session = await openSandboxes(context, backends).catch(asExecFailure)
  // What this host recorded of the pod, when the backend keeps it: the exec is then the one engine call.
  const probe = sandboxTarget(session.workspace, context, options.name)
  const recorded = await session.backend.recorded?.(probe, session.runtime)
  const {sandbox} = recorded
    ? {sandbox: recorded}
    : await requireSandbox(context, session, options.name).catch(asExecFailure)
  const slots = sandbox.spec.repos.map((repo) => repo.slot)
  const slot = options.slot ?? slots[0]
  if (!slots.includes(slot))
    throw new InputError(`the sandbox ${options.name} has no slot ${slot}`, {fix: `use one of: ${slots.join(', ')}`})
  const directory = branchDirectory(options.branch ?? sandbox.spec.branch)
  const {writers, release} = recordExec(stateDir(context.env), {sandbox: options.name, slot, directory}, options.argv)
  for (const writer of writers) {
    context.warn(
      `warning: another yard exec runs in ${options.name}/${directory} (pid ${writer.pid}, since ${writer.started}: ${shellCommand(writer.argv)}); two agents in one worktree overwrite each other's index, HEAD and files — give each its own sandbox (yard sandbox create NAME --repo …)`,
    )
  }

  const serving = new AbortController()
  const served =
    sandbox.runtime === 'podman'
      ? (await startServing(context, backends, session.workspace, sandbox, serving.signal)).done
      : Promise.resolve()
  try {
    return await session.backend
      .exec(sandbox, {slot, directory}, options.argv, {
        tty: options.tty,
        gone: () => noSandbox(options.name, probe.project, session.runtime),
      })
      .catch(asExecFailure)
  } finally {
    serving.abort()
    await served
    release()
  }
}

/**
 * serveAsks on the workspace's cache; a cache backend that cannot be opened serves nothing (the
 * pod's fetch reads the cache after its wait).
 */
async function startServing(
  context: YardContext,
  backends: Backends,
  workspace: Parameters<typeof openSandboxCache>[2],
  sandbox: Parameters<typeof serveAsks>[1],
  signal: AbortSignal,
): Promise<{done: Promise<void>}> {
  const side = await openSandboxCache(context, backends, workspace).catch(() => undefined)
  if (side === undefined) return {done: Promise.resolve()}
  // Wrapped: awaiting a bare promise here would wait for the whole serving loop.
  return {
    done: serveAsks(stateDir(context.env), sandbox, {...side, lfs: workspace.config.cache.lfs}, signal).catch(
      () => undefined,
    ),
  }
}
