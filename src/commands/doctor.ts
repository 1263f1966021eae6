import {Flags} from '@oclif/core'

import {type CheckResult, type DoctorReport, runDoctor} from '../core/host/index.js'
import {stackIsolationCheck} from '../core/stack/index.js'
import {BaseCommand} from './base.js'

const SYMBOL = {ok: '✓', warn: '!', fail: '✗'} as const

/** The report as text: one line per check, its fix indented below. */
function renderReport(report: DoctorReport): string {
  const lines: string[] = Array.from(
    report.repaired ?? [],
    (repair) => `${repair.ok ? 'fixed' : 'could not fix'} ${repair.name}: ${repair.detail}`,
  )
  if (report.repaired?.length === 0) lines.push('--fix: nothing to fix')
  if (report.repaired !== undefined) lines.push('')
  const width = Math.max(...report.checks.map((check) => check.name.length))
  const line = (check: CheckResult) => {
    const head = `${SYMBOL[check.level]} ${check.name.padEnd(width)}  `
    const fix = check.fix && check.level !== 'ok' ? `\n${' '.repeat(head.length)}fix: ${check.fix}` : ''
    return `${head}${check.detail}${fix}`
  }

  lines.push(...report.checks.map(line), '')
  const failed = report.checks.filter((check) => !check.ok).length
  const warnings = report.checks.filter((check) => check.level === 'warn').length
  const warned = warnings > 0 ? ` (${warnings} warning${warnings === 1 ? '' : 's'})` : ''
  lines.push(
    failed === 0 ? `yard is ready${warned}` : `${failed} required check${failed === 1 ? '' : 's'} failed${warned}`,
  )
  return lines.join('\n')
}

export default class Doctor extends BaseCommand {
  static summary = "Check that git, podman, a compose provider and yard's state directory work here"

  static description = `Each check prints ✓ (works), ! (warning) or ✗ (a required check failed, with a fix); the exit code is 1 when one failed.
--fix repairs what yard can: it writes yard's containers.conf (runc, cgroupfs, file events, lowered ulimits) to the state directory when podman cannot run a container without it; yard then passes it as CONTAINERS_CONF to every podman it runs.`

  // Its state-dir check reports a state directory that cannot be made, instead of failing first.
  static usesStateDir = false
  static examples = ['<%= config.bin %> doctor', '<%= config.bin %> doctor --fix', '<%= config.bin %> doctor --json']

  static flags = {
    fix: Flags.boolean({
      description: "repair what can be repaired (writes yard's containers.conf), then check again",
      default: false,
    }),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(Doctor)
    const report = await runDoctor(this.context, {
      fix: flags.fix,
      selfRoot: this.config.root,
      extraChecks: [stackIsolationCheck(this.backends)],
    })
    if (this.jsonEnabled()) this.logJson(report)
    else this.log(renderReport(report))
    if (!report.ok) this.exit(1)
  }
}
