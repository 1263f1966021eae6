/**
 * `yard ps --all` and the STACK column of `yard worktree list`: the stack and box containers of
 * main and every worktree at once (DESIGN.md §4.2, §6), from the stack backend's `psAll` (one
 * engine call) when it has one, else `ps` and `box.ps` per checkout.
 */
import type {StackContainer} from '../../sdk/stack.js'
import type {Target} from '../../sdk/target.js'
import type {YardContext} from '../kernel/context.js'
import type {Backends} from '../registry/backends.js'

import {listIdentities, openWorkspace} from '../workspace/workspace.js'
import {openStack} from './stack.js'

/** One checkout's containers; `box` is empty when it has none or the backend has no box. */
export interface CheckoutContainers {
  worktree: string
  project: string
  stack: StackContainer[]
  box: StackContainer[]
}

/**
 * Main first, then every worktree under the root, each with its stack's and box's containers.
 * A machine that is not running gives empty lists without asking the engine (as every read verb).
 * @throws InputError (exit 2) outside a repository or for invalid config or backend ids.
 */
export async function psAllCheckouts(context: YardContext, backends: Backends): Promise<CheckoutContainers[]> {
  const quiet = {...context, warn() {}}
  const [session, identities] = await Promise.all([
    openStack(quiet, backends, 'main'),
    openWorkspace(context).then(async (workspace) => listIdentities(workspace, quiet)),
  ])
  const targets = identities.filter((row) => row.kind !== 'sandbox').map((row) => row.target)
  const empty = (target: Target): CheckoutContainers => ({
    worktree: target.name,
    project: target.project,
    stack: [],
    box: [],
  })
  if (!session.running) return targets.map(empty)
  const {stack} = session
  if (stack.psAll) {
    const all = await stack.psAll(session.target)
    return targets.map((target) => ({
      ...empty(target),
      stack: all[target.project]?.stack ?? [],
      box: all[target.project]?.box ?? [],
    }))
  }

  return Promise.all(
    targets.map(async (target) => ({
      ...empty(target),
      stack: await stack.ps(target),
      box: stack.box ? await stack.box.ps(target) : [],
    })),
  )
}

/** `running 2/3`, `stopped 0/2` or `-` (no containers): a stack's state in one cell. */
export function describeRunState(containers: readonly StackContainer[]): string {
  if (containers.length === 0) return '-'
  const running = containers.filter((container) => container.state === 'running').length
  return `${running > 0 ? 'running' : 'stopped'} ${running}/${containers.length}`
}
