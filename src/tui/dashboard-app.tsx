/**
 * The dashboard screen (DESIGN.md §6): a table of local rows (main and worktrees) or cluster rows
 * (sandboxes), a selection, a status line and the keys. It gets its data and actions as
 * callbacks (`DashboardServices`) and never reaches core or a backend itself.
 */
import {Box, Text, useApp, useInput, useStdin, useWindowSize} from 'ink'
// React in scope: dev runs transpile JSX without this tsconfig when started from another directory.
import React, {useCallback, useEffect, useRef, useState} from 'react'

import type {ClusterRow, DashboardMode, LocalRow} from '../core/dashboard.js'
import type {CheckoutDetails} from '../core/dashboard-details.js'
import {detailPaneLines} from './dashboard-detail.js'
import {layoutScreen} from './dashboard-layout.js'
import {clusterColumns, LOCAL_COLUMNS, tableLines} from './dashboard-table.js'
import {filterRows, HELP_LINES, keyNotApplying, selectionIn, shellProblem, sortRows, statusLayout} from './dashboard-view.js'

export {HELP_KEYS, HELP_LINES, shellProblem} from './dashboard-view.js'

/** What the screen can ask for. Every call may reject; the message goes to the status line. */
export interface DashboardServices {
  /** The rows of a mode; `onProgress` may get them earlier with "…" cells while probes run. */
  load(mode: DashboardMode, onProgress?: (rows: LocalRow[] | ClusterRow[]) => void): Promise<{rows: LocalRow[] | ClusterRow[]; notes: string[]}>
  /** Resolves with what happened, warnings (a fixed host port…) included. */
  up(name: string): Promise<string>
  down(name: string): Promise<string>
  /**
   * The remove plan of worktree (local) or sandbox (cluster) `name` as one line; rejects with the
   * refusal (unsaved work, counts) when it must not go ahead.
   */
  planRemove(name: string, mode?: DashboardMode): Promise<string>
  remove(name: string, mode?: DashboardMode): Promise<string>
  /** Starts the box of checkout `name` (`yard box up`); resolves with what happened. */
  boxUp(name: string): Promise<string>
  /** Why `name` cannot name a new worktree or sandbox (core's name rule, DESIGN.md §3.1), or undefined. */
  checkName(name: string): string | undefined
  /** Creates worktree (local) or sandbox (cluster) `name`; resolves with what was made. */
  create(mode: DashboardMode, name: string): Promise<string>
  /** The detail pane's facts of a local row: containers and ports, recent logs, git status. */
  details(name: string): Promise<CheckoutDetails>
}

/** Why the screen ended: quit (with its exit code), or a shell or the logs asked for in a row. */
export type DashboardExit = {kind: 'quit'; code: number; mode: DashboardMode; selected: number} | {kind: 'shell' | 'logs'; name: string; mode: DashboardMode; selected: number}

export interface DashboardAppProps {
  services: DashboardServices
  initialMode: DashboardMode
  initialSelected?: number
  /** Refresh period in milliseconds (DESIGN.md §6: 2 s); 0 turns the timer off. */
  intervalMs?: number
  /** How long an outcome stays in the status line, ms (questions, prompts and work under way stay). */
  statusFadeMs?: number
  onExit(exit: DashboardExit): void
}

/** An outcome fades from the status line after this long (docs/dashboard.md). */
export const STATUS_FADE_MS = 10_000

const errorText = (error: unknown) => {
  const failure = error as {message?: string; fix?: string}
  return `${failure.message ?? String(error)}${failure.fix ? ` — fix: ${failure.fix}` : ''}`
}

