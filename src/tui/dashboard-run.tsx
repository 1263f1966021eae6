/**
 * Runs the dashboard on a terminal (DESIGN.md §6, §9): on the alternate screen (ink's
 * `alternateScreen`), the terminal restored on quit, Ctrl-C, a signal or a crash; the
 * services wired to the same core use cases as the commands; `e` leaves the screen, hands the
 * terminal to `yard exec`'s code path for a shell, then comes back where it was.
 */
import {render} from 'ink'
// React in scope: dev runs transpile JSX without this tsconfig when started from another directory.
import React from 'react'

import type {YardContext} from '../core/kernel/index.js'
import type {Backends} from '../core/registry/index.js'

import {
  type ClusterRow,
  createFromDashboard,
  type DashboardMode,
  dashboardTracer,
  gatherCluster,
  gatherDetails,
  gatherLocal,
  type LocalRow,
  traced,
  type Tracer,
} from '../core/dashboard/index.js'
import {nameProblem} from '../core/identity/index.js'
import {boxUp, SHELL_ARGV} from '../core/machine/index.js'
import {execAnywhere, removeSandbox} from '../core/sandbox/index.js'
import {stackDown, stackLogs, stackUp} from '../core/stack/index.js'
import {
  describeStackStep,
  executeRemoval,
  planRemoval,
  type RemovalSummary,
  worktreeBackends,
} from '../core/worktree/index.js'
import {RefusedError} from '../sdk/errors.js'
import {shellCommand} from '../sdk/shell.js'
import {DashboardApp, type DashboardExit, type DashboardServices} from './dashboard-app.js'

/** Leave the alternate screen and show the cursor: what a terminal needs to be as before. */
const LEAVE_ALT = '\u001B[?1049l\u001B[?25h'

/** `message`, then the warnings an action gave (a fixed host port, a stale cache…). */
const withWarnings = (message: string, warnings: string[]) =>
  warnings.length === 0
    ? message
    : `${message} — ${warnings.map((warning) => warning.replace(/^(warning|note): /, '')).join('; ')}`

/**
 * The actions of the screen through core. Warnings never reach the screen directly (it would
 * tear): an action's warnings come back in its status-line message.
 */
