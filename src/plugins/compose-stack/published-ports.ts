/**
 * Published ports of a resolved compose model (compose specification, "ports"): read each
 * entry, classify it, and write it back with another host part, keeping bind address and
 * protocol. Short syntax `[HOST_IP:][HOST[-HOST]:]CONTAINER[-CONTAINER][/PROTOCOL]` (an IPv6
 * HOST_IP in brackets, `[::1]:5432:5432`); long syntax `{target, published, host_ip, protocol,
 * mode}`; a bare number is a container port.
 */
import {isIP} from 'node:net'

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

/** The protocols a published port may have (the engine's, as docker/go-connections nat.ParsePortSpec checks them). */
const PROTOCOLS = new Set(['tcp', 'udp', 'sctp'])

/** A port or `start-end` range of 0..65535; the reason when it is none. */
function range(text: string, what: string): PortRange | string {
  const match = /^(\d+)(?:-(\d+))?$/.exec(text.trim())
  if (!match) return `${what} ${JSON.stringify(text)} is not a port number or range`
  const start = Number(match[1])
  const end = match[2] === undefined ? start : Number(match[2])
  if (end > 65_535) return `${what} ${text} is above 65535`
  if (end < start) return `${what} range ${text} ends before it starts`
  return {start, end}
}

/**
 * Reads one entry of a service's `ports` as Compose does (compose-go ParsePortConfig, which is
 * docker/go-connections nat.ParsePortSpec; compose specification, "ports", short and long
 * syntax): the entry, or the reason it is not one. Beyond the syntax: the container port is
 * 1..65535 (or a range of them), a host range is as long as the container range (or the
 * container port is single: the engine picks one of the range), a host port 0 means "the engine
 * picks" (as no host port), the bind address is an IP address or empty (none) (IPv6 in brackets, or bare before
 * the two port parts — `::1:80:80` — which is written back bracketed), the protocol is tcp, udp
 * or sctp.
 */
export function readPublished(entry: unknown): PublishedPort | string {
  if (typeof entry === 'number') {
    return Number.isInteger(entry) && entry >= 1 && entry <= 65_535
      ? {form: 'number', container: {start: entry, end: entry}}
      : `${entry} is not a container port (1-65535)`
  }

  if (entry !== null && typeof entry === 'object' && !Array.isArray(entry)) {
    const {target, published, host_ip: hostIp, protocol, ...rest} = entry as Record<string, unknown>
    if (target === undefined || target === null) return 'the long syntax needs `target`, the container port'
    if (typeof target !== 'number' && typeof target !== 'string') return '`target` must be a port number'
    const container = range(String(target), '`target`')
    if (typeof container === 'string') return container
    if (container.start !== container.end || container.start === 0)
      return `\`target\` ${target} is not a container port (1-65535)`
    if (published !== undefined && published !== null && typeof published !== 'number' && typeof published !== 'string')
      return '`published` must be a port number or range'
    const hostText = published === undefined || published === null ? '' : String(published)
    if (hostIp !== undefined && (typeof hostIp !== 'string' || !isIP(hostIp.replace(/^\[(.*)\]$/, '$1'))))
      return `\`host_ip\` ${JSON.stringify(hostIp)} is not an IP address`
    if (protocol !== undefined && (typeof protocol !== 'string' || !PROTOCOLS.has(protocol.toLowerCase())))
      return `\`protocol\` ${JSON.stringify(protocol)} is not tcp, udp or sctp`
    const host = hostPart(hostText, container, '`published`')
    if (typeof host === 'string') return host
    return {form: 'long', container, host, hostIp, protocol, rest}
  }

  if (typeof entry !== 'string')
    return `a port entry is a string, a number or a mapping, not ${Array.isArray(entry) ? 'a list' : String(entry)}`
  let text = entry.trim()
  let protocol: string | undefined
  const slash = text.lastIndexOf('/')
  if (slash !== -1) {
    protocol = text.slice(slash + 1)
    text = text.slice(0, slash)
    if (!PROTOCOLS.has(protocol.toLowerCase()))
      return `the protocol ${JSON.stringify(protocol)} is not tcp, udp or sctp`
  }

  let hostIp: string | undefined
  let parts: string[]
  if (text.startsWith('[')) {
    const close = text.indexOf(']:')
    if (close === -1) return 'a bracketed IPv6 address must be followed by `:` and the ports'
    hostIp = text.slice(0, close + 1)
    parts = text.slice(close + 2).split(':')
    if (parts.length !== 2) return 'after the bind address come HOST:CONTAINER (HOST may be empty)'
  } else {
    parts = text.split(':')
    // nat.ParsePortSpec's splitParts: what is before the last two parts is the address.
    if (parts.length > 3) hostIp = `[${parts.splice(0, parts.length - 2).join(':')}]`
    else if (parts.length === 3) hostIp = parts.shift()
  }

  // An empty address is none (`${BIND:-}:443:443`, as mailcow writes it): the engine binds every address.
  if (hostIp === '') hostIp = undefined
  if (hostIp !== undefined && !isIP(hostIp.replace(/^\[(.*)\]$/, '$1'))) return `${hostIp} is not an IP address`
  const container = range(parts.at(-1)!, 'the container port')
  if (typeof container === 'string') return container
  if (container.start === 0) return 'the container port 0 is not a port (1-65535)'
  const host = hostPart(parts.length === 2 ? parts[0] : '', container, 'the host port')
  if (typeof host === 'string') return host
  return {form: 'short', hostIp, host, container, protocol}
}

/** The host part against its container part: undefined when the engine picks (none, or 0). */
function hostPart(text: string, container: PortRange, what: string): PortRange | undefined | string {
  if (text === '') return undefined
  const host = range(text, what)
  if (typeof host === 'string') return host
  if (host.start === 0 && host.end === 0) return undefined
  if (host.start === 0) return `${what} range ${text} starts at 0`
  const single = container.start === container.end
  if (!single && host.end - host.start !== container.end - container.start) {
    return `the host range ${text} and the container range ${container.start}-${container.end} differ in length`
  }

  return host
}

/** Reads one entry of a service's `ports`; undefined when it is not one compose accepts (see `readPublished`). */
export function parsePublished(entry: unknown): PublishedPort | undefined {
  const port = readPublished(entry)
  return typeof port === 'string' ? undefined : port
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
    const out: Record<string, unknown> = {
      target: port.container.start === port.container.end ? port.container.start : text(port.container),
    }
    if (host) out.published = text(host)
    if (port.hostIp !== undefined) out.host_ip = port.hostIp
    if (port.protocol !== undefined) out.protocol = port.protocol
    return {...out, ...port.rest}
  }

  const head = host
    ? `${port.hostIp === undefined ? '' : `${port.hostIp}:`}${text(host)}:`
    : port.hostIp === undefined
      ? ''
      : `${port.hostIp}::`
  return `${head}${text(port.container)}${port.protocol === undefined ? '' : `/${port.protocol}`}`
}

/** "127.0.0.1:8080/udp"-style words for reports: the host part with its address and protocol. */
export function describeHost(port: PublishedPort, host: PortRange | undefined = port.host): string {
  return `${port.hostIp === undefined ? '' : `${port.hostIp}:`}${host ? text(host) : '(engine)'}${port.protocol && port.protocol !== 'tcp' ? `/${port.protocol}` : ''}`
}

export {text as rangeText}
