/**
 * The dashboard's effects (docs/dashboard.md): the reducer of dashboard-state.ts says what to do,
 * this hook does it — loads rows, runs the services' commands, starts the refresh timer and the
 * fades — and feeds what happened back to the reducer as events.
 */
import {useCallback, useEffect, useReducer, useRef} from 'react'

import type {CheckoutDetails, ClusterRow, DashboardMode, LocalRow} from '../core/dashboard/index.js'

import {
  type DashboardEvent,
  type DashboardExit,
  type DashboardState,
  type Effect,
  initialState,
  reduce,
} from './dashboard-state.js'

/** What the screen can ask for. Every call may reject; the message goes to the status line. */
export interface DashboardServices {
  /** The rows of a mode; `onProgress` may get them earlier with "…" cells while probes run. */
  load(
    mode: DashboardMode,
    onProgress?: (rows: LocalRow[] | ClusterRow[]) => void,
  ): Promise<{rows: LocalRow[] | ClusterRow[]; notes: string[]}>
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

export interface DashboardOptions {
  services: DashboardServices
  initialMode: DashboardMode
  initialSelected?: number
  /** Refresh period in milliseconds (DESIGN.md §6: 2 s); 0 turns the timer off. */
  intervalMs?: number
  /** How long an outcome stays in the status line, ms (questions, prompts and work under way stay). */
  statusFadeMs?: number
  /** Called once, when the screen ends. */
  leave(exit: DashboardExit): void
}

/** An outcome fades from the status line after this long (docs/dashboard.md). */
export const STATUS_FADE_MS = 10_000

/** A rejection as one line: its message and, for a `YardError`, its fix. */
export const errorText = (error: unknown) => {
  const failure = error as {message?: string; fix?: string}
  return `${failure.message ?? String(error)}${failure.fix ? ` — fix: ${failure.fix}` : ''}`
}

/** An action that throws at once is reported like one that rejects: never out of a key handler. */
const attempt = async <T>(work: () => Promise<T>) => Promise.resolve().then(work)

/**
 * The dashboard's state at `size` and a `dispatch` that reduces an event and performs its effects
 * at once (so keys typed faster than the screen renders each see the state the one before left).
 */
export function useDashboard(
  options: DashboardOptions,
  size: {columns: number; rows: number},
): [DashboardState, (event: DashboardEvent) => void] {
  const state = useRef<DashboardState>(undefined as unknown as DashboardState)
  state.current ??= initialState(options.initialMode, options.initialSelected ?? 0, size)
  const [, rendered] = useReducer((count: number) => count + 1, 0)
  const latest = useRef(options)
  latest.current = options
  const fades = useRef(new Set<ReturnType<typeof setTimeout>>())
  // A reducer that throws (a row whose cell cannot be drawn) ends the screen like a render that
  // throws: the error is thrown in the next render, where Ink's boundary restores the terminal.
  const failure = useRef<{error: unknown} | undefined>(undefined)

  const dispatch = useCallback((event: DashboardEvent) => {
    const {services} = latest.current
    let step
    try {
      step = reduce(state.current, event, {checkName: (name) => services.checkName(name)})
    } catch (error) {
      failure.current = {error}
      rendered()
      return
    }

    state.current = step.state
    rendered()
    for (const effect of step.effects) perform(effect)
  }, [])

  function perform(effect: Effect) {
    const {services, leave, statusFadeMs} = latest.current
    switch (effect.kind) {
      case 'load': {
        const {mode, announce} = effect
        services
          .load(mode, (rows) => dispatch({type: 'early', mode, rows}))
          .then(
            (loaded) => dispatch({type: 'loaded', mode, rows: loaded.rows, notes: loaded.notes, announce}),
            (error: unknown) => dispatch({type: 'loadFailed', mode, error: errorText(error)}),
          )
        return
      }

      case 'run': {
        const {work, name, mode} = effect
        const call = {
          up: async () => services.up(name),
          down: async () => services.down(name),
          boxUp: async () => services.boxUp(name),
          remove: async () => services.remove(name, mode),
          create: async () => services.create(mode, name),
        }[work]
        attempt(call).then(
          (message) => dispatch({type: 'done', message, select: work === 'create' ? {mode, name} : undefined}),
          (error: unknown) => dispatch({type: 'failed', message: errorText(error)}),
        )
        return
      }

      case 'plan': {
        attempt(async () => services.planRemove(effect.name, effect.mode)).then(
          (plan) => dispatch({type: 'planned', name: effect.name, mode: effect.mode, plan}),
          (error: unknown) => dispatch({type: 'refused', name: effect.name, error: errorText(error)}),
        )
        return
      }

      case 'details': {
        attempt(async () => services.details(effect.name)).then(
          (facts) => dispatch({type: 'details', name: effect.name, facts}),
          (error: unknown) => dispatch({type: 'details', name: effect.name, error: errorText(error)}),
        )
        return
      }

      case 'fade': {
        const fadeMs = statusFadeMs ?? STATUS_FADE_MS
        if (fadeMs <= 0) return
        const timer = setTimeout(() => {
          fades.current.delete(timer)
          dispatch({type: 'fade', seq: effect.seq})
        }, fadeMs)
        fades.current.add(timer)
        return
      }

      case 'exit': {
        return leave(effect.exit)
      }
    }
  }

  useEffect(() => {
    if (size.columns !== state.current.size.columns || size.rows !== state.current.size.rows)
      dispatch({type: 'resize', ...size})
  }, [size.columns, size.rows, dispatch])
  // A refresh at once and every interval; a new mode starts both again.
  const {mode} = state.current
  useEffect(() => {
    dispatch({type: 'tick'})
    if (!options.intervalMs) return
    const timer = setInterval(() => dispatch({type: 'tick'}), options.intervalMs)
    return () => clearInterval(timer)
  }, [mode, options.intervalMs, dispatch])
  useEffect(
    () => () => {
      for (const timer of fades.current) clearTimeout(timer)
    },
    [],
  )
  if (failure.current) throw failure.current.error
  return [state.current, dispatch]
}
