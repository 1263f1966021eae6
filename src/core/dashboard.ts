/**
 * What `yard dashboard` shows (DESIGN.md §6, Appendix A): the rows of `worktree list` (local
 * mode) or `sandbox list` (cluster mode) plus stack and box states and clashes, gathered through
 * the same core services and registry as the commands, so a plugin backend shows up unchanged.
 * Each stack and box probe has a time budget: a slow backend gives `pending` cells, never a
 * frozen screen.
 */
import type {StackBackend, StackContainer, Target} from './backend.js'
import type {YardContext} from './context.js'
import {dashboardTracer, traced, Tracer} from './dashboard-trace.js'
import type {Registry} from './registry.js'
import {listSandboxes, openSandboxCache, openSandboxes, SandboxListRow} from './sandbox.js'
import {openStack} from './stack.js'
import {listWorktrees, WorktreeRow} from './worktree-list.js'
import {buildTarget, listIdentities, openWorkspace} from './workspace.js'

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

/** A probe bounded by `budgetMs`: `pending` when slower, `unknown` when it fails. */
async function probe(work: () => Promise<StackContainer[]>, budgetMs: number, trace: Tracer, label: string): Promise<RunState> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<RunState>((resolve) => {
    timer = setTimeout(() => resolve({state: 'pending', running: 0, total: 0}), budgetMs)
  })
  const answer = traced(trace, label, work).then(runState, () => ({state: 'unknown' as const, running: 0, total: 0}))
  try {
    return await Promise.race([answer, late])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Local mode (DESIGN.md §6): main and every worktree (`listWorktrees`), with `[ports]`, clashes
 * against worktrees and sandboxes, and the stack and box states from the configured stack
 * backend's `ps` (probed in parallel, each within `budgetMs`). A machine that is not running
 * makes every stack and box `absent` without asking the engine.
 * @throws InputError (exit 2) outside a repository or for invalid config.
 */
export async function gatherLocal(context: YardContext, registry: Registry, options: {budgetMs?: number} = {}): Promise<{rows: LocalRow[]; notes: string[]}> {
  const budgetMs = options.budgetMs ?? PROBE_BUDGET_MS
  const trace = dashboardTracer(context.env)
  const notes: string[] = []
  const quiet = {...context, warn: (message: string) => notes.push(message)}
  const [rows, workspace, session, sandboxes] = await Promise.all([
    traced(trace, 'local: worktree list', () => listWorktrees(quiet)),
    traced(trace, 'local: workspace', () => openWorkspace(quiet)),
    traced(trace, 'local: stack backend', () => openStack(quiet, registry, 'main')).catch((error: Error) => {
      notes.push(`stack states unknown: ${error.message}`)
      return undefined
    }),
    traced(trace, 'local: sandbox offsets', () => sandboxOffsets(quiet, registry, notes)),
  ])
  const identities = await traced(trace, 'local: identities', () => listIdentities(workspace, quiet, sandboxes))
  const byName = new Map(identities.map((row) => [row.target.name, row]))
  const stack: StackBackend | undefined = session?.running ? session.stack : undefined
  const absent: RunState = {state: session ? 'absent' : 'unknown', running: 0, total: 0}
  const local = await Promise.all(rows.map(async (row): Promise<LocalRow> => {
    const identity = byName.get(row.name)
    const target: Target = identity?.target ?? buildTarget(workspace, quiet, row.name, row.name === 'main', {useEnvOffset: false})
    const [stackState, boxState] = await Promise.all([
      stack ? probe(() => stack.ps(target), budgetMs, trace, `probe stack ${target.name}`) : absent,
      session && !session.stack.box ? null : stack?.box ? probe(() => stack.box!.ps(target), budgetMs, trace, `probe box ${target.name}`) : absent,
    ])
    return {...row, ports: target.ports, clashesWith: identity?.clashesWith ?? [], stack: stackState, box: boxState}
  }))
  return {rows: local, notes}
}

/** Sandboxes as name and offset, for clashes; none (with a note) when no sandbox backend answers. */
async function sandboxOffsets(context: YardContext, registry: Registry, notes: string[]): Promise<Array<{name: string; offset: number}>> {
  try {
    const session = await openSandboxes(context, registry)
    return (await session.backend.list(session.workspace.prefix, {timeoutMs: 2000, runtime: session.runtime})).map(({name, offset}) => ({name, offset}))
  } catch (error) {
    notes.push(`sandboxes left out: ${(error as Error).message}`)
    return []
  }
}

/**
 * Cluster mode (DESIGN.md §6): every sandbox (`listSandboxes`) with clashes against worktrees
 * and each cache's last fetch. No sandbox backend, or a runtime that fails: no rows and a note.
 */
export async function gatherCluster(context: YardContext, registry: Registry): Promise<{rows: ClusterRow[]; notes: string[]}> {
  const trace = dashboardTracer(context.env)
  const notes: string[] = []
  const quiet = {...context, warn: (message: string) => notes.push(message)}
  let sandboxes: SandboxListRow[]
  try {
    sandboxes = await traced(trace, 'cluster: sandbox list', () => listSandboxes(quiet, registry))
  } catch (error) {
    notes.push(`sandboxes unavailable: ${(error as Error).message}`)
    return {rows: [], notes}
  }
  const workspace = await openWorkspace(quiet)
  const [identities, fetched] = await Promise.all([
    listIdentities(workspace, quiet, sandboxes),
    openSandboxCache(quiet, registry, workspace).then(({cache, root}) => cache.list(root)).catch(() => []),
  ])
  const clashes = new Map(identities.map((row) => [row.target.name, row.clashesWith]))
  const lastFetched = new Map(fetched.map((row) => [row.key, row.lastFetched ?? null]))
  const rows = sandboxes.map((row) => ({
    ...row,
    clashesWith: clashes.get(row.name) ?? [],
    lastFetched: Object.fromEntries(row.repos.map((repo) => [repo.key, lastFetched.get(repo.key) ?? null])),
  }))
  return {rows, notes}
}

/** One snapshot of a mode: what `yard dashboard --json` prints when stdout is not a terminal. */
export async function gatherSnapshot(context: YardContext, registry: Registry, mode: DashboardMode, options: {budgetMs?: number} = {}): Promise<DashboardSnapshot> {
  const {rows, notes} = mode === 'local' ? await gatherLocal(context, registry, options) : await gatherCluster(context, registry)
  return {mode, rows, notes}
}
