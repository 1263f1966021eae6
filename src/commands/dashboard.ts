import {Flags} from '@oclif/core'

import {type DashboardSnapshot, dashboardTracer, gatherSnapshot} from '../core/dashboard/index.js'
import {loadDashboardScreen} from '../tui/dashboard-load.js'
import {snapshotText} from '../tui/dashboard-table.js'
import {BaseCommand} from './base.js'

/** `yard dashboard` (DESIGN.md §6): the Ink screen on a terminal, else one snapshot of the table. */
export default class Dashboard extends BaseCommand {
  static summary = 'One screen for every worktree and sandbox: offsets, ports, stacks, boxes, git state'
  static description =
    'On a terminal: a full-screen view; Tab switches local worktrees ⇄ cluster sandboxes, ? lists the keys. When stdout is not a terminal (a pipe, a file) or with --json: one snapshot of the table, then exit 0.'

  static examples = [
    '<%= config.bin %> dashboard',
    '<%= config.bin %> dashboard | cat',
    '<%= config.bin %> dashboard --mode cluster --json',
  ]

  static flags = {
    mode: Flags.string({description: 'the view to start in', options: ['local', 'cluster'], default: 'local'}),
  }

  async run(): Promise<Omit<DashboardSnapshot, 'notes'> | void> {
    const {flags} = await this.parse(Dashboard)
    const mode = flags.mode as 'local' | 'cluster'
    const trace = dashboardTracer(this.context.env)
    trace(
      `command: run (stdout ${process.stdout.isTTY ? `a terminal ${process.stdout.columns}x${process.stdout.rows}` : 'not a terminal'})`,
    )
    const {backends} = this
    trace('command: registry loaded')
    if (process.stdout.isTTY && !this.jsonEnabled()) {
      const {runDashboard} = await loadDashboardScreen()
      process.exitCode = await runDashboard({context: this.context, backends, mode})
      return
    }

    const snapshot = await gatherSnapshot(this.context, backends, mode, {budgetMs: 10_000})
    for (const note of snapshot.notes) process.stderr.write(`note: ${note.replace(/^note: /, '')}\n`)
    this.print(snapshotText(mode, snapshot.rows))
    return {mode: snapshot.mode, rows: snapshot.rows}
  }
}
