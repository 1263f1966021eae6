/**
 * The dashboard screen (DESIGN.md §6): a table of local rows (main and worktrees) or cluster rows
 * (sandboxes), a selection, a status line and the keys. It gets its data and actions as
 * callbacks (`DashboardServices`) and never reaches core or a backend itself.
 */
import {Box, Text, useApp, useInput, useStdin, useStdout} from 'ink'
// React in scope: dev runs transpile JSX without this tsconfig when started from another directory.
import React, {useCallback, useEffect, useRef, useState} from 'react'

import type {ClusterRow, DashboardMode, LocalRow} from '../core/dashboard.js'
import {clusterColumns, detailLines, LOCAL_COLUMNS, tableLines} from './dashboard-table.js'

/** What the screen can ask for. Every call may reject; the message goes to the status line. */
export interface DashboardServices {
  load(mode: DashboardMode): Promise<{rows: LocalRow[] | ClusterRow[]; notes: string[]}>
  up(name: string): Promise<string>
  down(name: string): Promise<string>
  /** The remove plan as one line; rejects with the refusal (unsaved work, counts) when it must not go ahead. */
  planRemove(name: string): Promise<string>
  remove(name: string): Promise<string>
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
  'Enter  details of the row',
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
  const [details, setDetails] = useState(false)
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
    services.load(which).then(
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

  const act = (verb: string, work: (name: string) => Promise<string>) => {
    const row = selectedRow()
    if (!row) return
    const name = row.name
    setStatus(`${verb} ${name}…`)
    work(name).then(
      (message) => {
        setStatus(message)
        refresh(modeRef.current)
      },
      (error: unknown) => setStatus(errorText(error)),
    )
  }

  // Keys typed faster than the screen reads them arrive as one string ("jjk"): one at a time.
  useInput((input, key) => {
    const plain = input.length > 1 && !key.ctrl && !key.meta && !input.startsWith('\u001B')
    for (const char of plain ? [...input] : [input]) onKey(char, key)
  }, {isActive: isRawModeSupported})

  function onKey(input: string, key: Parameters<Parameters<typeof useInput>[0]>[1]) {
    const row = selectedRow()
    const count = latest.current.current.length
    if (key.ctrl && input === 'c') return leave({kind: 'quit', code: 130, mode, selected: latest.current.selected})
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
      return
    }
    const move = (index: number) => {
      latest.current.selected = index
      setSelected(index)
    }
    if (key.downArrow || input === 'j') move(Math.min(latest.current.selected + 1, Math.max(count - 1, 0)))
    else if (key.upArrow || input === 'k') move(Math.max(latest.current.selected - 1, 0))
    else if (input === '?') setHelp((shown) => !shown)
    else if (key.return) setDetails((shown) => !shown)
    else if (input === 'r') refresh(mode, true)
    else if (input === 'u' && mode === 'local') act('bringing up', services.up)
    else if (input === 'd' && mode === 'local') act('bringing down', services.down)
    else if (input === 'x' && mode === 'local' && row) {
      if (row.name === 'main') return setStatus('the main checkout is never removed')
      const name = row.name
      setStatus(`planning the removal of ${name}…`)
      services.planRemove(name).then((plan) => {
        confirming.current = name
        setStatus(`${plan} — remove ${name}? y/N`)
      }, (error: unknown) => setStatus(`remove ${name} refused: ${errorText(error)}`))
    } else if (input === 'e' && row) leave({kind: 'shell', name: row.name, mode, selected: latest.current.selected})
  }

  const lines = mode === 'local' ? tableLines(LOCAL_COLUMNS, current as LocalRow[], columns - 3) : tableLines(clusterColumns(), current as ClusterRow[], columns - 3)
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
      {details && current.length > 0 ? <Text> </Text> : null}
      {details && current.length > 0
        ? detailLines(mode, current[Math.min(selected, current.length - 1)]).map((line) => <Text key={line} wrap="truncate">{line}</Text>)
        : null}
      {help ? HELP_LINES.map((line) => <Text key={line} wrap="truncate">{line}</Text>) : null}
      <Box flexGrow={1} />
      <Text wrap="truncate">{filter || filtering.current ? `/${filter}  ${status}` : status}</Text>
    </Box>
  )
}
