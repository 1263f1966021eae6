/**
 * The dashboard as a reducer (DESIGN.md §6, docs/dashboard.md): its state, what can happen to it
 * (keys, rows loaded, work done, a message's time up) and, for each, the next state and the
 * effects the screen then performs (load rows, run a command, start a fade, leave). No Ink, no
 * timers, no promises here: `reduce` is pure, so its rules are tested table by table.
 */
import type {CheckoutDetails, ClusterRow, DashboardMode, LocalRow} from '../core/dashboard/index.js'

import {frameOf, viewOf} from './dashboard-frame.js'
import {KEY_TABLE, shellProblem} from './dashboard-view.js'

/** A row of the table: a checkout (local mode) or a sandbox (cluster mode). */
export type Row = LocalRow | ClusterRow

/** Why the screen ended: quit (with its exit code), or a shell or the logs asked for in a row. */
export type DashboardExit =
  | {kind: 'quit'; code: number; mode: DashboardMode; selected: number}
  | {kind: 'shell' | 'logs'; name: string; mode: DashboardMode; selected: number}

/** What the keys go to: the table, the `n` prompt, a removal's y/N, or the `/` filter being typed. */
export type Phase =
  | {kind: 'browse'}
  | {kind: 'naming'; text: string}
  | {kind: 'confirming'; name: string; mode: DashboardMode}
  | {kind: 'filtering'}

/** Everything the screen shows, besides the terminal itself. */
export interface DashboardState {
  phase: Phase
  mode: DashboardMode
  rows: Record<DashboardMode, Row[] | undefined>
  /**
   * The selected index, and the selected row's name: the selection follows the name through
   * refreshes, sorting and filters.
   */
  selection: {index: number; name?: string}
  /** The first row of the table's window; it moves only as far as keeping the selection visible needs. */
  window: number
  /** The detail pane: closed (undefined), or open on a row with its facts once they came. */
  details?: {name: string; facts?: CheckoutDetails; error?: string}
  help: boolean
  filter: string
  status: string
  /** Counts changes of `status`, so a fade ends only the message it was started for. */
  statusSeq: number
  /** One gather per mode at a time: a slow backend must not pile up probes on every tick. */
  loading: Record<DashboardMode, boolean>
  /** The terminal's columns and rows. */
  size: {columns: number; rows: number}
}

/** A key as Ink reports it (the fields the screen reads). */
export interface Keypress {
  input: string
  ctrl?: boolean
  meta?: boolean
  escape?: boolean
  return?: boolean
  backspace?: boolean
  delete?: boolean
  tab?: boolean
  upArrow?: boolean
  downArrow?: boolean
}

/** What happens to the screen: a key, a timer's tick, an effect's outcome, a new terminal size. */
export type DashboardEvent =
  | {type: 'key'; press: Keypress}
  | {type: 'tick'}
  | {type: 'early'; mode: DashboardMode; rows: Row[]}
  | {type: 'loaded'; mode: DashboardMode; rows: Row[]; notes: string[]; announce: boolean}
  | {type: 'loadFailed'; mode: DashboardMode; error: string}
  | {type: 'done'; message: string; select?: {mode: DashboardMode; name: string}}
  | {type: 'failed'; message: string}
  | {type: 'planned'; name: string; mode: DashboardMode; plan: string}
  | {type: 'refused'; name: string; error: string}
  | {type: 'details'; name: string; facts?: CheckoutDetails; error?: string}
  | {type: 'fade'; seq: number}
  | {type: 'resize'; columns: number; rows: number}

/** A command of the services the screen runs; `create` selects the new row once it is there. */
export type Work = 'up' | 'down' | 'boxUp' | 'remove' | 'create'

/** What the screen must do after a step; its outcome comes back as a `DashboardEvent`. */
export type Effect =
  | {kind: 'load'; mode: DashboardMode; announce: boolean}
  | {kind: 'run'; work: Work; name: string; mode: DashboardMode}
  | {kind: 'plan'; name: string; mode: DashboardMode}
  | {kind: 'details'; name: string}
  | {kind: 'fade'; seq: number}
  | {kind: 'exit'; exit: DashboardExit}

