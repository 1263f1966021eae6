/**
 * Box use cases (DESIGN.md §4.2): `yard box up|down|ps`, `yard exec [NAME] -- CMD…` and
 * `yard shell [NAME]` in the targeted checkout's box, through the stack backend's optional box
 * capability.
 */
import {promises as fs} from 'node:fs'
import path from 'node:path'

import type {BoxCapability, StackContainer} from '../../sdk/stack.js'
import type {Target} from '../../sdk/target.js'
import type {YardContext} from '../kernel/context.js'
import type {Backends} from '../registry/backends.js'
import type {Workspace} from '../workspace/workspace.js'
import type {SharedStop} from './shared.js'

import {ExitCode, InputError, OperationError, RefusedError, YardError} from '../../sdk/errors.js'
import {stackEnv} from '../config/env.js'
import {machineNotRunning, openStack, type StackSession} from '../stack/stack.js'
import {adminDirOf} from '../workspace/git-link.js'
import {agentHomeEnv, ensureAgentHome, excludeYardDir} from '../worktree/agent-home.js'
import {buildDefaultImage} from './image.js'

/** @throws OperationError (exit 1) when the configured stack backend has no box. */
function boxOf(session: StackSession): BoxCapability {
  if (session.stack.box) return session.stack.box
  throw new OperationError(`the stack backend "${session.stack.id}" has no box`, {
    why: 'the box is an optional capability of a stack backend',
    fix: 'set [stack] backend = "compose-stack" in yard.toml for a box',
  })
}

export interface BoxUpOutcome {
  target: Target
  image: string
  /** False when the box was already running. */
  started: boolean
  /** True when yard's default image had to be built first. */
  builtImage: boolean
  /**
   * `box up --stop-shared` of an untrusted worktree: the shared machine stopped first, and the
   * stacks that went down.
   */
  stoppedShared?: SharedStop
}

/**
 * An untrusted worktree's box (docs/worktrees.md, "Untrusted worktrees"): exactly what its own
 * machine mounts — the worktree read-write and the git common dir read-only, so git reads work
 * in the box and nothing there can write the repository's objects, refs, config or hooks.
 */
export function untrustedBoxMounts(session: StackSession): {mounts: string[]; readOnly: string[]} {
  return {mounts: [session.target.checkoutPath], readOnly: [session.workspace.commonDir]}
}

/**
 * `yard box up`: refuses a worktree whose directory does not exist (InputError, exit 2); `[box]
 * image`, else yard's default image (built first when missing, DESIGN.md
 * §8); mounts the main checkout and the worktrees root at their own paths. The agent CLIs in the
 * box keep their state in `<checkout>/.yard/agent-home/` (agent-home.ts).
 */
export async function boxUp(
  context: YardContext,
  backends: Backends,
  flag?: string,
  options: {stopShared?: boolean} = {},
): Promise<BoxUpOutcome> {
  const session = await openStack(context, backends, flag, {
    ensure: true,
    requireCheckout: true,
    stopShared: options.stopShared,
    command: 'yard box up',
  })
  const box = boxOf(session)
  let {image} = session.config.box
  let builtImage = false
  if (image === undefined) {
    const build = await buildDefaultImage(context)
    image = build.image
    builtImage = build.built
  }

  // Agents in the box write their state and transcripts into the checkout, where remove archives them.
  await ensureAgentHome(session.target.checkoutPath)
  await excludeYardDir(context, session.workspace, session.target.checkoutPath)
  const env = {...stackEnv(session.target, context, session.socketEnv), ...agentHomeEnv(session.target.checkoutPath)}
  // An untrusted worktree's box sees what its machine mounts, whatever [box] mounts says.
  const mounts =
    session.machineSpec.worktree === undefined
      ? await boxMounts(context, session.workspace, session.target, session.config.box.mounts)
      : untrustedBoxMounts(session)
  const started = await box.up(session.target, {image, env, ...mounts})
  return {
    target: session.target,
    image,
    started,
    builtImage,
    ...(session.stoppedShared && {stoppedShared: session.stoppedShared}),
  }
}

/**
 * What the box mounts (docs/stacks.md, "What a box can reach"). `all`: the main checkout and the
 * worktrees root, read-write. `worktree`: the checkout read-write and the git common dir
 * read-only, but for what `git status`, `commit` and `log` write — `objects/`, `refs/`, `logs/`
 * (created when missing) and the worktree's own git dir (`worktrees/<id>/`: index, HEAD, its
 * reflog, COMMIT_EDITMSG). So `config`, `hooks/`, `info/` and the other checkouts stay out of
 * reach. For the main checkout, whose git dir is the common dir, the checkout is read-write with
 * `config`, `hooks/`, `info/`, `modules/`, `worktrees/` and `yard/` (made when missing) read-only
 * over it: yard believes what it keeps there (an add's journal names what a rollback removes).
 */
