/**
 * The dashboard screen (DESIGN.md §6): a table of local rows (main and worktrees) or cluster rows
 * (sandboxes), a selection, a status line and the keys. It only draws: the keys go to the reducer
 * of dashboard-state.ts, the effects to dashboard-effects.ts, the lines come from dashboard-frame.ts.
 * It gets its data and actions as callbacks (`DashboardServices`) and never reaches core or a
 * backend itself.
 */
import {Box, Text, useApp, useInput, useStdin, useWindowSize} from 'ink'
// React in scope: dev runs transpile JSX without this tsconfig when started from another directory.
import React from 'react'

import type {DashboardServices} from './dashboard-effects.js'
import type {DashboardExit} from './dashboard-state.js'

import {useDashboard} from './dashboard-effects.js'
import {frameOf} from './dashboard-frame.js'

export type {DashboardServices} from './dashboard-effects.js'
export type {DashboardExit} from './dashboard-state.js'
export {HELP_LINES} from './dashboard-view.js'

export interface DashboardAppProps {
  services: DashboardServices
  initialMode: DashboardExit['mode']
  initialSelected?: number
  /** Refresh period in milliseconds (DESIGN.md §6: 2 s); 0 turns the timer off. */
  intervalMs?: number
  /** How long an outcome stays in the status line, ms (questions, prompts and work under way stay). */
  statusFadeMs?: number
  onExit(exit: DashboardExit): void
}

/** The dashboard: sized to the terminal's rows - 1 so Ink never scrolls (DESIGN.md §9). */
export function DashboardApp(props: DashboardAppProps) {
  const {exit} = useApp()
  const {isRawModeSupported} = useStdin()
  const {columns, rows} = useWindowSize()
  const leave = (value: DashboardExit) => {
    props.onExit(value)
    exit()
  }

  const [state, dispatch] = useDashboard({...props, leave}, {columns, rows})
  // Keys typed faster than the screen reads them arrive as one string ("jjk", "\x7f\x7f"): one at
  // a time, each with the key it is (Ink parses only a whole chunk).
  useInput(
    (input, key) => {
      const plain = input.length > 1 && !key.ctrl && !key.meta && !input.startsWith('\u001B')
      if (!plain) return dispatch({type: 'key', press: {...key, input}})
      for (const char of input)
        dispatch({
          type: 'key',
          press: {
            ...key,
            input: char,
            backspace: char === '\b',
            delete: char === '\u007F',
            return: char === '\r',
            tab: char === '\t',
          },
        })
    },
    {isActive: isRawModeSupported},
  )

  // The live size: a resize is drawn at once; the reducer settles the window on its event.
  const frame = frameOf({...state, size: {columns, rows}})
  const line = (key: string, text: string, extra: {bold?: boolean; inverse?: boolean} = {}) => (
    <Text key={key} wrap="truncate" {...extra}>
      {text}
    </Text>
  )
  return (
    <Box flexDirection="column" height={frame.height} overflow="hidden" width={columns}>
      {frame.title === undefined ? null : line('title', frame.title, {bold: true})}
      {frame.header === undefined ? null : line('header', frame.header)}
      {frame.message === undefined ? null : line('message', frame.message)}
      {frame.rows.map((row) => line(row.key, row.text, {inverse: row.chosen}))}
      {frame.more === undefined ? null : line('more', frame.more)}
      {frame.panes.map((text, index) => line(`pane:${index}`, text))}
      <Box flexGrow={1} />
      {frame.status.map((text, index) => line(`status:${index}`, text))}
    </Box>
  )
}