/** A state and the effects to perform, in order. */
export interface Step {
  state: DashboardState
  effects: Effect[]
}

/** What the reducer asks of the world that is itself pure: core's name rule (DESIGN.md §3.1). */
export interface ReduceContext {
  checkName(name: string): string | undefined
}

/**
 * The screen before its first rows: `selected` is the row index to start on, `size` the terminal's
 * columns and rows.
 */
export function initialState(
  mode: DashboardMode,
  selected: number,
  size: {columns: number; rows: number},
): DashboardState {
  return {
    phase: {kind: 'browse'},
    mode,
    rows: {local: undefined, cluster: undefined},
    selection: {index: selected},
    window: 0,
    help: false,
    filter: '',
    status: 'loading…',
    statusSeq: 0,
    loading: {local: false, cluster: false},
    size,
  }
}

/**
 * The next state after `event` and the effects to perform, in order. The window is settled here
 * (from the layout of the next state), so rendering never writes it. Throws what drawing a row
 * throws (a row's cell that cannot be drawn); the screen then ends as after a render that throws.
 */
export function reduce(state: DashboardState, event: DashboardEvent, context: ReduceContext): Step {
  const step = apply(state, event, context)
  const next = step.state
  const effects = [...step.effects]
  let settled = next
  if (next.status !== state.status) {
    settled = {...settled, statusSeq: state.statusSeq + 1}
    // An outcome fades; a question, a prompt, a filter and work under way ("…") stay.
    if (next.status !== '' && !next.status.endsWith('…')) effects.push({kind: 'fade', seq: settled.statusSeq})
  }

  const {start} = frameOf(settled)
  return {state: start === settled.window ? settled : {...settled, window: start}, effects}
}

const done = (state: DashboardState, ...effects: Effect[]): Step => ({state, effects})
const say = (state: DashboardState, status: string, ...effects: Effect[]): Step => done({...state, status}, ...effects)

/** A load of `mode` unless one is under way; `announce` says "refreshing…" first (the `r` key). */
function load(state: DashboardState, mode: DashboardMode, announce = false): Step {
  if (state.loading[mode]) return done(state)
  return done(
    {...state, loading: {...state.loading, [mode]: true}, status: announce ? 'refreshing…' : state.status},
    {kind: 'load', mode, announce},
  )
}

function apply(state: DashboardState, event: DashboardEvent, context: ReduceContext): Step {
  switch (event.type) {
    case 'key': {
      return onKey(state, event.press, context)
    }

    case 'tick': {
      return load(state, state.mode)
    }

    // Rows with "…" cells only while there are none yet: later refreshes keep the last full rows.
    case 'early': {
      return done(
        state.rows[event.mode] === undefined ? {...state, rows: {...state.rows, [event.mode]: event.rows}} : state,
      )
    }

    case 'loaded': {
      const next = {
        ...state,
        rows: {...state.rows, [event.mode]: event.rows},
        loading: {...state.loading, [event.mode]: false},
      }
      const waiting = state.mode === event.mode && (state.status === 'loading…' || state.status === 'refreshing…')
      return done(waiting ? {...next, status: event.notes.join('; ') || (event.announce ? 'refreshed' : '')} : next)
    }

    case 'loadFailed': {
      return say({...state, loading: {...state.loading, [event.mode]: false}}, event.error)
    }

    case 'done': {
      const select =
        event.select && event.select.mode === state.mode
          ? {...state.selection, name: event.select.name}
          : state.selection
      return load({...state, status: event.message, selection: select}, state.mode)
    }

    case 'failed': {
      return say(state, event.message)
    }

    case 'planned': {
      const phase: Phase =
        state.phase.kind === 'browse' ? {kind: 'confirming', name: event.name, mode: event.mode} : state.phase
      return say({...state, phase}, `${event.plan} — remove ${event.name}? y/N`)
    }

    case 'refused': {
      return say(state, `remove ${event.name} refused: ${event.error}`)
    }

    case 'details': {
      return done(
        state.details?.name === event.name
          ? {...state, details: {name: event.name, facts: event.facts, error: event.error}}
          : state,
      )
    }

    case 'fade': {
      return done(event.seq === state.statusSeq && state.phase.kind === 'browse' ? {...state, status: ''} : state)
    }

    case 'resize': {
      return done({...state, size: {columns: event.columns, rows: event.rows}})
    }
  }
}

