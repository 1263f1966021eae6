/**
 * What the dashboard draws for a state (DESIGN.md §6 and §9, docs/dashboard.md): every line of the
 * screen as text, fitted to the terminal's size. Pure: the component only turns these lines into
 * Ink elements.
 */
import type {ClusterRow, LocalRow} from '../core/dashboard/index.js'
import type {DashboardState, Row} from './dashboard-state.js'

import {detailPaneLines} from './dashboard-detail.js'
import {layoutScreen} from './dashboard-layout.js'
import {clusterColumns, LOCAL_COLUMNS, tableLines} from './dashboard-table.js'
import {filterRows, HELP_LINES, selectionIn, sortRows, statusLayout} from './dashboard-view.js'

/** The screen's lines, top to bottom; `start` is the first row of the table's window. */
export interface Frame {
  /** Lines the screen takes: the terminal's rows - 1 so Ink never scrolls. */
  height: number
  title?: string
  header?: string
  /** Instead of rows: "…" while none came, or why there are none. */
  message?: string
  rows: Array<{key: string; text: string; chosen: boolean}>
  more?: string
  panes: string[]
  status: string[]
  start: number
}

/** The rows on the screen (sorted, filtered) and the index of the selected one. */
export function viewOf(state: DashboardState): {current: Row[]; chosen: number} {
  const current = filterRows(sortRows(state.rows[state.mode] ?? [], state.mode), state.filter)
  return {current, chosen: selectionIn(current, state.selection.name, state.selection.index)}
}

/** The frame of `state` at its size. */
export function frameOf(state: DashboardState): Frame {
  const {mode, filter, phase, details} = state
  const {columns, rows: height} = state.size
  const {current, chosen} = viewOf(state)
  const lines =
    mode === 'local'
      ? tableLines(LOCAL_COLUMNS, current as LocalRow[], columns - 3)
      : tableLines(clusterColumns(), current as ClusterRow[], columns - 3)
  // The pane follows the row it was opened on (by name), or closes when that row is gone.
  const detailRow = details ? current.find((candidate) => candidate.name === details.name) : undefined
  const title = `yard dashboard — ${mode === 'local' ? 'local worktrees' : 'cluster sandboxes'}  (Tab: ${mode === 'local' ? 'cluster' : 'local'}, ? help, q quit)`
  const statusText =
    phase.kind === 'naming'
      ? `new ${mode === 'local' ? 'worktree' : 'sandbox'}: ${phase.text}▏ ${state.status}`
      : filter || phase.kind === 'filtering'
        ? `/${filter}  ${state.status}`
        : state.status
  // A long message wraps, its end (the question, the fix) always on screen; longer ones go whole into a pane.
  const statusShown = statusLayout(statusText, columns)
  const panes = [
    ...statusShown.pane,
    ...(detailRow ? [' ', ...detailPaneLines(mode, detailRow, details?.facts, details?.error)] : []),
    ...(state.help ? HELP_LINES : []),
  ]
  // Never more lines than the screen has: Ink would squeeze or overlap them (DESIGN.md §9).
  const screenHeight = Math.max(height - 1, 2)
  const layout = layoutScreen({
    height: Math.max(screenHeight - statusShown.lines.length + 1, 2),
    rowCount: current.length,
    selected: chosen,
    start: state.window,
    panes,
  })
  const message =
    state.rows[mode] === undefined
      ? '…'
      : current.length === 0
        ? filter
          ? `nothing matches /${filter}`
          : mode === 'local'
            ? 'no checkouts'
            : "no sandboxes: n makes one (of this project's repository)"
        : undefined
  return {
    height: screenHeight,
    title: layout.title ? title : undefined,
    header: layout.header ? `  ${lines[0]}` : undefined,
    message,
    // A mark as well as inverse video: it survives NO_COLOR and plain captures.
    rows: lines.slice(1 + layout.start, 1 + layout.start + layout.shown).map((text, offset) => {
      const index = layout.start + offset
      return {
        key: `row:${current[index].name}`,
        text: `${index === chosen ? '›' : ' '} ${text}`,
        chosen: index === chosen,
      }
    }),
    more: layout.more === undefined ? undefined : `  ${layout.more}`,
    panes: layout.panes,
    status: statusShown.lines,
    start: layout.start,
  }
}
