/**
 * What `yard dashboard` shows (DESIGN.md §6, Appendix A): the rows of `worktree list` (local
 * mode) or `sandbox list` (cluster mode) plus stack and box states and clashes, gathered through
 * the same core services and registry as the commands, so a plugin backend shows up unchanged.
 * Each stack and box probe has a time budget: a slow backend gives `pending` cells, never a
 * frozen screen.
 */
import type {StackContainer} from '../../sdk/stack.js'
import type {Target} from '../../sdk/target.js'
import type {YardContext} from '../kernel/context.js'
import type {Backends} from '../registry/backends.js'

import {findClashes} from '../identity/identity.js'
import {within} from '../kernel/within.js'
import {listSandboxes, openSandboxes, type SandboxListRow} from '../sandbox/sandbox.js'
import {openStack, type StackSession} from '../stack/stack.js'
import {listIdentities, openWorkspace} from '../workspace/workspace.js'
import {type ListedCheckout, listWorktrees, type WorktreeRow} from '../worktree/list.js'
import {dashboardTracer, traced, type Tracer} from './trace.js'

export type DashboardMode = 'local' | 'cluster'

/**
 * A stack's or box's state: `running` (n of m containers run), `stopped` (containers, none
 * running), `absent` (no containers), `unknown` (the probe failed), `pending` (the probe did not
 * answer within its budget).
 */
export interface RunState {
  state: 'running' | 'stopped' | 'absent' | 'unknown' | 'pending'
  running: number
  total: number
}

/** One local row: a `worktree list` row plus ports, clashes, stack and box (null: the backend has no box). */
export interface LocalRow extends WorktreeRow {
  /** Only on rows shown before git answered (`GatherOptions.onProgress`): the git cells are "…". */
  gitPending?: true
  ports: Record<string, number>
  clashesWith: string[]
  stack: RunState
  box: RunState | null
}

/** One cluster row: a `sandbox list` row plus clashes and each cache's last fetch (ISO time or null). */
export interface ClusterRow extends SandboxListRow {
  clashesWith: string[]
  lastFetched: Record<string, string | null>
}

export interface DashboardSnapshot {
  mode: DashboardMode
  rows: LocalRow[] | ClusterRow[]
  /** Notes about what could not be shown (a runtime that failed, a sandbox backend missing). */
  notes: string[]
}

/** Default time budget of one stack or box probe, in milliseconds. */
export const PROBE_BUDGET_MS = 1500

/** Counts containers into a RunState. */
export function runState(containers: StackContainer[]): RunState {
  const running = containers.filter((container) => container.state === 'running').length
  const state = containers.length === 0 ? 'absent' : running > 0 ? 'running' : 'stopped'
  return {state, running, total: containers.length}
}

const PENDING: RunState = {state: 'pending', running: 0, total: 0}
const UNKNOWN: RunState = {state: 'unknown', running: 0, total: 0}
const ABSENT: RunState = {state: 'absent', running: 0, total: 0}

/** A probe bounded by `budgetMs`: `pending` when slower, `unknown` when it fails. */
async function probe(
  work: () => Promise<StackContainer[]>,
  budgetMs: number,
  trace: Tracer,
  label: string,
): Promise<RunState> {
  return within(
    traced(trace, label, work).then(runState, () => UNKNOWN),
    budgetMs,
    PENDING,
  )
}

/** The stack and box states of one checkout (box null: the backend has no box). */
interface CheckoutStates {
  stack: RunState
  box: RunState | null
}

/** How to find each checkout's states; `byProject` is set when one batch answered for all. */
interface StackStates {
  of: (target: Target) => Promise<CheckoutStates>
  byProject?: (project: string) => CheckoutStates
}

/**
 * How the stack and box states of each checkout are found: from one `psAll` of the backend when
 * it has one (one engine call for every checkout, DESIGN.md §6), else `ps` and `box.ps` per
 * checkout, each within `budgetMs`. No backend: unknown; no running machine: absent, without
 * asking the engine.
 */