const quit = (state: DashboardState, code: number): Step =>
  done(state, {kind: 'exit', exit: {kind: 'quit', code, mode: state.mode, selected: viewOf(state).chosen}})
const typed = (press: Keypress) => press.input !== '' && !press.ctrl && !press.meta

function onKey(state: DashboardState, press: Keypress, context: ReduceContext): Step {
  if (press.ctrl && press.input === 'c') return quit(state, 130)
  const {phase} = state
  if (phase.kind === 'naming') return onNaming(state, phase.text, press, context)
  if (phase.kind === 'confirming') {
    const browsing: DashboardState = {...state, phase: {kind: 'browse'}}
    if (press.input === 'y') return run(browsing, 'removing', 'remove', phase.name, phase.mode)
    return say(browsing, `remove ${phase.name}: declined, nothing was changed`)
  }

  if (phase.kind === 'filtering') {
    if (press.return || press.escape)
      return say({...state, phase: {kind: 'browse'}, filter: press.escape ? '' : state.filter}, '')
    if (press.backspace || press.delete) return done({...state, filter: state.filter.slice(0, -1)})
    return done(typed(press) ? {...state, filter: state.filter + press.input} : state)
  }

  // Esc in the table: the help first, then a filter kept with Enter.
  if (press.escape)
    return state.help || state.filter === ''
      ? done({...state, help: false})
      : say({...state, filter: ''}, 'filter cleared')
  const entry = KEY_TABLE.find((candidate) => BINDINGS[candidate.key].matches(press))
  if (entry === undefined) return done(state)
  if (!entry.modes.includes(state.mode))
    return say(state, entry.elsewhere ?? `${press.input} does nothing in ${state.mode} mode`)
  return BINDINGS[entry.key].act(state, press, context)
}

function nameCheck(state: DashboardState, name: string, context: ReduceContext): string | undefined {
  if (name === '') return 'type a name'
  return (
    context.checkName(name) ??
    ((state.rows[state.mode] ?? []).some((row) => row.name === name) ? `${name} already exists` : undefined)
  )
}

function prompt(state: DashboardState, text: string, context: ReduceContext): Step {
  const problem = nameCheck(state, text, context)
  const what = state.mode === 'local' ? 'worktree' : 'sandbox'
  return say(
    {...state, phase: {kind: 'naming', text}},
    problem
      ? `✗ ${problem}`
      : `✓ Enter creates ${what} ${text}${state.mode === 'local' ? ` on branch wt/${text}` : ''}; Esc cancels`,
  )
}

function onNaming(state: DashboardState, text: string, press: Keypress, context: ReduceContext): Step {
  if (press.escape) return say({...state, phase: {kind: 'browse'}}, 'new: cancelled')
  if (press.return) {
    const problem = nameCheck(state, text, context)
    if (problem) return say(state, `✗ ${problem}`)
    return run(
      {...state, phase: {kind: 'browse'}},
      `creating ${state.mode === 'local' ? 'worktree' : 'sandbox'}`,
      'create',
      text,
      state.mode,
    )
  }

  if (press.backspace || press.delete) return prompt(state, text.slice(0, -1), context)
  if (typed(press) && !press.tab && !press.input.startsWith('\u001B')) return prompt(state, text + press.input, context)
  return done(state)
}

function run(state: DashboardState, verb: string, work: Work, name: string, mode: DashboardMode): Step {
  return say(state, `${verb} ${name}…`, {kind: 'run', work, name, mode})
}

