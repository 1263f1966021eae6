import type {StackContainer} from '../sdk/stack.js'

import {formatTable} from './table.js'

/** The table `yard ps` and `yard box ps` print. */
export function formatContainers(rows: readonly StackContainer[]): string {
  return formatTable(
    [
      {header: 'SERVICE', cell: (row: StackContainer) => row.service},
      {header: 'CONTAINER', cell: (row) => row.container},
      {header: 'STATE', cell: (row) => (row.exitCode === undefined ? row.state : `${row.state} (${row.exitCode})`)},
      {header: 'PORTS', cell: (row) => row.ports.map((port) => `${port.host}->${port.container}`).join(', ') || null},
    ],
    rows,
  )
}
