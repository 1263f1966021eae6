/**
 * The offset allocator (DESIGN.md §3.4, "Collisions"): the one place that decides a newcomer's
 * offset and keeps the `[worktree-offsets]` pins in step with the worktrees and sandboxes.
 * `worktree add` and `sandbox create` hold the project's offsets lock
 * (`<git common dir>/yard/offsets.lock`) from reading the known offsets until the new entry
 * exists, and pin a clashing newcomer to the lowest free offset; a worktree and a sandbox of the
 * same name are one identity, never a clash. `worktree remove` and `sandbox rm` delete the pin
 * yard wrote for the name. Every edit of the main checkout's yard.local.toml (pins, trust
 * records) runs under the same lock (`withOffsetsLock`).
 */
import path from 'node:path'

import type {OffsetSource} from '../../sdk/target.js'
import type {YardContext} from '../kernel/context.js'

import {withLock} from '../../sdk/lock.js'
import {
  type GitWorktree,
  gitWorktrees,
  resolveOffset,
  type Workspace,
  worktreesUnderRoot,
} from '../workspace/workspace.js'
import {lowestFreeOffset, nameProblem, OFFSET_SLOTS} from './identity.js'
import {excludePinFile, type PinWrite, removeYardPin, restorePinFile, writePin} from './pins.js'

/** How long a holder of the offsets lock may take (a `git worktree add` of a big repository included). */
const OFFSETS_LOCK_BUDGET_MS = 10 * 60_000

/** The lock every offset decision and pin edit holds: `<git common dir>/yard/offsets.lock`. */
function offsetsLockPath(commonDir: string): string {
  return path.join(commonDir, 'yard', 'offsets.lock')
}

/**
 * Runs `work` holding the project's offsets lock (DESIGN.md §3.4); a stale lock is taken over
 * with a warning. `purpose` names the holder in the lock file (`worktree add feat`).
 */
export async function withOffsetsLock<T>(
  context: YardContext,
  workspace: Pick<Workspace, 'commonDir'>,
  purpose: string,
  work: () => Promise<T>,
): Promise<T> {
  return withLock(
    offsetsLockPath(workspace.commonDir),
    {budgetMs: OFFSETS_LOCK_BUDGET_MS, purpose, warn: context.warn},
    work,
  )
}

/** What is a newcomer: a worktree or a sandbox. */
export type OffsetHolder = 'worktree' | 'sandbox'

/** An offset already taken: a worktree (pin or hash) or a sandbox (its label). */
export interface KnownOffset {
  name: string
  offset: number
  kind: string
}

/** The newcomer's offset decision (DESIGN.md §3.4, "Collisions"). */
export interface OffsetChoice {
  offset: number
  /** The offset to pin (write to `[worktree-offsets]`), when the current one must change. */
  pin?: number
  clashedWith: string[]
  /** Every slot is taken: the clash stays (the allocator warns). */
  full: boolean
}

/**
 * Chooses a new name's offset among the known ones: a known entry of the same name is the same
 * identity and lends its offset; a clash with any other name moves the newcomer to the lowest
 * free offset in 1..89. Pure.
 */
export function chooseOffset(name: string, current: number, others: readonly KnownOffset[]): OffsetChoice {
  const twin = others.find((other) => other.name === name)
  if (twin)
    return twin.offset === current
      ? {offset: current, clashedWith: [], full: false}
      : {offset: twin.offset, pin: twin.offset, clashedWith: [], full: false}
  const clashedWith = [...new Set(others.filter((other) => other.offset === current).map((other) => other.name))].sort()
  if (clashedWith.length === 0) return {offset: current, clashedWith, full: false}
  const free = lowestFreeOffset(others.map((other) => other.offset))
  return free === undefined
    ? {offset: current, clashedWith, full: true}
    : {offset: free, pin: free, clashedWith, full: false}
}

/** An allocated offset: the choice, where the offset comes from, and the pin written for it. */
export interface OffsetAllocation extends OffsetChoice {
  name: string
  kind: OffsetHolder
  /** `pin` when yard pinned the newcomer, else the source of its own offset (pin or hash). */
  offsetSource: OffsetSource
  /** The newcomer's own offset before the choice (pin or hash; `WT_OFFSET` plays no part). */
  hashOffset: number
  /** What the pin write replaced, for `undoPin`; undefined when nothing was written. */
  written?: PinWrite
}

