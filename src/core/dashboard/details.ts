/**
 * What the dashboard's detail pane (Enter) asks for beyond its row (DESIGN.md §6): the
 * checkout's containers with their ports (the stack backend's `ps` and `box.ps`), its recent log
 * lines (the stack backend's optional `recentLogs`) and its `git status`. Each part is bounded in
 * lines and in time; a part that fails or is late becomes a note, never an error of the pane.
 */
import type {StackContainer} from '../../sdk/stack.js'
import type {YardContext} from '../kernel/context.js'
import type {Backends} from '../registry/backends.js'

import {within} from '../kernel/within.js'
import {openStack} from '../stack/stack.js'
import {UNTRUSTED_STATUS, untrustedGit} from '../workspace/git-link.js'

/** How many log lines and git status lines the pane shows at most. */
export const DETAIL_LINES = 8

/** Budget of each part, in milliseconds. */
const DETAIL_BUDGET_MS = 4000

export interface CheckoutDetails {
  name: string
  /** The stack's containers, then the box's; empty when nothing runs or the machine is stopped. */
  containers: StackContainer[]
  /** The last log lines, oldest first; null when the stack backend gives none (no `recentLogs`). */
  logs: string[] | null
  /** `git status --short --branch` lines, at most DETAIL_LINES; the first is `## <branch>…`. */
  git: string[]
  /** How many git status lines were left out. */
  gitMore: number
  /** Parts that failed or were late, said in a few words. */
  notes: string[]
}

/** `work`, or a note and `fallback` when it fails or takes longer than the budget. */
async function part<T>(label: string, work: () => Promise<T>, fallback: T, notes: string[]): Promise<T> {
  const answer = work().catch((error: Error) => {
    notes.push(`${label}: ${error.message.split('\n', 1)[0]}`)
    return fallback
  })
  const late = Symbol('late')
  const outcome = await within(answer, DETAIL_BUDGET_MS, late)
  if (outcome !== late) return outcome
  notes.push(`${label}: no answer within ${DETAIL_BUDGET_MS / 1000} s`)
  return fallback
}

/**
 * The detail facts of checkout `name` (`main` or a worktree), each within 4 s.
 * @throws InputError (exit 2) for an unknown worktree or invalid config (from openStack).
 */
export async function gatherDetails(context: YardContext, backends: Backends, name: string): Promise<CheckoutDetails> {
  const notes: string[] = []
  const quiet = {...context, warn: (message: string) => notes.push(message)}
  const session = await openStack(quiet, backends, name)
  const {stack, target} = session
  // Git kept out of an untrusted worktree's submodules (git-link.ts).
  const untrusted = !target.isMain && session.workspace.config.trust[target.name] === 'untrusted'
  const [containers, logs, status] = await Promise.all([
    session.running
      ? part(
          'containers',
          async () => [...(await stack.ps(target)), ...(stack.box ? await stack.box.ps(target) : [])],
          [] as StackContainer[],
          notes,
        )
      : Promise.resolve([] as StackContainer[]),
    stack.recentLogs
      ? session.running
        ? part('logs', async () => stack.recentLogs!(target, {lines: DETAIL_LINES}), [], notes)
        : Promise.resolve([])
      : Promise.resolve(null),
    part(
      'git status',
      async () =>
        context.runner.git(
          [
            ...(untrusted ? untrustedGit(session.workspace.commonDir, target.checkoutPath) : []),
            'status',
            '--short',
            '--branch',
            '--untracked-files=all',
            ...(untrusted ? UNTRUSTED_STATUS : []),
          ],
          {cwd: target.checkoutPath, timeoutMs: DETAIL_BUDGET_MS},
        ),
      undefined,
      notes,
    ),
  ])
  const lines = (status?.stdout ?? '').split('\n').filter((line) => line !== '')
  return {
    name,
    containers,
    logs,
    git: lines.slice(0, DETAIL_LINES),
    gitMore: Math.max(0, lines.length - DETAIL_LINES),
    notes,
  }
}
