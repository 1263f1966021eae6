/**
 * The dashboard screen (DESIGN.md §6): a table of local rows (main and worktrees) or cluster rows
 * (sandboxes), a selection, a status line and the keys. It gets its data and actions as
 * callbacks (`DashboardServices`) and never reaches core or a backend itself.
 */
import {Box, Text, useApp, useInput, useStdin, useStdout} from 'ink'
// React in scope: dev runs transpile JSX without this tsconfig when started from another directory.
import React, {useCallback, useEffect, useRef, useState} from 'react'

import type {ClusterRow, DashboardMode, LocalRow} from '../core/dashboard.js'
import type {CheckoutDetails} from '../core/dashboard-details.js'
import {detailPaneLines} from './dashboard-detail.js'
import {clusterColumns, LOCAL_COLUMNS, tableLines} from './dashboard-table.js'

/** What the screen can ask for. Every call may reject; the message goes to the status line. */
export interface DashboardServices {
  /** The rows of a mode; `onProgress` may get them earlier with "…" cells while probes run. */
  load(mode: DashboardMode, onProgress?: (rows: LocalRow[] | ClusterRow[]) => void): Promise<{rows: LocalRow[] | ClusterRow[]; notes: string[]}>
  /** Resolves with what happened, warnings (a fixed host port…) included. */
  up(name: string): Promise<string>
  down(name: string): Promise<string>
  /** The remove plan as one line; rejects with the refusal (unsaved work, counts) when it must not go ahead. */
  planRemove(name: string): Promise<string>
  remove(name: string): Promise<string>
  /** Why `name` cannot name a new worktree or sandbox (core's name rule, DESIGN.md §3.1), or undefined. */
  checkName(name: string): string | undefined
  /** Creates worktree (local) or sandbox (cluster) `name`; resolves with what was made. */
  create(mode: DashboardMode, name: string): Promise<string>
  /** The detail pane's facts of a local row: containers and ports, recent logs, git status. */
  details(name: string): Promise<CheckoutDetails>
}

/** Why the screen ended: quit (with its exit code), or a shell asked for in a row. */
export type DashboardExit = {kind: 'quit'; code: number; mode: DashboardMode; selected: number} | {kind: 'shell'; name: string; mode: DashboardMode; selected: number}

export interface DashboardAppProps {
  services: DashboardServices
  initialMode: DashboardMode
  initialSelected?: number
  /** Refresh period in milliseconds (DESIGN.md §6: 2 s); 0 turns the timer off. */
  intervalMs?: number
  onExit(exit: DashboardExit): void
}

export const HELP_LINES = [
  '↑/↓ j/k  select          Tab  local ⇄ cluster',
  'u  stack up              d    stack down',
  'x  remove (asks first)   e    shell in the box or sandbox',
  'r  refresh now           /    filter by name or branch',
  'n  new worktree/sandbox  Enter  details of the row',
  '?  this help',
  'q  quit                  Ctrl-C  quit',
]

/** The terminal's size, following resizes through one subscription on stdout (DESIGN.md §9). */
function useTerminalSize(): {columns: number; rows: number} {
  const {stdout} = useStdout()
  const [size, setSize] = useState({columns: stdout.columns || 80, rows: stdout.rows || 24})
  useEffect(() => {
    const onResize = () => setSize({columns: stdout.columns || 80, rows: stdout.rows || 24})
    stdout.on('resize', onResize)
    return () => {
      stdout.off('resize', onResize)
    }
  }, [stdout])
  return size
}

const errorText = (error: unknown) => {
  const failure = error as {message?: string; fix?: string}
  return `${failure.message ?? String(error)}${failure.fix ? ` — fix: ${failure.fix}` : ''}`
}

