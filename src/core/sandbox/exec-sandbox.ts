/**
 * `yard exec` into a sandbox (DESIGN.md §5.2): the branch worktree of a slot, the record this host
 * kept of the pod, the one-agent-per-workspace warning, and fetch-through served while the
 * command runs. Loaded by exec.ts only when a sandbox is the target.
 */
import type {YardContext} from '../kernel/context.js'
import type {Backends} from '../registry/backends.js'

import {ExitCode, InputError, OperationError, YardError} from '../../sdk/errors.js'
import {serveAsks} from '../../sdk/fetch-through.js'
import {signalRunningGroups} from '../../sdk/process.js'
import {branchDirectory, checkBranchDirectory} from '../../sdk/sandbox-repos.js'
import {shellCommand} from '../../sdk/shell.js'
import {stateDir} from '../kernel/state.js'
import {within} from '../kernel/within.js'
import {recordExec} from './exec-registry.js'
import {noSandbox, openSandboxCache, openSandboxes, requireSandbox, sandboxTarget} from './sandbox.js'

/** yard's own failure before the command ran is 125, as `podman exec` reports its own. */
function asExecFailure(error: unknown): never {
  if (error instanceof OperationError)
    throw new YardError(ExitCode.execFailed, error.message, {why: error.why, fix: error.fix, cause: error})
  throw error
}

/** Whether the project has a sandbox named `name` (any failure to tell: no). */
export async function sandboxExists(context: YardContext, backends: Backends, name: string): Promise<boolean> {
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

  // Served while the command runs; the cache backend is loaded on the pod's first ask.
  const serving = new AbortController()
  const {workspace} = session
  const served =
    sandbox.runtime === 'podman'
      ? serveAsks(
          stateDir(context.env),
          sandbox,
          // The caches the pod mounts: those of its spec, whatever the config says now.
          async () => ({
            ...(await openSandboxCache(context, backends, workspace)),
            root: sandbox.spec.cacheRoot,
            lfs: workspace.config.cache.lfs,
          }),
          serving.signal,
        ).catch(() => undefined)
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
    // A cache fetch the pod asked for may still run when its command has ended: it gets a
    // moment, then its git is ended (the cache stays as a cut fetch leaves it, and the next ask
    // fetches again), so the exec ends with its command.
    const finished = served.then(() => true)
    const settled = await within(finished, SERVE_GRACE_MS, false)
    if (!settled) {
      signalRunningGroups('SIGTERM', ['git'])
      await served
    }

    release()
  }
}

/** How long an exec waits, once its command has ended, for a fetch-through fetch still running (ms). */
const SERVE_GRACE_MS = 1000