export function dashboardServices(context: YardContext, backends: Backends): DashboardServices {
  const quiet: YardContext = {...context, warn() {}}
  const trace = dashboardTracer(context.env)
  /** Runs `work` with a context whose warnings are kept, and adds them to its message. */
  const acting = async (work: (actionContext: YardContext) => Promise<string>) => {
    const warnings: string[] = []
    const message = await work({...context, warn: (warning) => warnings.push(warning)})
    return withWarnings(message, warnings)
  }

  const describePlan = (summary: RemovalSummary) =>
    [
      `remove ${summary.name} (${summary.branch ?? 'detached'}): directory ${summary.present ? 'removed' : 'already gone'}`,
      summary.snapshot ? 'uncommitted work saved to a ref' : '',
      'backend' in summary.stack ? describeStackStep(summary.stack) : '',
      summary.pin === null
        ? ''
        : summary.pinByYard
          ? `pin ${summary.pin} deleted`
          : `hand-written pin ${summary.pin} kept`,
      summary.outside && summary.outside.ignored.length > 0
        ? `${summary.outside.ignored.length} ignored ${summary.outside.ignored.length === 1 ? 'path' : 'paths'} deleted (${summary.outside.ignored.slice(0, 3).join(', ')}${summary.outside.ignored.length > 3 ? ', …' : ''})`
        : '',
      'branch kept',
    ]
      .filter(Boolean)
      .join('; ')
  return {
    load: async (mode, onProgress) =>
      traced<{rows: LocalRow[] | ClusterRow[]; notes: string[]}>(trace, `gather ${mode}`, async () =>
        mode === 'local' ? gatherLocal(quiet, backends, {onProgress}) : gatherCluster(quiet, backends),
      ),
    up: async (name) =>
      acting(async (actionContext) => {
        const outcome = await stackUp(actionContext, backends, name)
        return outcome.boxOnly ? `${name} is box-only: nothing to start` : `${name} is up`
      }),
    down: async (name) =>
      acting(async (actionContext) => {
        const outcome = await stackDown(actionContext, backends, name)
        return outcome.gone.length === 0 ? `${name}: nothing runs` : `${name} is down (${outcome.gone.length} removed)`
      }),
    async planRemove(name, mode = 'local') {
      if (mode === 'cluster') {
        // rm's own plan and refusals (unsaved work, naming each worktree and commit).
        const {result, refusal} = await removeSandbox(quiet, backends, {name, force: false, dryRun: true})
        if (refusal) throw forcedInShell(refusal, ['yard', 'sandbox', 'rm', name, '--force'])
        return `remove sandbox ${name}: ${result.goes.join(', ')}`
      }

      const plan = await planRemoval(quiet, {
        name,
        force: false,
        dryRun: true,
        backends: worktreeBackends(backends, quiet),
      })
      if (plan.refusal) throw forcedInShell(plan.refusal, ['yard', 'worktree', 'remove', name, '--force'])
      return describePlan(plan.summary)
    },
    remove: async (name, mode = 'local') =>
      acting(async (actionContext) => {
        if (mode === 'cluster') {
          await removeSandbox(actionContext, backends, {name, force: false, dryRun: false})
          return `removed sandbox ${name}`
        }

        const plan = await planRemoval(actionContext, {
          name,
          force: false,
          dryRun: false,
          backends: worktreeBackends(backends, actionContext),
        })
        if (plan.refusal) throw plan.refusal
        await executeRemoval(actionContext, plan, {force: false})
        return `removed ${name}; its branch is kept`
      }),
    boxUp: async (name) =>
      acting(async (actionContext) => {
        const outcome = await boxUp(actionContext, backends, name)
        return outcome.started
          ? `the box of ${name} is up (${outcome.image})`
          : `the box of ${name} was running already`
      }),
    checkName: nameProblem,
    create: async (mode, name) =>
      acting(async (actionContext) => {
        const created = await createFromDashboard(actionContext, backends, mode, name)
        if (created.kind === 'worktree')
          return `created worktree ${name} on ${created.result.branch} at ${created.result.path}, offset ${created.result.offset}`
        return `created sandbox ${name} (${created.result.runtime}) of ${created.repo}, offset ${created.result.offset}`
      }),
    details: async (name) => traced(trace, `details ${name}`, async () => gatherDetails(quiet, backends, name)),
  }
}

/**
 * A refusal as the dashboard says it: the dashboard never forces, so "pass --force" becomes the
 * shell command that does (after `q`).
 */
function forcedInShell(refusal: RefusedError, command: string[]): RefusedError {
  const fix = refusal.fix?.replace(/\bpass --force\b/, `run \`${shellCommand(command)}\` in a shell`)
  return new RefusedError(refusal.message, {why: refusal.why, fix, cause: refusal})
}

/** The streams the screen runs on: the process's own, or a test's. */
export interface Terminal {
  stdin: NodeJS.ReadStream
  stdout: NodeJS.WriteStream
  stderr: NodeJS.WriteStream
}

const processTerminal = (): Terminal => ({stdin: process.stdin, stdout: process.stdout, stderr: process.stderr})

/**
 * Puts the terminal back as the dashboard found it (DESIGN.md §9): the alternate screen left,
 * the cursor shown, raw mode off. Safe to call more than once and on a stdin that is no TTY.
 */
export function restoreTerminal(terminal: Terminal): void {
  terminal.stdout.write(LEAVE_ALT)
  if (terminal.stdin.isTTY && terminal.stdin.isRaw) terminal.stdin.setRawMode(false)
}

