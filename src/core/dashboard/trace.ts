/**
 * The dashboard's trace (docs/dashboard.md, "When the screen stays empty"): with
 * `YARD_DASHBOARD_TRACE=<file>`, the command, the screen and every gather and probe append one
 * line per step to that file, so a screen that stays empty or a slow cell can be explained
 * afterwards. Off (and free) when the variable is unset.
 */
import {appendFileSync} from 'node:fs'
import {performance} from 'node:perf_hooks'

/** Appends one step to the trace (a no-op when tracing is off). */
export type Tracer = (event: string) => void

const off: Tracer = () => {}

/**
 * A tracer writing `<ISO time> +<ms since the process started> pid=<pid> <event>` lines to
 * `env.YARD_DASHBOARD_TRACE` (appended synchronously, so the lines are there even when the
 * process is killed next). A file that cannot be written turns tracing off: a trace never
 * breaks the dashboard.
 */
export function dashboardTracer(env: NodeJS.ProcessEnv): Tracer {
  const file = env.YARD_DASHBOARD_TRACE
  if (!file) return off
  let broken = false
  return (event) => {
    if (broken) return
    try {
      appendFileSync(
        file,
        `${new Date().toISOString()} +${Math.round(performance.now())}ms pid=${process.pid} ${event}\n`,
      )
    } catch {
      broken = true
    }
  }
}

/** Runs `work` between a `<label> start` and a `<label> end <ms>` (or `failed`) trace line. */
export async function traced<T>(trace: Tracer, label: string, work: () => Promise<T>): Promise<T> {
  if (trace === off) return work()
  const started = performance.now()
  trace(`${label} start`)
  try {
    const value = await work()
    trace(`${label} end ${Math.round(performance.now() - started)}ms`)
    return value
  } catch (error) {
    trace(
      `${label} failed ${Math.round(performance.now() - started)}ms: ${(error as Error).message?.split('\n', 1)[0]}`,
    )
    throw error
  }
}
