/**
 * What a worktree's stack cannot have for itself (DESIGN.md §4.2, docs/stacks.md "What stays
 * shared"), said before anything starts: `network_mode: host` (refused unless `[stack]
 * allow-shared` lists the service), fixed IP addresses and subnets (refused: two checkouts cannot
 * both hold them), bind mounts from outside the checkout and the engine socket (shared by every
 * checkout), secrets and configs read from files outside the checkout (shared).
 */
import path from 'node:path'

import type {Target} from '../../sdk/target.js'
import type {IsolationSettings} from './isolate.js'

import {type ComposeModelDocument, isMapping} from './compose/types.js'
import {ALLOW_SHARED, type ReportEntry} from './isolation-report.js'

/** Engine sockets by file name: a container holding one drives every checkout's containers. */
const SOCKET = /(^|\/)(docker|podman)\.sock$/

const inside = (dir: string, file: string) => {
  const relative = path.relative(dir, file)
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative))
}

/** The host path of a bind mount entry (short or long syntax), or undefined for volumes and tmpfs. */
export function bindSource(entry: unknown): string | undefined {
  if (typeof entry === 'string') {
    const parts = entry.split(':')
    if (parts.length < 2) return undefined
    const source = parts[0]
    return source.startsWith('/') || source.startsWith('.') || source.startsWith('~') ? source : undefined
  }

  if (isMapping(entry) && entry.type === 'bind' && typeof entry.source === 'string') return entry.source
  return undefined
}

/** The report's refusals and "shared" entries for a worktree's rendered model. */
export function sharedResources(
  compose: ComposeModelDocument,
  target: Target,
  settings: IsolationSettings,
): ReportEntry[] {
  const report: ReportEntry[] = []
  const checkout = target.checkoutPath
  for (const [name, service] of Object.entries(compose.services)) {
    if (service.network_mode === 'host') {
      report.push(
        settings.allowShared.includes(name)
          ? {
              kind: 'shared',
              service: name,
              detail: 'network_mode: host',
              action: "shares the host's network with every checkout ([stack] allow-shared); its ports do not move",
            }
          : {
              kind: 'refused',
              service: name,
              detail: "network_mode: host shares the host's network, so its ports cannot move per checkout",
              action: `remove network_mode: host (publish its ports instead), or allow it: ${ALLOW_SHARED}`,
            },
      )
    }

    if (isMapping(service.networks)) {
      for (const [network, body] of Object.entries(service.networks)) {
        for (const key of ['ipv4_address', 'ipv6_address']) {
          if (isMapping(body) && body[key] !== undefined) {
            report.push({
              kind: 'refused',
              service: name,
              detail: `${key} ${String(body[key])} on network ${network}: two checkouts cannot hold one address`,
              action: `remove ${key} (reach the service by its name), or run this stack only in main`,
            })
          }
        }
      }
    }

    const seen = new Set<string>()
    for (const entry of service.volumes ?? []) {
      const source = bindSource(entry)
      if (source === undefined || seen.has(source)) continue
      seen.add(source)
      if (SOCKET.test(source))
        report.push({
          kind: 'shared',
          service: name,
          detail: `the engine socket ${source}`,
          action: "shared by every checkout: the service sees and drives every checkout's containers",
        })
      else if (!inside(checkout, path.resolve(checkout, source)))
        report.push({
          kind: 'shared',
          service: name,
          detail: `bind mount ${source}`,
          action:
            'shared by every checkout: it is outside the checkout, so every worktree reads and writes the same files',
        })
    }
  }

  for (const [key, body] of Object.entries(compose.networks ?? {})) {
    const config = isMapping(body) && isMapping(body.ipam) && Array.isArray(body.ipam.config) ? body.ipam.config : []
    const fixed = config
      .filter(isMapping)
      .map((item) => item.subnet ?? item.ip_range ?? item.gateway)
      .filter((value) => value !== undefined)
    if (fixed.length > 0)
      report.push({
        kind: 'refused',
        service: `networks.${key}`,
        detail: `subnet ${fixed.map(String).join(', ')}: two checkouts' networks cannot hold one subnet`,
        action: 'remove ipam.config from the network (the engine picks a free subnet), or run this stack only in main',
      })
  }

  for (const section of ['secrets', 'configs'] as const) {
    for (const [key, body] of Object.entries(compose[section] ?? {})) {
      if (isMapping(body) && typeof body.file === 'string' && !inside(checkout, path.resolve(checkout, body.file))) {
        report.push({
          kind: 'shared',
          service: `${section}.${key}`,
          detail: `file ${body.file}`,
          action: 'shared by every checkout: it is read from outside the checkout',
        })
      }
    }
  }

  return report
}