/** The dashboard: sized to the terminal's rows - 1 so Ink never scrolls (DESIGN.md §9). */
export function DashboardApp(props: DashboardAppProps) {
  const {services} = props
  const {exit} = useApp()
  const {isRawModeSupported} = useStdin()
  const {columns, rows: height} = useTerminalSize()
  const [mode, setMode] = useState<DashboardMode>(props.initialMode)
  const [rows, setRows] = useState<Record<DashboardMode, LocalRow[] | ClusterRow[] | undefined>>({local: undefined, cluster: undefined})
  const [selected, setSelected] = useState(props.initialSelected ?? 0)
  const [status, setStatus] = useState('loading…')
  const [help, setHelp] = useState(false)
  // The detail pane: closed (undefined), or open on a row with its facts once they came.
  const [details, setDetails] = useState<{name: string; facts?: CheckoutDetails; error?: string} | undefined>(undefined)
  // Which row's pane is open, for key handlers of older renders (as `confirming`).
  const detailsOf = useRef<string | undefined>(undefined)
  // The `n` prompt's text while it is open; a ref for the handler, a state for the screen.
  const naming = useRef<string | undefined>(undefined)
  const [prompt, setPrompt] = useState<string | undefined>(undefined)
  // Which worktree's removal waits for y/N; a ref, as keys may reach a handler of an older render.
  const confirming = useRef<string | undefined>(undefined)
  const modeRef = useRef(mode)
  modeRef.current = mode

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
  const all = rows[mode] ?? []
  const current = filter === '' ? all : (all as Array<{name: string; branch?: string | null}>).filter((row) => row.name.includes(filter) || (row.branch ?? '').includes(filter)) as typeof all
  // Keys can arrive between a render and Ink re-registering the input handler: the handler reads
  // the latest rows through this ref, never the ones of the render that created it.
  const latest = useRef({current, selected})
  latest.current = {current, selected}
  const leave = (value: DashboardExit) => {
    props.onExit(value)
    exit()
  }

  const selectedRow = () => {
    const view = latest.current
    return view.current[Math.min(view.selected, view.current.length - 1)] as {name: string} | undefined
  }

  const act = (verb: string, work: (name: string) => Promise<string>, named?: string) => {
    const name = named ?? selectedRow()?.name
    if (name === undefined) return
    setStatus(`${verb} ${name}…`)
    // An action that throws at once is reported like one that rejects: never out of the key handler.
    Promise.resolve().then(() => work(name)).then(
      (message) => {
        setStatus(message)
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
        act(`creating ${which === 'local' ? 'worktree' : 'sandbox'}`, () => services.create(which, text), text)
      } else if (key.backspace || key.delete) {
        showPrompt(text.slice(0, -1))
      } else if (input && !key.ctrl && !key.meta && !key.tab && !input.startsWith('\u001B')) {
        showPrompt(text + input)
      }
      return
    }
    if (confirming.current !== undefined) {
      const name = confirming.current
      confirming.current = undefined
      if (input === 'y') act('removing', () => services.remove(name))
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
        latest.current.selected = 0
        setSelected(0)
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
      setSelected(0)
      // A pane belongs to a row of the mode left behind.
      detailsOf.current = undefined
      setDetails(undefined)
      return
    }
    const move = (index: number) => {
      latest.current.selected = index
      setSelected(index)
    }
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
    else if (input === 'u' && mode === 'local') act('bringing up', services.up)
    else if (input === 'd' && mode === 'local') act('bringing down', services.down)
    else if (input === 'x' && mode === 'local' && row) {
      if (row.name === 'main') return setStatus('the main checkout is never removed')
      const name = row.name
      setStatus(`planning the removal of ${name}…`)
      Promise.resolve().then(() => services.planRemove(name)).then((plan) => {
        confirming.current = name
        setStatus(`${plan} — remove ${name}? y/N`)
      }, (error: unknown) => setStatus(`remove ${name} refused: ${errorText(error)}`))
    } else if (input === 'e' && row) leave({kind: 'shell', name: row.name, mode, selected: latest.current.selected})
  }

  const lines = mode === 'local' ? tableLines(LOCAL_COLUMNS, current as LocalRow[], columns - 3) : tableLines(clusterColumns(), current as ClusterRow[], columns - 3)
  // The pane follows the row it was opened on (by name), or closes when that row is gone.
  const detailRow = details ? (current as Array<LocalRow | ClusterRow>).find((candidate) => candidate.name === details.name) : undefined
  const title = `yard dashboard — ${mode === 'local' ? 'local worktrees' : 'cluster sandboxes'}  (Tab: ${mode === 'local' ? 'cluster' : 'local'}, ? help, q quit)`
  return (
    <Box flexDirection="column" width={columns} height={Math.max(height - 1, 3)}>
      <Text bold wrap="truncate">{title}</Text>
      <Text wrap="truncate">{`  ${lines[0]}`}</Text>
      {rows[mode] === undefined ? <Text>…</Text> : current.length === 0 ? <Text>{filter ? `nothing matches /${filter}` : mode === 'local' ? 'no checkouts' : 'no sandboxes'}</Text> : null}
      {lines.slice(1).map((line, index) => {
        const chosen = index === Math.min(selected, current.length - 1)
        // A mark as well as inverse video: it survives NO_COLOR and plain captures.
        return (
          <Text key={(current[index] as {name: string}).name} inverse={chosen} wrap="truncate">
            {`${chosen ? '›' : ' '} ${line}`}
          </Text>
        )
      })}
      {detailRow ? <Text> </Text> : null}
      {detailRow ? detailPaneLines(mode, detailRow, details?.facts, details?.error).map((line, index) => <Text key={`${index}:${line}`} wrap="truncate">{line}</Text>) : null}
      {help ? HELP_LINES.map((line) => <Text key={line} wrap="truncate">{line}</Text>) : null}
      <Box flexGrow={1} />
      <Text wrap="truncate">{prompt !== undefined ? `new ${mode === 'local' ? 'worktree' : 'sandbox'}: ${prompt}▏ ${status}` : filter || filtering.current ? `/${filter}  ${status}` : status}</Text>
    </Box>
  )
}