/** The dashboard: sized to the terminal's rows - 1 so Ink never scrolls (DESIGN.md §9). */
export function DashboardApp(props: DashboardAppProps) {
  const {services} = props
  const {exit} = useApp()
  const {isRawModeSupported} = useStdin()
  const {columns, rows: height} = useWindowSize()
  const [mode, setMode] = useState<DashboardMode>(props.initialMode)
  const [rows, setRows] = useState<Record<DashboardMode, LocalRow[] | ClusterRow[] | undefined>>({local: undefined, cluster: undefined})
  const [selected, setSelected] = useState(props.initialSelected ?? 0)
  // The selected row's name: the selection stays on it through refreshes, sorting and filters,
  // and goes to a row just made once it appears.
  const selectedName = useRef<string | undefined>(undefined)
  const [status, setStatus] = useState('loading…')
  const [help, setHelp] = useState(false)
  // The detail pane: closed (undefined), or open on a row with its facts once they came.
  const [details, setDetails] = useState<{name: string; facts?: CheckoutDetails; error?: string} | undefined>(undefined)
  // Which row's pane is open, for key handlers of older renders (as `confirming`).
  const detailsOf = useRef<string | undefined>(undefined)
  // The `n` prompt's text while it is open; a ref for the handler, a state for the screen.
  const naming = useRef<string | undefined>(undefined)
  const [prompt, setPrompt] = useState<string | undefined>(undefined)
  // Which worktree's or sandbox's removal waits for y/N; a ref, as keys may reach a handler of an older render.
  const confirming = useRef<{name: string; mode: DashboardMode} | undefined>(undefined)
  const modeRef = useRef(mode)
  modeRef.current = mode
  // The first row of the table's window: it moves only as far as keeping the selection visible needs.
  const windowStart = useRef(0)

  // One gather per mode at a time: a slow backend must not pile up probes on every tick.
  const loading = useRef<Record<DashboardMode, boolean>>({local: false, cluster: false})
  const refresh = useCallback((which: DashboardMode, announce = false) => {
    if (loading.current[which]) return
    loading.current[which] = true
    if (announce) setStatus('refreshing…')
    // Rows with "…" cells only while there are none yet: later refreshes keep the last full rows.
    const early = (partial: LocalRow[] | ClusterRow[]) => setRows((current) => (current[which] === undefined ? {...current, [which]: partial} : current))
    services.load(which, early).then(
      (loaded) => {
        loading.current[which] = false
        setRows((current) => ({...current, [which]: loaded.rows}))
        if (modeRef.current === which) setStatus((current) => (current === 'loading…' || current === 'refreshing…' ? loaded.notes.join('; ') || (announce ? 'refreshed' : '') : current))
      },
      (error: unknown) => {
        loading.current[which] = false
        setStatus(errorText(error))
      },
    )
  }, [services])

  useEffect(() => {
    refresh(mode)
    if (!props.intervalMs) return
    const timer = setInterval(() => refresh(modeRef.current), props.intervalMs)
    return () => clearInterval(timer)
  }, [mode, refresh, props.intervalMs])

  const [filter, setFilter] = useState('')
  // Typing a filter after `/`: a ref, for the same reason as `confirming`.
  const filtering = useRef(false)
  const all = sortRows((rows[mode] ?? []) as Array<LocalRow | ClusterRow>, mode)
  const current = filterRows(all, filter)
  const chosenIndex = selectionIn(current, selectedName.current, selected)
  // Keys can arrive between a render and Ink re-registering the input handler: the handler reads
  // the latest rows through this ref, never the ones of the render that created it.
  const latest = useRef({current, selected: chosenIndex})
  latest.current = {current, selected: chosenIndex}

  // An outcome fades; a question, a prompt, a filter and work under way ("…") stay.
  useEffect(() => {
    const fadeMs = props.statusFadeMs ?? STATUS_FADE_MS
    if (status === '' || status.endsWith('…') || fadeMs <= 0) return
    const timer = setTimeout(() => setStatus((shown) => (shown === status && confirming.current === undefined && naming.current === undefined && !filtering.current ? '' : shown)), fadeMs)
    return () => clearTimeout(timer)
  }, [status, props.statusFadeMs])
  const leave = (value: DashboardExit) => {
    props.onExit(value)
    exit()
  }

  const selectedRow = () => {
    const view = latest.current
    return view.current[Math.min(view.selected, view.current.length - 1)] as {name: string} | undefined
  }

  const act = (verb: string, work: (name: string) => Promise<string>, named?: string, onDone?: () => void) => {
    const name = named ?? selectedRow()?.name
    if (name === undefined) return
    setStatus(`${verb} ${name}…`)
    // An action that throws at once is reported like one that rejects: never out of the key handler.
    Promise.resolve().then(() => work(name)).then(
      (message) => {
        setStatus(message)
        onDone?.()
        refresh(modeRef.current)
      },
      (error: unknown) => setStatus(errorText(error)),
    )
  }

  // Keys typed faster than the screen reads them arrive as one string ("jjk", "\x7f\x7f"): one at
  // a time, each with the key it is (Ink parses only a whole chunk).
  useInput((input, key) => {
    const plain = input.length > 1 && !key.ctrl && !key.meta && !input.startsWith('\u001B')
    if (!plain) return onKey(input, key)
    for (const char of input) onKey(char, {...key, backspace: char === '\b', delete: char === '\u007F', return: char === '\r', tab: char === '\t'})
  }, {isActive: isRawModeSupported})

  const nameCheck = (name: string) => services.checkName(name) ?? ((rows[modeRef.current] ?? []).some((row) => row.name === name) ? `${name} already exists` : undefined)
  const showPrompt = (text: string) => {
    naming.current = text
    setPrompt(text)
    const problem = text === '' ? 'type a name' : nameCheck(text)
    const what = modeRef.current === 'local' ? 'worktree' : 'sandbox'
    setStatus(problem ? `✗ ${problem}` : `✓ Enter creates ${what} ${text}${modeRef.current === 'local' ? ` on branch wt/${text}` : ''}; Esc cancels`)
  }

  const openDetails = (name: string) => {
    setDetails({name})
    if (modeRef.current !== 'local') return
    Promise.resolve().then(() => services.details(name)).then(
      (facts) => setDetails((shown) => (shown?.name === name ? {name, facts} : shown)),
      (error: unknown) => setDetails((shown) => (shown?.name === name ? {name, error: errorText(error)} : shown)),
    )
  }

  function onKey(input: string, key: Parameters<Parameters<typeof useInput>[0]>[1]) {
    const row = selectedRow()
    const count = latest.current.current.length
    if (key.ctrl && input === 'c') return leave({kind: 'quit', code: 130, mode, selected: latest.current.selected})
    if (naming.current !== undefined) {
      const text = naming.current
      if (key.escape) {
        naming.current = undefined
        setPrompt(undefined)
        setStatus('new: cancelled')
      } else if (key.return) {
        const problem = text === '' ? 'type a name' : nameCheck(text)
        if (problem) return setStatus(`✗ ${problem}`)
        naming.current = undefined
        setPrompt(undefined)
        const which = modeRef.current
        // The new row is selected once it is on the screen.
        act(`creating ${which === 'local' ? 'worktree' : 'sandbox'}`, () => services.create(which, text), text, () => {
          if (modeRef.current === which) selectedName.current = text
        })
      } else if (key.backspace || key.delete) {
        showPrompt(text.slice(0, -1))
      } else if (input && !key.ctrl && !key.meta && !key.tab && !input.startsWith('\u001B')) {
        showPrompt(text + input)
      }
      return
    }
    if (confirming.current !== undefined) {
      const {name, mode: which} = confirming.current
      confirming.current = undefined
      if (input === 'y') act('removing', () => services.remove(name, which), name)
      else setStatus(`remove ${name}: declined, nothing was changed`)
      return
    }
    if (filtering.current) {
      if (key.return || key.escape) {
        filtering.current = false
        if (key.escape) setFilter('')
        setStatus('')
      } else if (key.backspace || key.delete) {
        setFilter((text) => text.slice(0, -1))
      } else if (input && !key.ctrl && !key.meta) {
        setFilter((text) => text + input)
      }
      return
    }
    if (input === '/') {
      filtering.current = true
      return setStatus('filter: type, Enter keeps it, Esc clears it')
    }
    if (input === 'q') return leave({kind: 'quit', code: 0, mode, selected: latest.current.selected})
    if (key.tab) {
      setMode(mode === 'local' ? 'cluster' : 'local')
      latest.current.selected = 0
      selectedName.current = undefined
      setSelected(0)
      // A pane belongs to a row of the mode left behind.
      detailsOf.current = undefined
      setDetails(undefined)
      return
    }
    const move = (index: number) => {
      latest.current.selected = index
      selectedName.current = latest.current.current[index]?.name
      setSelected(index)
    }
    if (key.escape) {
      setHelp(false)
      return
    }
    const notHere = keyNotApplying(mode, input)
    if (notHere) return setStatus(notHere)
    if (key.downArrow || input === 'j') move(Math.min(latest.current.selected + 1, Math.max(count - 1, 0)))
    else if (key.upArrow || input === 'k') move(Math.max(latest.current.selected - 1, 0))
    else if (input === '?') setHelp((shown) => !shown)
    else if (key.return) {
      if (detailsOf.current !== undefined || !row) {
        detailsOf.current = undefined
        setDetails(undefined)
      } else {
        detailsOf.current = row.name
        openDetails(row.name)
      }
    } else if (input === 'n') showPrompt('')
    else if (input === 'r') refresh(mode, true)
    else if (!row && ['u', 'd', 'b', 'l', 'x', 'e'].includes(input)) setStatus(`${input}: there is no row selected${mode === 'cluster' ? ' (n makes a sandbox)' : ''}`)
    else if (input === 'u') act('bringing up', services.up)
    else if (input === 'd') act('bringing down', services.down)
    else if (input === 'b') act('starting the box of', services.boxUp)
    else if (input === 'l' && row) leave({kind: 'logs', name: row.name, mode, selected: latest.current.selected})
    else if (input === 'x' && row) {
      if (mode === 'local' && row.name === 'main') return setStatus('the main checkout is never removed')
      const name = row.name
      const which = mode
      setStatus(`planning the removal of ${name}…`)
      Promise.resolve().then(() => services.planRemove(name, which)).then((plan) => {
        confirming.current = {name, mode: which}
        setStatus(`${plan} — remove ${name}? y/N`)
      }, (error: unknown) => setStatus(`remove ${name} refused: ${errorText(error)}`))
    } else if (input === 'e' && row) {
      const problem = shellProblem(mode, row as LocalRow | ClusterRow)
      if (problem) return setStatus(problem)
      leave({kind: 'shell', name: row.name, mode, selected: latest.current.selected})
    }
  }

  const lines = mode === 'local' ? tableLines(LOCAL_COLUMNS, current as LocalRow[], columns - 3) : tableLines(clusterColumns(), current as ClusterRow[], columns - 3)
  // The pane follows the row it was opened on (by name), or closes when that row is gone.
  const detailRow = details ? (current as Array<LocalRow | ClusterRow>).find((candidate) => candidate.name === details.name) : undefined
  const title = `yard dashboard — ${mode === 'local' ? 'local worktrees' : 'cluster sandboxes'}  (Tab: ${mode === 'local' ? 'cluster' : 'local'}, ? help, q quit)`
  const statusText = prompt !== undefined ? `new ${mode === 'local' ? 'worktree' : 'sandbox'}: ${prompt}▏ ${status}` : filter || filtering.current ? `/${filter}  ${status}` : status
  // A long message wraps, its end (the question, the fix) always on screen; longer ones go whole into a pane.
  const statusShown = statusLayout(statusText, columns)
  const panes = [
    ...statusShown.pane,
    ...(detailRow ? [' ', ...detailPaneLines(mode, detailRow, details?.facts, details?.error)] : []),
    ...(help ? HELP_LINES : []),
  ]
  // Never more lines than the screen has: Ink would squeeze or overlap them (DESIGN.md §9).
  const screenHeight = Math.max(height - 1, 2)
  const layout = layoutScreen({height: Math.max(screenHeight - statusShown.lines.length + 1, 2), rowCount: current.length, selected: chosenIndex, start: windowStart.current, panes})
  windowStart.current = layout.start
  const message = rows[mode] === undefined ? '…' : current.length === 0 ? (filter ? `nothing matches /${filter}` : mode === 'local' ? 'no checkouts' : 'no sandboxes: n makes one (of this project\'s repository)') : undefined
  const line = (key: string, text: string, extra: {bold?: boolean; inverse?: boolean} = {}) => <Text key={key} wrap="truncate" {...extra}>{text}</Text>
  return (
    <Box flexDirection="column" width={columns} height={screenHeight} overflow="hidden">
      {layout.title ? line('title', title, {bold: true}) : null}
      {layout.header ? line('header', `  ${lines[0]}`) : null}
      {message === undefined ? null : line('message', message)}
      {lines.slice(1 + layout.start, 1 + layout.start + layout.shown).map((text, offset) => {
        const index = layout.start + offset
        const chosen = index === chosenIndex
        // A mark as well as inverse video: it survives NO_COLOR and plain captures.
        return line(`row:${(current[index] as {name: string}).name}`, `${chosen ? '›' : ' '} ${text}`, {inverse: chosen})
      })}
      {layout.more === undefined ? null : line('more', `  ${layout.more}`)}
      {layout.panes.map((text, index) => line(`pane:${index}`, text))}
      <Box flexGrow={1} />
      {statusShown.lines.map((text, index) => line(`status:${index}`, text))}
    </Box>
  )
}