async function stackStates(session: StackSession | undefined, budgetMs: number, trace: Tracer): Promise<StackStates> {
  const fixed = (states: CheckoutStates): StackStates => ({of: async () => states, byProject: () => states})
  if (!session) return fixed({stack: UNKNOWN, box: UNKNOWN})
  const {stack} = session
  const hasBox = stack.box !== undefined
  if (!session.running) return fixed({stack: ABSENT, box: hasBox ? ABSENT : null})
  if (stack.psAll) {
    const all = await within(
      traced(trace, 'probe all stacks and boxes', async () => stack.psAll!(session.target)).catch(() => null),
      budgetMs,
      undefined,
    )
    if (all === undefined) return fixed({stack: PENDING, box: hasBox ? PENDING : null})
    if (all === null) return fixed({stack: UNKNOWN, box: hasBox ? UNKNOWN : null})
    const byProject = (project: string) => ({
      stack: runState(all[project]?.stack ?? []),
      box: hasBox ? runState(all[project]?.box ?? []) : null,
    })
    return {of: async (target) => byProject(target.project), byProject}
  }

  return {
    async of(target) {
      const [stackState, boxState] = await Promise.all([
        probe(async () => stack.ps(target), budgetMs, trace, `probe stack ${target.name}`),
        stack.box ? probe(async () => stack.box!.ps(target), budgetMs, trace, `probe box ${target.name}`) : null,
      ])
      return {stack: stackState, box: boxState}
    },
  }
}

/** Options of a local gather. */
export interface GatherOptions {
  /** Budget of the engine's answer (the batch, or each per-checkout probe), in ms; default 1.5 s. */
  budgetMs?: number
  /**
   * Gets the rows as they fill in, before the gather ends: first the checkouts with "…"
   * (pending) git and stack cells, then again when the engine answered. Never called after
   * the gather resolved.
   */
  onProgress?: (rows: LocalRow[]) => void
}

/**
 * Local mode (DESIGN.md §6): main and every worktree (`listWorktrees`: git status in a few batched
 * processes), with `[ports]`, clashes against worktrees and sandboxes, and the stack and
 * box states from the configured stack backend (`stackStates`). The worktree list, the engine
 * and the sandbox list are asked at the same time. A machine that is not running makes every
 * stack and box `absent` without asking the engine.
 * @throws InputError (exit 2) outside a repository or for invalid config.
 */
export async function gatherLocal(
  context: YardContext,
  backends: Backends,
  options: GatherOptions = {},
): Promise<{rows: LocalRow[]; notes: string[]}> {
  const budgetMs = options.budgetMs ?? PROBE_BUDGET_MS
  const trace = dashboardTracer(context.env)
  const notes: string[] = []
  const quiet = {...context, warn: (message: string) => notes.push(message)}
  let listed: ListedCheckout[] | undefined
  let found: StackStates | undefined
  let done = false
  // The rows as known so far: git cells pending; stack and box once one batch answered.
  const progress = () => {
    if (!options.onProgress || !listed || done) return
    options.onProgress(
      listed.map(({target, ...checkout}): LocalRow => ({
        ...checkout,
        dirty: null,
        ahead: null,
        behind: null,
        gitPending: true,
        ports: target.ports,
        clashesWith: [],
        ...(found?.byProject?.(checkout.project) ?? {stack: PENDING, box: PENDING}),
      })),
    )
  }

  const states = traced(trace, 'local: stack backend', async () => openStack(quiet, backends, 'main'))
    .catch((error: Error) => {
      notes.push(`stack states unknown: ${error.message}`)
      return undefined
    })
    .then(async (session) => stackStates(session, budgetMs, trace))
    .then((answer) => {
      found = answer
      progress()
      return answer
    })
  const [rows, sandboxes, lookup] = await Promise.all([
    // Every 2 s: isomorphic-git, loaded once, answers what it can without a process.
    traced(trace, 'local: worktree list', async () =>
      listWorktrees(quiet, {
        inProcess: true,
        onListed(checkouts) {
          listed = checkouts
          progress()
        },
      }),
    ),
    traced(trace, 'local: sandbox offsets', async () => sandboxOffsets(quiet, backends, notes)),
    states,
  ])
  done = true
  // Clashes as listIdentities finds them (DESIGN.md §3.4): main has none; a sandbox of a
  // worktree's name is that worktree's identity, never a clash.
  const names = new Set(rows.map((row) => row.name))
  const clashes = findClashes([
    ...rows.filter((row) => row.name !== 'main'),
    ...sandboxes.filter((sandbox) => !names.has(sandbox.name)),
  ])
  const targets = new Map((listed ?? []).map((checkout) => [checkout.name, checkout.target]))
  const local = await Promise.all(
    rows.map(async (row): Promise<LocalRow> => {
      const target = targets.get(row.name)!
      // An untrusted worktree runs on a machine of its own: asked there.
      const states =
        row.trust === 'untrusted'
          ? await ownMachineStates(quiet, backends, target, budgetMs, trace)
          : await lookup.of(target)
      return {...row, ports: target.ports, clashesWith: target.isMain ? [] : (clashes.get(row.name) ?? []), ...states}
    }),
  )
  return {rows: local, notes}
}

