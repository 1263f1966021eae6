import {Flags} from '@oclif/core'
import {stringify} from 'yaml'

import type {ImplicitPort, StackContainer, StackReportEntry} from '../sdk/stack.js'

import {describeSharedStop, describeTarget, stackUp} from '../core/stack/index.js'
import {BaseCommand, targetArgs, targetName, worktreeFlag} from './base.js'

/** The JSON of `yard up --dry-run --json` (DESIGN.md §4.2). */
interface DryRunJson {
  project: string
  files: string[]
  compose: Record<string, unknown> | null
  report: StackReportEntry[]
}

/** The JSON of `yard up --json`: the report plus what runs. */
interface UpJson {
  project: string
  boxOnly: boolean
  files: string[]
  report: StackReportEntry[]
  services: StackContainer[]
  ports: Record<string, number>
  implicitPorts: ImplicitPort[]
  /** `--stop-shared`: the shared machine stopped first and the stacks that went down; null when none was. */
  stoppedShared: {machine: string; stacks: string[]} | null
}

/** `yard up [--dry-run]` (DESIGN.md §4.2). */
export default class Up extends BaseCommand {
  static summary = "Start the targeted checkout's stack (its own compose project)"
  static description =
    "Renders the checkout's compose project for this checkout (worktrees get their own host ports, container names, volume names and image tags; main runs its literal values), refuses what cannot be isolated (exit 3) and says what stays shared, probes the host ports (exit 3 when one is busy), refuses a project name owned by another checkout (exit 3), then starts the rendered file with the env of `yard env`. A project already running is left as it is. --dry-run prints the rendered file and the isolation report and starts nothing; it exits 3 when the report has refusals, as up would."

  static examples = [
    '<%= config.bin %> up',
    '<%= config.bin %> up --worktree feat',
    '<%= config.bin %> up --worktree feat --dry-run --json',
  ]

  static args = targetArgs
  static flags = {
    'stop-shared': Flags.boolean({
      description:
        'an untrusted worktree (yard worktree add --untrusted) runs on a machine of its own: stop the shared machine first when it runs (one VM at a time; without this flag up refuses, exit 3); the stacks that go down are listed',
    }),
    worktree: worktreeFlag,
    'dry-run': Flags.boolean({
      description:
        'print the rendered compose file and the isolation report; create and start nothing (exit 3 when up would refuse)',
    }),
  }

  async run(): Promise<DryRunJson | UpJson> {
    const {args, flags} = await this.parse(Up)
    const worktree = targetName(args, flags)
    const outcome = await stackUp(this.context, this.backends, worktree, {
      dryRun: flags['dry-run'],
      stopShared: flags['stop-shared'],
    })
    const {target, plan} = outcome
    if (flags['dry-run']) {
      if (outcome.boxOnly) this.print(`${describeTarget(target)} is box-only (no compose file): nothing to render`)
      else if (plan)
        this.print(`${plan.rendered ?? stringify(plan.compose, {lineWidth: 0})}\n${renderReport(plan.report)}`)
      const dry: DryRunJson = {
        project: target.project,
        files: plan?.files ?? [],
        compose: plan?.compose ?? null,
        report: plan?.report ?? [],
      }
      const refused = dry.report.filter((entry) => entry.kind === 'refused').length
      if (refused === 0) return dry
      // The report is the answer, so it is printed whole; the exit code is the one `up` would give.
      if (this.jsonEnabled()) this.logJson(dry)
      else
        this.logToStderr(
          `yard up would refuse ${describeTarget(target)} (exit 3): ${refused} refusal${refused === 1 ? '' : 's'} in the isolation report above`,
        )
      this.exit(3)
    }

    if (outcome.stoppedShared) this.print(describeSharedStop(outcome.stoppedShared))
    const ports = Object.entries(target.ports).map(([key, port]) => `${key}=${port}`)
    const implicit = plan?.ports ?? []
    const published = implicit.map(
      (port) => `${port.source}→${port.host}${port.hostEnd === undefined ? '' : `-${port.hostEnd}`}`,
    )
    this.print(
      outcome.boxOnly
        ? `${describeTarget(target)} is box-only (no compose file): nothing to start; \`yard box up\` starts its box`
        : `${describeTarget(target)} is up${ports.length + published.length > 0 ? `: ${[...ports, ...published].join(' ')}` : ''}`,
    )
    const services = plan && 'services' in plan ? plan.services : []
    return {
      project: target.project,
      boxOnly: outcome.boxOnly,
      files: plan?.files ?? [],
      report: plan?.report ?? [],
      services,
      ports: target.ports,
      implicitPorts: implicit,
      stoppedShared: outcome.stoppedShared ?? null,
    }
  }
}

/** The isolation report as text: one line per entry, grouped by kind. */
function renderReport(report: readonly StackReportEntry[]): string {
  if (report.length === 0) return '# isolation report: nothing to change'
  const lines = report.map(
    (entry) => `#   ${entry.kind.padEnd(8)} ${entry.service ?? '-'}: ${entry.detail} → ${entry.action}`,
  )
  return ['# isolation report:', ...lines].join('\n')
}
