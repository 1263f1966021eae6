/**
 * `yard sandbox rm NAME [--force] [--dry-run]` (DESIGN.md §5.2): refuses while a slot holds
 * modified or untracked files or commits not on origin; `--force` first saves a bundle and
 * patches under `<state dir>/sandboxes/<name>/<time>/`. Then the pod goes, the leases are
 * released and the name's pin is deleted (unless a worktree of that name still uses it).
 */
import {existsSync} from 'node:fs'
import path from 'node:path'

import type {SandboxWorktree} from './backend.js'
import type {YardContext} from './context.js'
import {RefusedError} from './errors.js'
import {withLock} from './lock.js'
import {OFFSETS_LOCK_BUDGET_MS, offsetsLockPath, removeYardPin, YARD_PIN_MARK} from './pins.js'
import type {Registry} from './registry.js'
import {openSandboxCache, openSandboxes, requireSandbox} from './sandbox.js'
import {stateDir} from './state.js'
import {worktreePath} from './workspace.js'

export interface RemoveResult {
  name: string
  project: string
  dryRun: boolean
  /** Worktrees with unsaved work, as `path: what`. */
  unsaved: string[]
  /** Where the bundle and patches went (null: nothing saved). */
  savedIn: string | null
  saved: string[]
  removed: boolean
}

/** `path: status line` and `path: branch (n commits) not on origin`, per worktree. */
function describeUnsaved(worktrees: SandboxWorktree[]): string[] {
  return worktrees.flatMap((worktree) => [
    ...worktree.dirty.map((line) => `${worktree.path}: ${line.trim()}`),
    ...worktree.unpushed.map((branch) => `${worktree.path}: ${branch} not on origin`),
  ])
}

/**
 * Removes the sandbox (see the module comment).
 * @throws InputError (exit 2) for an unknown sandbox; RefusedError (exit 3) for unsaved work
 *   without `force`, listing it; OperationError (exit 1) when saving or the runtime fails.
 */
export async function removeSandbox(context: YardContext, registry: Registry, options: {name: string; force: boolean; dryRun: boolean; runtime?: string}): Promise<RemoveResult> {
  const session = await openSandboxes(context, registry, options.runtime)
  const {sandbox} = await requireSandbox(context, session, options.name)
  const worktrees = sandbox.phase === 'Running' ? await session.backend.worktrees(sandbox) : []
  const unsaved = describeUnsaved(worktrees)
  const base = {name: sandbox.name, project: sandbox.project, dryRun: options.dryRun, unsaved}
  if (unsaved.length > 0 && !options.force) {
    throw new RefusedError(`the sandbox ${sandbox.name} holds unsaved work:\n  ${unsaved.join('\n  ')}`, {
      why: 'removing the pod deletes /work, and these changes exist nowhere else',
      fix: `commit and push them (yard exec ${sandbox.name}/BRANCH -- git push origin BRANCH), or pass --force to save a bundle and patches under ${path.join(stateDir(context.env), 'sandboxes', sandbox.name)} first`,
    })
  }
  const savedIn = options.force && worktrees.length > 0 ? path.join(stateDir(context.env), 'sandboxes', sandbox.name, new Date().toISOString().replaceAll(':', '-')) : null
  if (options.dryRun) return {...base, savedIn, saved: [], removed: false}
  const saved = savedIn ? await session.backend.save(sandbox, savedIn) : []
  await session.backend.remove(sandbox)
  const {cache, root} = await openSandboxCache(context, registry, session.workspace)
  // A cluster sandbox took no local lease (its node's agent sees the pod mount the cache).
  for (const repo of sandbox.runtime === 'kubernetes' ? [] : sandbox.spec.repos) await cache.release(root, repo.url, {kind: 'sandbox', name: sandbox.project})
  if (!existsSync(worktreePath(session.workspace, sandbox.name))) {
    const pin = await withLock(offsetsLockPath(session.workspace.commonDir), {budgetMs: OFFSETS_LOCK_BUDGET_MS, purpose: `sandbox rm ${sandbox.name}`, warn: context.warn}, () =>
      removeYardPin(session.workspace.config.files.local, sandbox.name))
    if (pin === 'kept') context.warn(`note: kept the hand-written pin of ${sandbox.name} in ${session.workspace.config.files.local} (yard deletes only the pins it wrote, marked "${YARD_PIN_MARK}")`)
  }
  return {...base, savedIn, saved, removed: true}
}
