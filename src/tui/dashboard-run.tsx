/**
 * Runs the dashboard on a terminal (DESIGN.md §6, §9): the alternate screen entered and left by
 * hand (ink 6.8 has no option for it) and restored on quit, Ctrl-C, a signal or a crash; the
 * services wired to the same core use cases as the commands; `e` leaves the screen, hands the
 * terminal to `yard exec`'s code path for a shell, then comes back where it was.
 */
import {render} from 'ink'
// React in scope: dev runs transpile JSX without this tsconfig when started from another directory.
import React from 'react'

import {SHELL_ARGV} from '../core/box.js'
import type {YardContext} from '../core/context.js'
import {ClusterRow, DashboardMode, gatherCluster, gatherLocal, LocalRow} from '../core/dashboard.js'
import {dashboardTracer, traced, Tracer} from '../core/dashboard-trace.js'
import type {Registry} from '../core/registry.js'
import {execAnywhere} from '../core/sandbox-exec.js'
import {stackDown, stackUp} from '../core/stack.js'
import {registryBackends} from '../core/worktree-backends.js'
import {executeRemoval, planRemoval, RemovalSummary} from '../core/worktree-remove.js'
import {DashboardApp, DashboardExit, DashboardServices} from './dashboard-app.js'

const ENTER_ALT = '\u001B[?1049h'
/** Leave the alternate screen and show the cursor: what a terminal needs to be as before. */
const LEAVE_ALT = '\u001B[?1049l\u001B[?25h'

/** The actions of the screen through core, with warnings kept out of the screen. */
export function dashboardServices(context: YardContext, registry: Registry): DashboardServices {
  const quiet: YardContext = {...context, warn: () => {}}
  const trace = dashboardTracer(context.env)
  const backends = registryBackends(async () => registry, quiet)
  const describePlan = (summary: RemovalSummary) => [
    `remove ${summary.name} (${summary.branch ?? 'detached'}): directory ${summary.present ? 'removed' : 'already gone'}`,
    summary.snapshot ? 'uncommitted work saved to a ref' : '',
    'stack' in summary.stack && 'backend' in summary.stack ? `stack torn down (${summary.stack.backend})` : '',
    summary.pin === null ? '' : `pin ${summary.pin} deleted`,
    'branch kept',
  ].filter(Boolean).join(', ')
  return {
    load: (mode) => traced<{rows: LocalRow[] | ClusterRow[]; notes: string[]}>(trace, `gather ${mode}`, () => (mode === 'local' ? gatherLocal(quiet, registry) : gatherCluster(quiet, registry))),
    up: async (name) => {
      const outcome = await stackUp(quiet, registry, name)
      return outcome.boxOnly ? `${name} is box-only: nothing to start` : `${name} is up`
    },
    down: async (name) => {
      const outcome = await stackDown(quiet, registry, name)
      return outcome.gone.length === 0 ? `${name}: nothing runs` : `${name} is down (${outcome.gone.length} removed)`
    },
    planRemove: async (name) => {
      const plan = await planRemoval(quiet, {name, force: false, dryRun: true, backends})
      if (plan.refusal) throw plan.refusal
      return describePlan(plan.summary)
    },
    remove: async (name) => {
      const plan = await planRemoval(quiet, {name, force: false, dryRun: false, backends})
      if (plan.refusal) throw plan.refusal
      await executeRemoval(quiet, plan, {force: false})
      return `removed ${name}; its branch is kept`
    },
  }
}

/** One mount of the screen on the alternate screen; resolves with how it ended. */
async function showScreen(services: DashboardServices, mode: DashboardMode, selected: number, trace: Tracer): Promise<DashboardExit> {
  process.stdout.write(ENTER_ALT)
  trace(`screen: alternate screen on, ${mode}`)
  let ended: DashboardExit = {kind: 'quit', code: 0, mode, selected}
  const instance = render(
    <DashboardApp services={services} initialMode={mode} initialSelected={selected} intervalMs={2000} onExit={(exit) => (ended = exit)} />,
    {exitOnCtrlC: false, patchConsole: false},
  )
  trace('screen: mounted')
  setImmediate(() => trace('screen: event loop free after the mount'))
  try {
    await instance.waitUntilExit()
  } finally {
    instance.cleanup()
    // Stop reading the terminal: a shell started next must get every key, none left to this process.
    process.stdin.pause()
    process.stdout.write(LEAVE_ALT)
  }
  return ended
}

/**
 * The dashboard on this terminal until `q` (0) or Ctrl-C (130). A signal (SIGTERM, SIGHUP,
 * SIGINT) or an uncaught error leaves the alternate screen before the process ends.
 */
export async function runDashboard(options: {context: YardContext; registry: Registry; mode: DashboardMode}): Promise<number> {
  const restore = () => process.stdout.write(LEAVE_ALT)
  const onSignal = (signal: NodeJS.Signals) => {
    restore()
    if (process.stdin.isTTY) process.stdin.setRawMode(false)
    process.exit(signal === 'SIGINT' ? 130 : 128 + (signal === 'SIGTERM' ? 15 : 1))
  }
  const onCrash = (error: Error) => {
    restore()
    if (process.stdin.isTTY) process.stdin.setRawMode(false)
    process.stderr.write(`yard dashboard failed: ${error.message}\n`)
    process.exit(1)
  }
  const signals: NodeJS.Signals[] = ['SIGTERM', 'SIGHUP', 'SIGINT']
  for (const signal of signals) process.on(signal, onSignal)
  process.on('uncaughtException', onCrash)
  const services = dashboardServices(options.context, options.registry)
  const trace = dashboardTracer(options.context.env)
  let mode = options.mode
  let selected = 0
  try {
    for (;;) {
      const ended = await showScreen(services, mode, selected, trace)
      mode = ended.mode
      selected = ended.selected
      if (ended.kind === 'quit') return ended.code
      await openShell(options, ended.name, mode)
    }
  } finally {
    for (const signal of signals) process.off(signal, onSignal)
    process.off('uncaughtException', onCrash)
  }
}

/** `e`: the shell of `yard shell` on the normal screen in cooked mode; its failure is printed, then the screen comes back. */
async function openShell(options: {context: YardContext; registry: Registry}, name: string, mode: DashboardMode): Promise<void> {
  const request = mode === 'local' ? {name, local: true, argv: SHELL_ARGV, tty: true} : {sandbox: name, argv: SHELL_ARGV, tty: true}
  try {
    await execAnywhere(options.context, options.registry, request)
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n(press Enter to go back to the dashboard)\n`)
    await new Promise((resolve) => process.stdin.once('data', resolve))
    process.stdin.pause()
  }
}