/**
 * The states of an untrusted worktree, from its own machine (absent when that is not running;
 * unknown when it cannot be asked).
 */
async function ownMachineStates(
  context: YardContext,
  backends: Backends,
  target: Target,
  budgetMs: number,
  trace: Tracer,
): Promise<CheckoutStates> {
  try {
    const session = await traced(trace, `local: machine of ${target.name}`, async () =>
      openStack(context, backends, target.name),
    )
    return await (await stackStates(session, budgetMs, trace)).of(target)
  } catch {
    return {stack: UNKNOWN, box: UNKNOWN}
  }
}

/** Sandboxes as name and offset, for clashes; none (with a note) when no sandbox backend answers. */
async function sandboxOffsets(
  context: YardContext,
  backends: Backends,
  notes: string[],
): Promise<Array<{name: string; offset: number}>> {
  try {
    const session = await openSandboxes(context, backends)
    return (await session.backend.list(session.workspace.prefix, {timeoutMs: 2000, runtime: session.runtime})).map(
      ({name, offset}) => ({name, offset}),
    )
  } catch (error) {
    notes.push(`sandboxes left out: ${(error as Error).message}`)
    return []
  }
}

/**
 * Cluster mode (DESIGN.md §6): every sandbox (`listSandboxes`) with clashes against worktrees
 * and each cache's last fetch. No sandbox backend, or a runtime that fails: no rows and a note.
 */
export async function gatherCluster(
  context: YardContext,
  backends: Backends,
): Promise<{rows: ClusterRow[]; notes: string[]}> {
  const trace = dashboardTracer(context.env)
  const notes: string[] = []
  const quiet = {...context, warn: (message: string) => notes.push(message)}
  let sandboxes: SandboxListRow[]
  try {
    sandboxes = await traced(trace, 'cluster: sandbox list', async () => listSandboxes(quiet, backends))
  } catch (error) {
    notes.push(`sandboxes unavailable: ${(error as Error).message}`)
    return {rows: [], notes}
  }

  const workspace = await openWorkspace(quiet)
  const identities = await listIdentities(workspace, quiet, sandboxes)
  const clashes = new Map(identities.map((row) => [row.target.name, row.clashesWith]))
  // Freshness as sandbox list read it: the local cache on podman, the pod's node on a cluster.
  const rows = sandboxes.map((row) => ({
    ...row,
    clashesWith: clashes.get(row.name) ?? [],
    lastFetched: Object.fromEntries(row.repos.map((repo) => [repo.key, repo.lastFetched])),
  }))
  return {rows, notes}
}

/** One snapshot of a mode: what `yard dashboard --json` prints when stdout is not a terminal. */
export async function gatherSnapshot(
  context: YardContext,
  backends: Backends,
  mode: DashboardMode,
  options: {budgetMs?: number} = {},
): Promise<DashboardSnapshot> {
  const {rows, notes} =
    mode === 'local' ? await gatherLocal(context, backends, options) : await gatherCluster(context, backends)
  return {mode, rows, notes}
}
