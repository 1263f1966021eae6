import {Flags} from '@oclif/core'

import {allPorts, type PortsReport, sandboxPorts, stackImplicitPorts, targetPorts} from '../core/identity/index.js'
import {worktreeBackends} from '../core/worktree/index.js'
import {InputError} from '../sdk/errors.js'
import {BaseCommand, targetArgs, targetName, worktreeFlag} from './base.js'

export default class Ports extends BaseCommand {
  static summary = 'Show the offset and host ports of a checkout, or of all of them'
  static description =
    'Every [ports] key is exported as base + offset. The offset is 0 for the main checkout; for a worktree it comes from WT_OFFSET, a pin in yard.local.toml, or the hash of its name. Host ports the compose file publishes itself are listed too (source compose:<service>:<port>): main publishes them as written, a worktree where the port rule puts them (docs/stacks.md).'

  static examples = [
    '<%= config.bin %> ports',
    '<%= config.bin %> ports --worktree feat --json',
    '<%= config.bin %> ports --all',
  ]

  static args = targetArgs
  static flags = {
    worktree: worktreeFlag,
    all: Flags.boolean({
      description: 'main, every worktree and every sandbox (WT_OFFSET is ignored)',
      exclusive: ['worktree'],
    }),
    sandbox: Flags.string({
      description: 'target this sandbox (its offset label)',
      helpValue: 'NAME',
      exclusive: ['worktree', 'all'],
    }),
  }

  async run(): Promise<PortsReport | PortsReport[]> {
    const {args, flags} = await this.parse(Ports)
    const worktree = targetName(args, flags)
    if (worktree !== undefined && (flags.all || flags.sandbox !== undefined))
      throw new InputError(`${worktree} names a worktree, but ${flags.all ? '--all' : '--sandbox'} was given too`, {
        fix: 'give one target: NAME, --all or --sandbox NAME',
      })
    const {sandboxes} = worktreeBackends(this.backends, this.context)
    const implicit = stackImplicitPorts(this.context, this.backends)
    const reports = flags.all
      ? await allPorts(this.context, sandboxes, implicit)
      : [
          flags.sandbox === undefined
            ? await targetPorts(this.context, worktree, sandboxes, implicit)
            : await sandboxPorts(this.context, this.backends, flags.sandbox, sandboxes),
        ]
    for (const report of reports) this.print(renderReport(report))
    return flags.all ? reports : reports[0]
  }
}

function renderReport(report: PortsReport): string {
  const head = `${report.worktree} (${report.project}) offset ${report.offset} [${report.offsetSource}]${report.trust === 'untrusted' ? '  untrusted' : ''}${report.clashesWith.length > 0 ? `  clashes with: ${report.clashesWith.join(', ')}` : ''}`
  const ports = Object.entries(report.ports).map(([key, port]) => `  ${key}=${port}`)
  const implicit = report.implicitPorts.map(
    (port) =>
      `  ${port.variable}=${port.host}${port.hostEnd === undefined ? '' : `-${port.hostEnd}`}${port.protocol === 'tcp' ? '' : `/${port.protocol}`}  (${port.source}${port.hostIp ? ` on ${port.hostIp}` : ''})`,
  )
  return [head, ...(ports.length > 0 ? ports : ['  (no [ports] configured)']), ...implicit].join('\n')
}