/**
 * Decides the offset of the newcomer `name` and writes its pin when it must change. Call it
 * under `withOffsetsLock`, with `workspace` freshly loaded there (another holder may have pinned
 * meanwhile). The known offsets: every worktree under the root (its offset does not depend on its
 * own yard.toml, so a broken one cannot hide it; names §3.1 refuses are left out) and every
 * sandbox `sandboxes` lists (asked only when no worktree of the name decides it); an entry of the
 * newcomer's own kind and name is the newcomer itself and left out. All offsets taken: a warning,
 * and the clash stays.
 * @param request `worktrees`: git's worktrees when the caller has read them already.
 * @throws InputError (exit 2) for an invalid pin; OperationError (exit 1) when the pin cannot be
 *   written (pins.ts `writePin`).
 */
export async function allocateOffset(
  context: YardContext,
  workspace: Workspace,
  request: {
    name: string
    kind: OffsetHolder
    worktrees?: GitWorktree[]
    sandboxes: () => Promise<Array<{name: string; offset: number}>>
  },
): Promise<OffsetAllocation> {
  const {name, kind} = request
  const offsetOf = (entry: string) => resolveOffset(workspace, context, entry, false, {useEnvOffset: false})
  const current = offsetOf(name)
  const worktrees: KnownOffset[] = (
    await worktreesUnderRoot(workspace, context, request.worktrees ?? (await gitWorktrees(workspace, context)))
  )
    .filter((entry) => nameProblem(entry.name) === undefined)
    .map((entry) => ({name: entry.name, offset: offsetOf(entry.name).offset, kind: 'worktree'}))
  // A worktree of the name lends its offset, which is the newcomer's own: no sandbox need answer.
  const sandboxes =
    kind === 'sandbox' && worktrees.some((entry) => entry.name === name)
      ? []
      : (await request.sandboxes()).map((sandbox) => ({...sandbox, kind: 'sandbox'}))
  const others = [...worktrees, ...sandboxes].filter((other) => !(other.kind === kind && other.name === name))
  const choice = chooseOffset(name, current.offset, others)
  if (choice.full)
    context.warn(
      `warning: all ${OFFSET_SLOTS} offsets are taken; ${name} keeps offset ${current.offset}, shared with ${choice.clashedWith.join(', ')}`,
    )
  const allocation: OffsetAllocation = {
    ...choice,
    name,
    kind,
    offsetSource: choice.pin === undefined ? current.offsetSource : 'pin',
    hashOffset: current.offset,
  }
  if (choice.pin === undefined) return allocation
  const note =
    choice.clashedWith.length > 0
      ? `clash with ${choice.clashedWith.join(', ')}`
      : `offset of ${twinKind(kind)} ${name}`
  return {...allocation, written: await writePin(workspace.config.files.local, name, choice.pin, note)}
}

const twinKind = (kind: OffsetHolder): OffsetHolder => (kind === 'worktree' ? 'sandbox' : 'worktree')

/**
 * Puts back the pin file `allocateOffset` edited (the newcomer was not made). Still under the
 * offsets lock: nobody else has edited the file since, so its old text goes back as it was.
 * @returns what was undone, for messages, or undefined when no pin was written.
 * @throws the file system's error when the file cannot be written back.
 */
export async function undoPin(
  workspace: Workspace,
  allocation: OffsetAllocation | undefined,
): Promise<string | undefined> {
  const written = allocation?.written
  if (written === undefined) return undefined
  await restorePinFile(workspace.config.files.local, written.text)
  return written.previous === undefined
    ? `deleted the pin of ${allocation!.name}`
    : `restored the pin of ${allocation!.name}`
}

/**
 * Once the newcomer exists: when yard pinned it, makes sure git ignores the pin file and says why
 * the pin was written (`note: feat's offset 59 clashes with alpha: pinned feat to offset 3 in …`).
 */
export async function notePin(context: YardContext, workspace: Workspace, allocation: OffsetAllocation): Promise<void> {
  if (allocation.pin === undefined) return
  const {name, pin} = allocation
  await excludePinFile(context, workspace)
  const why =
    allocation.clashedWith.length > 0
      ? `offset ${allocation.hashOffset} clashes with ${allocation.clashedWith.join(', ')}`
      : `${twinKind(allocation.kind)} ${name} (the same identity) has offset ${pin}`
  context.warn(`note: ${name}'s ${why}: pinned ${name} to offset ${pin} in ${workspace.config.files.local}`)
}

/**
 * Deletes `name`'s pin under the offsets lock when yard wrote it (a hand-written one stays), for
 * `worktree remove` and `sandbox rm`. `purpose` names the holder of the lock.
 * @returns `removed`, `kept` (hand-written: the caller says so) or `absent`.
 * @throws OperationError (exit 1) as pins.ts `writePin`.
 */
export async function releasePin(
  context: YardContext,
  workspace: Workspace,
  name: string,
  purpose: string,
): Promise<'removed' | 'kept' | 'absent'> {
  return withOffsetsLock(context, workspace, purpose, async () => removeYardPin(workspace.config.files.local, name))
}