export async function boxMounts(
  context: YardContext,
  workspace: Workspace,
  target: Target,
  mode: 'all' | 'worktree',
): Promise<{mounts: string[]; readOnly: string[]}> {
  if (mode === 'all') return {mounts: [workspace.mainPath, workspace.worktreesRoot], readOnly: []}
  const common = workspace.commonDir
  const guarded = ['config', 'hooks', 'info', 'modules', 'worktrees', 'yard'].map((part) => path.join(common, part))
  if (target.isMain) {
    await fs.mkdir(path.join(common, 'yard'), {recursive: true})
    return {mounts: [target.checkoutPath], readOnly: guarded}
  }

  await fs.mkdir(path.join(common, 'logs'), {recursive: true})
  // From the repository's side, never from the checkout's .git: the box writes that file, and a
  // `gitdir:` it points at the common dir would mount all of it writable at the next `box up`.
  const gitDir = adminDirOf(common, target.checkoutPath)
  if (gitDir === undefined)
    throw new RefusedError(`no worktree of ${common} is checked out at ${target.checkoutPath}`, {
      why: "the box's narrow mounts give it its worktree's own git dir, which git records under the common dir's worktrees/",
      fix: 'git worktree list shows the worktrees; git worktree repair puts a moved one back',
    })
  return {
    mounts: [target.checkoutPath, ...['objects', 'refs', 'logs'].map((part) => path.join(common, part)), gitDir],
    readOnly: [common],
  }
}

/** `yard box down`: what went (empty when no box ran); works when the checkout's directory is gone. */
export async function boxDown(
  context: YardContext,
  backends: Backends,
  flag?: string,
): Promise<{target: Target; gone: string[]}> {
  const session = await openStack(context, backends, flag)
  if (!session.running) return {target: session.target, gone: machineNotRunning(session, context).gone}
  return {target: session.target, gone: await boxOf(session).down(session.target)}
}

/** `yard box ps`. */
export async function boxPs(context: YardContext, backends: Backends, flag?: string): Promise<StackContainer[]> {
  const session = await openStack(context, backends, flag)
  if (!session.running) {
    machineNotRunning(session, context)
    return []
  }

  return boxOf(session).ps(session.target)
}

/**
 * Runs argv in a checkout's box (DESIGN.md §4.2 `yard exec`); resolves with its exit code.
 * `name` is a worktree name or `main`; a worktree must exist (its directory under the root).
 * `workspace`: one already opened in this invocation (execAnywhere's), not opened again.
 * @throws InputError (exit 2) for an empty command or an unknown worktree; OperationError (exit 1)
 *   for a stopped box; YardError 125 when yard or the engine fails before the command runs, or
 *   the stack backend has no box.
 */
export async function execInBox(
  context: YardContext,
  backends: Backends,
  options: {name?: string; argv: string[]; tty: boolean; workspace?: Workspace},
): Promise<number> {
  if (options.argv.length === 0) {
    throw new InputError('no command given after --', {
      fix: 'yard exec [NAME] -- CMD [ARG…], e.g. yard exec feat -- git status',
    })
  }

  // A worktree without a directory is refused (exit 2) before anything else, without the note
  // about the identity it would have: there is no box to run in.
  const opening = {requireCheckout: true, workspace: options.workspace}
  const session = await openStack(context, backends, options.name, opening).catch((error: unknown) => {
    // yard's own failure before the command ran is 125, as `podman exec` reports its own (DESIGN.md §4.2).
    if (error instanceof OperationError)
      throw new YardError(ExitCode.execFailed, error.message, {why: error.why, fix: error.fix, cause: error})
    throw error
  })
  if (!session.stack.box) {
    // No box to run in is also yard's own failure before the command runs: 125.
    throw new YardError(ExitCode.execFailed, `the stack backend "${session.stack.id}" has no box`, {
      why: 'a box is an optional capability of a stack backend, and this one has none: there is nothing to run the command in',
      fix: `run the command on the host in ${session.target.checkoutPath}, or set [stack] backend = "compose-stack" in yard.toml for a box`,
    })
  }

  if (!session.running) {
    // The same answer as a stopped box (DESIGN.md §4.2), and nothing is started.
    throw new OperationError(
      `the box of ${session.target.project} is not running: machine ${session.machineSpec.name} is not running`,
      {
        fix: `yard box up${session.target.isMain ? '' : ` --worktree ${session.target.name}`} (it starts the machine too)`,
      },
    )
  }

  if (session.machineSpec.worktree !== undefined)
    context.warn(
      `note: worktree ${session.target.name} is untrusted: its box runs on ${session.machine.id === 'native' ? "the host's podman" : `machine ${session.machineSpec.name}`} and reaches only ${session.target.checkoutPath} and the git dir (read-only)`,
    )
  return session.stack.box.exec(session.target, options.argv, {tty: options.tty})
}

/** The login shell `yard shell` starts: bash when the image has it, else sh. A fixed script, never user text. */
export const SHELL_ARGV = ['sh', '-c', 'if command -v bash >/dev/null 2>&1; then exec bash -l; else exec sh -l; fi']
