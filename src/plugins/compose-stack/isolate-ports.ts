/**
 * The port rewrite of a checkout's rendered file (DESIGN.md §4.2, docs/stacks.md "The port
 * rule"): every published host port that does not come from a `[ports]` key moves by the port
 * rule — in a worktree always, in main only when it lies in a `[ports]` range. Also the list of
 * these implicit ports, as `yard ports` shows them and `yard env` exports them.
 */
import type {ImplicitPort} from '../../sdk/stack.js'
import type {Target} from '../../sdk/target.js'
import type {ComposeModelDocument} from './compose/types.js'
import type {ReportEntry} from './isolation-report.js'

import {MAX_OFFSET, moveRange, moves, type PortRange, portRule} from './port-rule.js'
import {
  classify,
  describeHost,
  formatPublished,
  parsePublished,
  type PublishedPort,
  rangeText,
} from './published-ports.js'

/**
 * The `[ports]` values for the second resolution that tells keyed entries from literal ones
 * (stack-plan.ts): every key moved by the same d (the smallest d = 1, 2, … — else −1, −2, … —
 * that keeps them valid ports and puts none on a host port of `model` or on another key's value),
 * so a key's entry changes and stays a valid entry, and no literal entry can look like it.
 * Undefined when no such d exists.
 */
export function probePortValues(model: ComposeModelDocument, target: Target): Record<string, number> | undefined {
  const values = Object.values(target.ports)
  const taken = new Set(values)
  for (const service of Object.values(model.services ?? {})) {
    for (const entry of service.ports ?? []) {
      const host = parsePublished(entry)?.host
      if (host) for (let port = host.start; port <= host.end; port++) taken.add(port)
    }
  }

  const fits = (delta: number) =>
    values.every((value) => value + delta >= 1 && value + delta <= 65_535 && !taken.has(value + delta))
  for (let step = 1; step <= 65_535; step++) {
    const delta = fits(step) ? step : fits(-step) ? -step : undefined
    if (delta !== undefined)
      return Object.fromEntries(Object.entries(target.ports).map(([key, value]) => [key, value + delta]))
  }

  return undefined
}

/**
 * `YARD_PORT_<SERVICE>_<PORT>[_<PROTOCOL>]`: the service name upper-cased, every other character
 * `_`; the protocol only when it is not tcp (`YARD_PORT_DNS_53_UDP`), so tcp and udp on one port
 * get a variable each.
 */
export function implicitPortVariable(service: string, literal: number, protocol = 'tcp'): string {
  const suffix = protocol.toLowerCase() === 'tcp' ? '' : `_${protocol.toUpperCase().replaceAll(/[^A-Z0-9]+/g, '_')}`
  return `YARD_PORT_${service.toUpperCase().replaceAll(/[^A-Z0-9]+/g, '_')}_${literal}${suffix}`
}

/** The `[ports]` ranges [base, base + 89] of a target (its ports are base + offset) and its `[ports]` host ports. */
function keyedPorts(target: Target): {ranges: PortRange[]; values: Set<number>} {
  const values = Object.values(target.ports)
  return {
    ranges: values.map((port) => ({start: port - target.offset, end: port - target.offset + MAX_OFFSET})),
    values: new Set(values),
  }
}

/**
 * Whether an entry's host port is one of the target's `[ports]` values: it may come from the
 * key (`"${DB_PORT}:5432"`) or be a literal that happens to equal it (`"5433:5433"` at offset 1).
 */
export function mayBeKeyed(model: ComposeModelDocument, target: Target): boolean {
  const {values} = keyedPorts(target)
  if (values.size === 0) return false
  return Object.values(model.services ?? {}).some((service) =>
    (service.ports ?? []).some((entry) => {
      const port = parsePublished(entry)
      return port?.host !== undefined && port.host.start === port.host.end && values.has(port.host.start)
    }),
  )
}

const entryKey = (entry: unknown) => JSON.stringify(entry)

/**
 * The predicate "this entry's host port comes from a `[ports]` key". With `probe` (the model
 * resolved with the keys at `probePortValues`), an entry is keyed when its host port is
 * a `[ports]` value and the probe's service lacks the same entry (so it followed the key); without
 * one, by value alone (right when `mayBeKeyed` is false).
 */
function keyedPredicate(
  target: Target,
  probe: ComposeModelDocument | undefined,
): (service: string, entry: unknown, port: PublishedPort) => boolean {
  const {values} = keyedPorts(target)
  const probed = new Map<string, Map<string, number>>()
  for (const [name, service] of Object.entries(probe?.services ?? {})) {
    const counts = new Map<string, number>()
    for (const entry of service.ports ?? []) counts.set(entryKey(entry), (counts.get(entryKey(entry)) ?? 0) + 1)
    probed.set(name, counts)
  }

  return (service, entry, port) => {
    if (!port.host || port.host.start !== port.host.end || !values.has(port.host.start)) return false
    if (!probe) return true
    return (probed.get(service)?.get(entryKey(entry)) ?? 0) === 0
  }
}

