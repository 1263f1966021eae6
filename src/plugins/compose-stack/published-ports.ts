/**
 * Published ports of a resolved compose model (compose specification, "ports"): read each
 * entry, classify it, and write it back with another host part, keeping bind address and
 * protocol. Short syntax `[HOST_IP:][HOST[-HOST]:]CONTAINER[-CONTAINER][/PROTOCOL]` (an IPv6
 * HOST_IP in brackets, `[::1]:5432:5432`); long syntax `{target, published, host_ip, protocol,
 * mode}`; a bare number is a container port.
 */
import type {PortRange} from './port-rule.js'

export interface PublishedPort {
  /** As written: `short` (a string), `long` (a mapping) or `number`. */
  form: 'short' | 'long' | 'number'
  hostIp?: string
  /** The host port or range; undefined when the engine picks one (or none is published). */
  host?: PortRange
  container: PortRange
  protocol?: string
  /** The long syntax's other keys (`mode`, `name`, `app_protocol`), kept as they are. */
  rest?: Record<string, unknown>
}

/**
 * How a published entry moves per checkout: `fixed` (a host port or a range as long as the
 * container's: moves by the port rule), `engine` (a host range for one container port: the engine
 * picks, left alone), `container` (no host port: left alone).
 */
export type PortClass = 'fixed' | 'engine' | 'container'

function range(text: string): PortRange | undefined {
  const match = /^(\d+)(?:-(\d+))?$/.exec(text.trim())
  if (!match) return undefined
  const start = Number(match[1])
  const end = match[2] === undefined ? start : Number(match[2])
  return start >= 0 && end >= start && end <= 65_535 ? {start, end} : undefined
}

/** Reads one entry of a service's `ports`; undefined when it is not one compose accepts. */
export function parsePublished(entry: unknown): PublishedPort | undefined {
  if (typeof entry === 'number') return Number.isInteger(entry) ? {form: 'number', container: {start: entry, end: entry}} : undefined
  if (entry !== null && typeof entry === 'object' && !Array.isArray(entry)) {
    const {target, published, host_ip: hostIp, protocol, ...rest} = entry as Record<string, unknown>
    const container = target === undefined ? undefined : range(String(target))
    if (!container) return undefined
    const host = published === undefined || published === null || published === '' ? undefined : range(String(published))
    if (published !== undefined && published !== null && published !== '' && !host) return undefined
    return {form: 'long', container, host, hostIp: hostIp === undefined ? undefined : String(hostIp), protocol: protocol === undefined ? undefined : String(protocol), rest}
  }
  if (typeof entry !== 'string') return undefined
  let text = entry.trim()
  let protocol: string | undefined
  const slash = text.lastIndexOf('/')
  if (slash !== -1) {
    protocol = text.slice(slash + 1)
    text = text.slice(0, slash)
  }
  let hostIp: string | undefined
  if (text.startsWith('[')) {
    const close = text.indexOf(']:')
    if (close === -1) return undefined
    hostIp = text.slice(0, close + 1)
    text = text.slice(close + 2)
  }
  const parts = text.split(':')
  if (hostIp !== undefined && parts.length !== 2) return undefined
  if (parts.length > 3) return undefined
  if (parts.length === 3) hostIp = parts.shift()
  const container = range(parts.at(-1)!)
  if (!container) return undefined
  const hostText = parts.length === 2 ? parts[0] : ''
  const host = hostText === '' ? undefined : range(hostText)
  if (hostText !== '' && !host) return undefined
  return {form: 'short', hostIp, host, container, protocol}
}

export function classify(port: PublishedPort): PortClass {
  if (!port.host) return 'container'
  const hostSize = port.host.end - port.host.start
  return hostSize > 0 && port.container.end === port.container.start ? 'engine' : 'fixed'
}

const text = (range: PortRange) => (range.start === range.end ? String(range.start) : `${range.start}-${range.end}`)

/** The entry written back in its own form, with `host` as its host part. */
export function formatPublished(port: PublishedPort, host: PortRange | undefined = port.host): unknown {
  if (port.form === 'number') return port.container.start
  if (port.form === 'long') {
    const out: Record<string, unknown> = {target: port.container.start === port.container.end ? port.container.start : text(port.container)}
    if (host) out.published = text(host)
    if (port.hostIp !== undefined) out.host_ip = port.hostIp
    if (port.protocol !== undefined) out.protocol = port.protocol
    return {...out, ...port.rest}
  }
  const head = host ? `${port.hostIp === undefined ? '' : `${port.hostIp}:`}${text(host)}:` : port.hostIp === undefined ? '' : `${port.hostIp}::`
  return `${head}${text(port.container)}${port.protocol === undefined ? '' : `/${port.protocol}`}`
}

/** "127.0.0.1:8080/udp"-style words for reports: the host part with its address and protocol. */
export function describeHost(port: PublishedPort, host: PortRange | undefined = port.host): string {
  return `${port.hostIp === undefined ? '' : `${port.hostIp}:`}${host ? text(host) : '(engine)'}${port.protocol && port.protocol !== 'tcp' ? `/${port.protocol}` : ''}`
}

export {text as rangeText}
