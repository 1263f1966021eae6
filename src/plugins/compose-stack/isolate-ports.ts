/**
 * The port rewrite of a worktree's rendered file (DESIGN.md §4.2, docs/stacks.md "The port
 * rule"): every published host port that does not come from a `[ports]` key moves by the port
 * rule; main keeps its literal ports. Also the list of these implicit ports, as `yard ports`
 * shows them and `yard env` exports them.
 */
import type {ImplicitPort, Target} from '../../core/backend.js'
import type {ComposeModelDocument} from './compose/types.js'
import {MAX_OFFSET, moveRange, portRule, type PortRange} from './port-rule.js'
import {classify, describeHost, formatPublished, parsePublished, rangeText} from './published-ports.js'
import type {ReportEntry} from './isolation-report.js'

/** `YARD_PORT_<SERVICE>_<PORT>`: the service name upper-cased, every other character `_`. */
export function implicitPortVariable(service: string, literal: number): string {
  return `YARD_PORT_${service.toUpperCase().replaceAll(/[^A-Z0-9]+/g, '_')}_${literal}`
}

/**
 * The `[ports]` ranges [base, base + 89] of a target (its ports are base + offset), and the set
 * of its `[ports]` host ports: a published port equal to one comes from a `[ports]` key.
 */
function keyedPorts(target: Target): {ranges: PortRange[]; values: Set<number>} {
  const values = Object.values(target.ports)
  return {ranges: values.map((port) => ({start: port - target.offset, end: port - target.offset + MAX_OFFSET})), values: new Set(values)}
}

export interface PortRewrite {
  /** The implicit ports, literal and as this target publishes them. */
  ports: ImplicitPort[]
  report: ReportEntry[]
}

/**
 * Rewrites the services' `ports` of `model` in place for `target` (nothing moves for main) and
 * lists the implicit ports. Entries that do not parse are left as written (the provider says
 * what is wrong with them).
 */
export function rewritePorts(model: ComposeModelDocument, target: Target): PortRewrite {
  const keyed = keyedPorts(target)
  const fixed: PortRange[] = []
  const avoid: PortRange[] = [...keyed.ranges]
  const services = Object.entries(model.services ?? {})
  for (const [, service] of services) {
    for (const entry of service.ports ?? []) {
      const port = parsePublished(entry)
      if (!port?.host) continue
      if (classify(port) === 'engine') avoid.push(port.host)
      else if (!isKeyed(port.host, keyed.values)) fixed.push(port.host)
    }
  }
  const rule = portRule(fixed, avoid)
  const ports: ImplicitPort[] = []
  const report: ReportEntry[] = []
  for (const [name, service] of services) {
    if (!Array.isArray(service.ports)) continue
    service.ports = service.ports.map((entry) => {
      const port = parsePublished(entry)
      if (!port?.host || classify(port) !== 'fixed' || isKeyed(port.host, keyed.values)) return entry
      if (!target.isMain && rule.base === undefined) {
        report.push({kind: 'refused', service: name, detail: `host port ${describeHost(port)}: the file fixes ${rule.literals.length} host ports, too many for 89 worktrees to get their own`, action: 'publish fewer fixed host ports (container-only ports or `[ports]` keys), or run this stack only in main'})
        return entry
      }
      const host = target.isMain ? port.host : moveRange(rule, port.host, target.offset)
      ports.push({
        service: name,
        source: `compose:${name}:${rangeText(port.host)}`,
        variable: implicitPortVariable(name, port.host.start),
        literal: rangeText(port.host),
        host: host.start,
        hostEnd: host.end === host.start ? undefined : host.end,
        hostIp: port.hostIp,
        protocol: port.protocol ?? 'tcp',
      })
      if (target.isMain) return entry
      report.push({kind: 'rewrite', service: name, detail: `host port ${describeHost(port)} (container ${rangeText(port.container)})`, action: `published as ${describeHost(port, host)} (the port rule, offset ${target.offset})`})
      return formatPublished(port, host)
    })
  }
  return {ports, report}
}

const isKeyed = (host: PortRange, values: ReadonlySet<number>) => host.start === host.end && values.has(host.start)