export interface PortRewrite {
  /** The implicit ports, literal and as this target publishes them. */
  ports: ImplicitPort[]
  report: ReportEntry[]
}

/**
 * Rewrites the services' `ports` of `model` in place for `target` and lists the implicit ports.
 * Entries that do not parse are left as written (the provider says what is wrong with them).
 * @param probe the model resolved with the `[ports]` keys shifted (see keyedPredicate); needed
 *   only when `mayBeKeyed(model, target)`
 */
export function rewritePorts(model: ComposeModelDocument, target: Target, probe?: ComposeModelDocument): PortRewrite {
  const keyed = keyedPorts(target)
  const isKeyed = keyedPredicate(target, probe)
  const fixed: PortRange[] = []
  const avoid: PortRange[] = []
  const services = Object.entries(model.services ?? {})
  const parsed = new Map<unknown, PublishedPort | undefined>()
  // A service on the host's network publishes nothing (the engine discards its `ports:`): it
  // listens on the host itself, on the ports it binds, which no rewrite can move.
  const hostNetwork = (service: {network_mode?: unknown}) => service.network_mode === 'host'
  for (const [name, service] of services) {
    if (hostNetwork(service)) continue
    for (const entry of service.ports ?? []) {
      const port = parsePublished(entry)
      parsed.set(entry, port)
      if (!port?.host) continue
      if (classify(port) === 'engine') avoid.push(port.host)
      else if (!isKeyed(name, entry, port)) fixed.push(port.host)
    }
  }

  const rule = portRule(fixed, avoid, keyed.ranges)
  const ports: ImplicitPort[] = []
  const report: ReportEntry[] = []
  for (const [name, service] of services) {
    if (!Array.isArray(service.ports) || hostNetwork(service)) continue
    service.ports = service.ports.map((entry) => {
      const port = parsed.get(entry)
      if (!port?.host || classify(port) !== 'fixed' || isKeyed(name, entry, port)) return entry
      const moving = moves(rule, port.host, target.offset)
      if (moving && rule.base === undefined) {
        report.push({
          kind: 'refused',
          service: name,
          detail: `host port ${describeHost(port)}: the file fixes ${rule.literals.length} host ports, too many for 89 worktrees to get their own`,
          action:
            'publish fewer fixed host ports (container-only ports or `[ports]` keys), or run this stack only in main',
        })
        return entry
      }

      const host = moveRange(rule, port.host, target.offset)
      const protocol = port.protocol ?? 'tcp'
      ports.push({
        service: name,
        source: `compose:${name}:${rangeText(port.host)}`,
        variable: implicitPortVariable(name, port.host.start, protocol),
        literal: rangeText(port.host),
        host: host.start,
        hostEnd: host.end === host.start ? undefined : host.end,
        hostIp: port.hostIp,
        protocol,
      })
      if (!moving) return entry
      const why = target.isMain
        ? `it lies in a [ports] range (${describeKeyed(target, port.host)}), where a worktree publishes that key`
        : `the port rule, offset ${target.offset}`
      report.push({
        kind: 'rewrite',
        service: name,
        detail: `host port ${describeHost(port)} (container ${rangeText(port.container)})`,
        action: `published as ${describeHost(port, host)} (${why})`,
      })
      return formatPublished(port, host)
    })
  }

  return {ports: uniqueVariables(ports), report}
}

/** "DB_PORT 5432-5521": the `[ports]` keys whose range meets `host`. */
function describeKeyed(target: Target, host: PortRange): string {
  return Object.entries(target.ports)
    .map(([key, value]) => ({key, start: value - target.offset, end: value - target.offset + MAX_OFFSET}))
    .filter((range) => range.start <= host.end && host.start <= range.end)
    .map((range) => `${range.key} ${range.start}-${range.end}`)
    .join(', ')
}

/**
 * One variable per host port: entries of one service, port and protocol on several bind
 * addresses publish the same host port and share it; a name two different ports would share
 * (service names `api-v1` and `api_v1`) gets `_2`, `_3`, … in file order.
 */
function uniqueVariables(ports: ImplicitPort[]): ImplicitPort[] {
  const taken = new Map<string, string>()
  return ports.map((port) => {
    const identity = `${port.service}\u0000${port.literal}\u0000${port.protocol}`
    let {variable} = port
    for (let index = 2; taken.has(variable) && taken.get(variable) !== identity; index++)
      variable = `${port.variable}_${index}`
    taken.set(variable, identity)
    return variable === port.variable ? port : {...port, variable}
  })
}
