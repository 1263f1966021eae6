/**
 * The dashboard's `n` (DESIGN.md §6): a new worktree in local mode, a new sandbox in cluster
 * mode, through the same use cases as `yard worktree add` and `yard sandbox create`.
 */
import type {YardContext} from '../kernel/context.js'
import type {Backends} from '../registry/backends.js'

import {validateName} from '../identity/identity.js'
import {type CreateResult, createSandbox} from '../sandbox/create.js'
import {openWorkspace} from '../workspace/workspace.js'
import {type AddResult, addWorktree} from '../worktree/add.js'
import {worktreeBackends} from '../worktree/backends.js'

export type Created = {kind: 'worktree'; result: AddResult} | {kind: 'sandbox'; result: CreateResult; repo: string}

/**
 * The repository a sandbox made from the dashboard holds: the main checkout's `origin` url as
 * configured, else the main checkout's own path (a local identity, DESIGN.md §5.1).
 */
export async function projectRepository(context: YardContext): Promise<string> {
  const {mainPath} = await openWorkspace(context)
  const origin = await context.runner.git(['config', '--get', 'remote.origin.url'], {cwd: mainPath, allowFailure: true})
  return origin.exitCode === 0 && origin.stdout.trim() !== '' ? origin.stdout.trim() : mainPath
}

/**
 * Creates worktree `name` on `wt/<name>` (local: `yard worktree add NAME`, its base fetched first)
 * or sandbox `name` of the project's repository (cluster: `yard sandbox create NAME --repo
 * <projectRepository>`).
 * @throws InputError (exit 2) for an invalid or taken name, before anything is made; what
 *   addWorktree and createSandbox throw.
 */
export async function createFromDashboard(
  context: YardContext,
  backends: Backends,
  mode: 'local' | 'cluster',
  name: string,
): Promise<Created> {
  validateName(name, mode === 'local' ? 'worktree name' : 'sandbox name')
  if (mode === 'local')
    return {
      kind: 'worktree',
      result: await addWorktree(context, {name, fetch: true, backends: worktreeBackends(backends, context)}),
    }
  const repo = await projectRepository(context)
  return {kind: 'sandbox', repo, result: await createSandbox(context, backends, {name, repos: [repo]})}
}