const selectedRow = (state: DashboardState): Row | undefined => {
  const {current, chosen} = viewOf(state)
  return current[Math.min(chosen, current.length - 1)]
}

const move = (state: DashboardState, delta: number): Step => {
  const {current, chosen} = viewOf(state)
  const index = Math.max(0, Math.min(chosen + delta, Math.max(current.length - 1, 0)))
  return done({...state, selection: {index, name: current[index]?.name}})
}

/** A key that acts on the selected row: says so when there is none. */
const onRow =
  (act: (state: DashboardState, row: Row) => Step) =>
  (state: DashboardState, press: Keypress): Step => {
    const row = selectedRow(state)
    if (row) return act(state, row)
    return say(
      state,
      `${press.input}: there is no row selected${state.mode === 'cluster' ? ' (n makes a sandbox)' : ''}`,
    )
  }

const leave =
  (kind: 'shell' | 'logs') =>
  (state: DashboardState, row: Row): Step =>
    done(state, {kind: 'exit', exit: {kind, name: row.name, mode: state.mode, selected: viewOf(state).chosen}})

interface Binding {
  matches(press: Keypress): boolean
  act(state: DashboardState, press: Keypress, context: ReduceContext): Step
}

const letter = (char: string) => (press: Keypress) => press.input === char

/** What each key of `KEY_TABLE` does in the table (the browse phase); a test checks every key has one. */
export const BINDINGS: Record<string, Binding> = {
  '↑/↓ j/k': {
    matches: (press) => Boolean(press.downArrow || press.upArrow) || press.input === 'j' || press.input === 'k',
    act: (state, press) => move(state, press.downArrow || press.input === 'j' ? 1 : -1),
  },
  // A pane belongs to a row of the mode left behind.
  Tab: {
    matches: (press) => Boolean(press.tab),
    act: (state) =>
      done({...state, mode: state.mode === 'local' ? 'cluster' : 'local', selection: {index: 0}, details: undefined}),
  },
  Enter: {
    matches: (press) => Boolean(press.return),
    act(state) {
      const row = selectedRow(state)
      if (state.details !== undefined || !row) return done({...state, details: undefined})
      return done(
        {...state, details: {name: row.name}},
        ...(state.mode === 'local' ? [{kind: 'details', name: row.name} as const] : []),
      )
    },
  },
  n: {matches: letter('n'), act: (state, _press, context) => prompt(state, '', context)},
  u: {matches: letter('u'), act: onRow((state, row) => run(state, 'bringing up', 'up', row.name, state.mode))},
  d: {matches: letter('d'), act: onRow((state, row) => run(state, 'bringing down', 'down', row.name, state.mode))},
  b: {
    matches: letter('b'),
    act: onRow((state, row) => run(state, 'starting the box of', 'boxUp', row.name, state.mode)),
  },
  l: {matches: letter('l'), act: onRow(leave('logs'))},
  x: {
    matches: letter('x'),
    act: onRow((state, row) => {
      if (state.mode === 'local' && row.name === 'main') return say(state, 'the main checkout is never removed')
      return say(state, `planning the removal of ${row.name}…`, {kind: 'plan', name: row.name, mode: state.mode})
    }),
  },
  e: {
    matches: letter('e'),
    act: onRow((state, row) => {
      const problem = shellProblem(state.mode, row)
      return problem ? say(state, problem) : leave('shell')(state, row)
    }),
  },
  r: {matches: letter('r'), act: (state) => load(state, state.mode, true)},
  '/': {
    matches: letter('/'),
    act: (state) => say({...state, phase: {kind: 'filtering'}}, 'filter: type, Enter keeps it, Esc clears it'),
  },
  '?': {matches: letter('?'), act: (state) => done({...state, help: !state.help})},
  q: {matches: letter('q'), act: (state) => quit(state, 0)},
  'Ctrl-C': {matches: (press) => Boolean(press.ctrl) && press.input === 'c', act: (state) => quit(state, 130)},
}
