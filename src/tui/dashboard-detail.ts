/**
 * The detail pane of a row (Enter, DESIGN.md §6) as lines: what the table abbreviates, then for
 * a local row the facts asked for when the pane opened — containers with their ports, recent
 * log lines and `git status` — each "…" until they come.
 */
import type {CheckoutDetails, ClusterRow, DashboardMode, LocalRow} from '../core/dashboard/index.js'

import {detailLines} from './dashboard-table.js'

/** `web running 38839→8080`: a container's service, state and published ports. */
function containerLine(container: CheckoutDetails['containers'][number]): string {
  const ports = container.ports.map((port) => `${port.host}→${port.container}`).join(' ')
  return `  ${container.service || container.container}  ${container.state}${ports ? `  ${ports}` : ''}  (${container.container})`
}

/**
 * The pane's lines for `row`. `facts` undefined: still being asked ("…"); `error`: why they
 * could not be had. Cluster rows need no facts beyond the row.
 */
export function detailPaneLines(
  mode: DashboardMode,
  row: LocalRow | ClusterRow,
  facts?: CheckoutDetails,
  error?: string,
): string[] {
  const lines = detailLines(mode, row)
  if (mode !== 'local') return lines
  if (error) return [...lines, `details: ${error}`]
  if (!facts) return [...lines, 'services: …', 'recent logs: …', 'git status --short: …']
  return [
    ...lines,
    facts.containers.length === 0 ? 'services: nothing runs' : 'services:',
    ...facts.containers.map(containerLine),
    facts.logs === null
      ? 'recent logs: none from this stack backend'
      : facts.logs.length === 0
        ? 'recent logs: none'
        : 'recent logs:',
    ...(facts.logs ?? []).map((line) => `  ${line}`),
    'git status --short:',
    ...facts.git.map((line) => `  ${line}`),
    ...(facts.gitMore > 0 ? [`  … ${facts.gitMore} more`] : []),
    ...facts.notes.map((note) => `note: ${note}`),
  ]
}