/**
 * One mount of the screen on the alternate screen; resolves with how it ended. An exception in
 * a render ends the mount: the terminal is restored, then the error is thrown on.
 */
export async function showScreen(
  services: DashboardServices,
  mode: DashboardMode,
  selected: number,
  options: {trace?: Tracer; terminal?: Terminal; intervalMs?: number; statusFadeMs?: number} = {},
): Promise<DashboardExit> {
  const terminal = options.terminal ?? processTerminal()
  const trace = options.trace ?? (() => {})
  trace(`screen: alternate screen on, ${mode}`)
  let ended: DashboardExit = {kind: 'quit', code: 0, mode, selected}
  try {
    const instance = render(
      <DashboardApp
        initialMode={mode}
        initialSelected={selected}
        intervalMs={options.intervalMs ?? 2000}
        onExit={(exit) => (ended = exit)}
        services={services}
        statusFadeMs={options.statusFadeMs}
      />,
      // Only mounted on a terminal: CI set in the environment (is-in-ci) must not turn it non-interactive.
      {
        alternateScreen: true,
        interactive: true,
        exitOnCtrlC: false,
        patchConsole: false,
        stdin: terminal.stdin,
        stdout: terminal.stdout,
        stderr: terminal.stderr,
      },
    )
    trace('screen: mounted')
    setImmediate(() => trace('screen: event loop free after the mount'))
    try {
      await instance.waitUntilExit()
    } finally {
      instance.cleanup()
    }
  } finally {
    // Stop reading the terminal: a shell started next must get every key, none left to this process.
    terminal.stdin.pause()
    restoreTerminal(terminal)
  }

  return ended
}

/**
 * The dashboard on this terminal until `q` (0) or Ctrl-C (130). A signal (SIGTERM, SIGHUP,
 * SIGINT) or an uncaught error — in a render, a key handler or an action — restores the terminal
 * (`restoreTerminal`) before the process ends; an error ends with exit 1 and its message.
 */
export async function runDashboard(options: {
  context: YardContext
  backends: Backends
  mode: DashboardMode
  services?: DashboardServices
  statusFadeMs?: number
}): Promise<number> {
  const terminal = processTerminal()
  const onSignal = (signal: NodeJS.Signals) => {
    restoreTerminal(terminal)
    process.exit(signal === 'SIGINT' ? 130 : 128 + (signal === 'SIGTERM' ? 15 : 1))
  }

  const onCrash = (error: unknown) => {
    restoreTerminal(terminal)
    terminal.stderr.write(`yard dashboard failed: ${(error as Error)?.message ?? String(error)}\n`)
    process.exit(1)
  }

  const signals: NodeJS.Signals[] = ['SIGTERM', 'SIGHUP', 'SIGINT']
  for (const signal of signals) process.on(signal, onSignal)
  process.on('uncaughtException', onCrash)
  process.on('unhandledRejection', onCrash)
  // Services other than core's only in tests of the screen on a real terminal.
  const services = options.services ?? dashboardServices(options.context, options.backends)
  const trace = dashboardTracer(options.context.env)
  let {mode} = options
  let selected = 0
  try {
    for (;;) {
      const ended = await showScreen(services, mode, selected, {trace, terminal, statusFadeMs: options.statusFadeMs})
      mode = ended.mode
      selected = ended.selected
      if (ended.kind === 'quit') return ended.code
      if (ended.kind === 'logs') await followLogs(options, terminal, ended.name)
      else await openShell(options, terminal, ended.name, mode)
    }
  } catch (error) {
    terminal.stderr.write(`yard dashboard failed: ${(error as Error).message}\n`)
    return 1
  } finally {
    for (const signal of signals) process.off(signal, onSignal)
    process.off('uncaughtException', onCrash)
    process.off('unhandledRejection', onCrash)
  }
}

/**
 * `e`: the shell of `yard shell` on the normal screen in cooked mode. Its failure (a stopped box,
 * a sandbox that went away, an engine error) is printed with its fix, and the screen comes back
 * when Enter is pressed.
 */
async function openShell(
  options: {context: YardContext; backends: Backends},
  terminal: Terminal,
  name: string,
  mode: DashboardMode,
): Promise<void> {
  const request =
    mode === 'local' ? {name, local: true, argv: SHELL_ARGV, tty: true} : {sandbox: name, argv: SHELL_ARGV, tty: true}
  terminal.stdout.write(`${shellBanner(mode, name)}\n`)
  try {
    await execAnywhere(options.context, options.backends, request)
  } catch (error) {
    const failure = error as {message?: string; fix?: string}
    terminal.stderr.write(
      `${failure.message ?? String(error)}${failure.fix ? `\nfix: ${failure.fix}` : ''}\n(press Enter to go back to the dashboard)\n`,
    )
    await waitForEnter(terminal.stdin)
  }
}

/** The line printed before `e` hands the terminal over: which box, and how to come back. */
export function shellBanner(mode: DashboardMode, name: string): string {
  return `yard: a shell in ${mode === 'local' ? `the box of ${name}` : `the sandbox ${name}`}; type exit to return to the dashboard`
}

/**
 * `l`: `yard logs -f` of the row's stack on the normal screen, after a line saying how to come
 * back; Ctrl-C ends the logs (the children get it from the terminal) and the screen comes back.
 * A failure is printed with its fix and the screen comes back on Enter.
 */
async function followLogs(
  options: {context: YardContext; backends: Backends},
  terminal: Terminal,
  name: string,
): Promise<void> {
  terminal.stdout.write(`yard: following the logs of ${name}; Ctrl-C returns to the dashboard\n`)
  // Ctrl-C belongs to the logs now: this process stays, and the screen comes back.
  let interrupted = false
  const ignore = () => {
    interrupted = true
  }

  const handlers = process.listeners('SIGINT')
  process.removeAllListeners('SIGINT')
  process.on('SIGINT', ignore)
  try {
    const outcome = await stackLogs(options.context, options.backends, {flag: name, services: [], follow: true})
    if (outcome.boxOnly) {
      terminal.stderr.write(
        `${name} is box-only (no compose file): no stack logs\n(press Enter to go back to the dashboard)\n`,
      )
      await waitForEnter(terminal.stdin)
    }
  } catch (error) {
    // Logs ended by Ctrl-C are not a failure to show, whatever the provider exits with
    // (podman-compose 1.0.3: 1, after a Python traceback).
    if (interrupted) return
    const failure = error as {message?: string; fix?: string}
    terminal.stderr.write(
      `${failure.message ?? String(error)}${failure.fix ? `\nfix: ${failure.fix}` : ''}\n(press Enter to go back to the dashboard)\n`,
    )
    await waitForEnter(terminal.stdin)
  } finally {
    process.off('SIGINT', ignore)
    for (const handler of handlers) process.on('SIGINT', handler as NodeJS.SignalsListener)
  }
}

/**
 * Resolves when a line is typed on `stdin` (Enter, in cooked mode) or it ends, then stops
 * reading it again. The screen left stdin paused and unreferenced: it is resumed and referenced
 * for the wait, else nothing keeps the process alive and it ends before the key comes.
 */
export async function waitForEnter(stdin: NodeJS.ReadStream): Promise<void> {
  return new Promise((resolve) => {
    if (stdin.isTTY && stdin.isRaw) stdin.setRawMode(false)
    const done = () => {
      stdin.off('data', onData)
      stdin.off('end', done)
      stdin.pause()
      stdin.unref?.()
      resolve()
    }

    const onData = (chunk: Buffer | string) => {
      if (/[\n\r]/.test(String(chunk))) done()
    }

    stdin.on('data', onData)
    stdin.once('end', done)
    stdin.ref?.()
    stdin.resume()
  })
}
