/**
 * The dashboard's table (DESIGN.md §6) as plain cells: the same columns for the non-TTY snapshot
 * and the Ink screen. Columns that do not fit a width are cut with an ellipsis, the widest first.
 */
import type {ClusterRow, LocalRow, RunState} from '../core/dashboard/index.js'

import {type Column, formatTable} from './table.js'

/** `running 2/3`, `stopped`, `absent`, `?` (failed probe), `…` (probe still out). */
export function runStateCell(state: RunState | null): string {
  if (state === null) return '-'
  if (state.state === 'running') return `running ${state.running}/${state.total}`
  if (state.state === 'pending') return '…'
  if (state.state === 'unknown') return '?'
  return state.state
}

/** How long ago an ISO time was, coarsely: `40s`, `12m`, `3h`, `2d`. */
export function age(iso: string, now = Date.now()): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000))
  if (seconds < 60) return `${seconds}s`
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h`
  return `${Math.floor(seconds / 86_400)}d`
}

const offsetCell = (row: {offset: number; offsetSource: string; clashesWith: string[]}) =>
  `${row.offset} ${row.offsetSource}${row.clashesWith.length > 0 ? ` !clash ${row.clashesWith.join(',')}` : ''}`

/** Local mode columns: main and worktrees. */
export const LOCAL_COLUMNS: ReadonlyArray<Column<LocalRow>> = [
  {header: 'NAME', cell: (row) => (row.trust === 'untrusted' ? `${row.name} !untrusted` : row.name)},
  {header: 'BRANCH', cell: (row) => row.branch ?? `(detached ${row.head?.slice(0, 8) ?? ''})`},
  {header: 'OFFSET', cell: offsetCell},
  {
    header: 'PORTS',
    cell: (row) =>
      Object.entries(row.ports)
        .map(([key, port]) => `${key}=${port}`)
        .join(' ') || null,
  },
  {header: 'STACK', cell: (row) => runStateCell(row.stack)},
  {header: 'BOX', cell: (row) => runStateCell(row.box)},
  {
    header: 'GIT',
    cell: (row) =>
      row.gitPending
        ? '…'
        : row.missing
          ? 'missing'
          : [
              row.dirty ? `${row.dirty.modified}M ${row.dirty.untracked}U` : '',
              row.ahead === null ? '' : `+${row.ahead} -${row.behind}`,
            ]
              .filter(Boolean)
              .join(' ') || null,
  },
]

/** Cluster mode columns: sandboxes, their slots with branch worktrees, and cache freshness. */
export function clusterColumns(now = Date.now()): ReadonlyArray<Column<ClusterRow>> {
  return [
    {header: 'NAME', cell: (row) => row.name},
    {header: 'RUNTIME', cell: (row) => row.runtime},
    {header: 'PHASE', cell: (row) => row.phase},
    {header: 'OFFSET', cell: offsetCell},
    {
      header: 'SLOTS',
      cell: (row) =>
        row.repos
          .map(
            (repo) =>
              `${repo.slot}: ${repo.worktrees.map((worktree) => `${worktree.branch ?? '(detached)'}${worktree.dirty ? '*' : ''}`).join(',') || '-'}`,
          )
          .join('; ') || null,
    },
    {
      header: 'CACHE',
      cell: (row) =>
        row.repos
          .map((repo) => {
            const fetched = row.lastFetched[repo.key]
            const when = fetched ? ` ${age(fetched, now)}` : ''
            return `${repo.slot} ${repo.stale ? `stale${when}` : `fresh${when}`}`
          })
          .join('; ') || null,
    },
  ]
}

/** Cuts a cell to `width` characters, ending with `…` when cut. */
export function ellipsis(text: string, width: number): string {
  if (text.length <= width) return text
  return width <= 1 ? '…'.slice(0, width) : text.slice(0, width - 1) + '…'
}

/**
 * The table as lines at most `width` wide (no limit when undefined): the header first, then one
 * line per row. When it is too wide, the widest column is narrowed (never below its header's
 * length, then 3) until it fits, cells cut with `…`.
 */
export function tableLines<Row>(columns: ReadonlyArray<Column<Row>>, rows: readonly Row[], width?: number): string[] {
  const cells = [
    columns.map((column) => column.header),
    ...rows.map((row) => columns.map((column) => String(column.cell(row) ?? '-'))),
  ]
  const widths = columns.map((_, index) => Math.max(...cells.map((line) => line[index].length)))
  const total = () => widths.reduce((sum, value) => sum + value, 0) + 2 * (widths.length - 1)
  while (width !== undefined && total() > width) {
    const widest = widths.indexOf(Math.max(...widths))
    if (widths[widest] <= 3) break
    widths[widest] -= 1
  }

  return cells.map((line) =>
    line
      .map((cell, index) => ellipsis(cell, widths[index]).padEnd(widths[index]))
      .join('  ')
      .trimEnd(),
  )
}

/** The snapshot's plain text: the same table `formatTable` prints for listings. */
export function snapshotText(mode: 'local' | 'cluster', rows: LocalRow[] | ClusterRow[]): string {
  if (mode === 'cluster' && rows.length === 0) return 'no sandboxes'
  return mode === 'local'
    ? formatTable(LOCAL_COLUMNS, rows as LocalRow[])
    : formatTable(clusterColumns(), rows as ClusterRow[])
}

/** The detail pane of a row (Enter): what the table abbreviates, one fact per line. */
export function detailLines(mode: 'local' | 'cluster', row: LocalRow | ClusterRow): string[] {
  const ports =
    Object.entries(row.ports)
      .map(([key, port]) => `${key}=${port}`)
      .join(' ') || '-'
  const clashes = row.clashesWith.length > 0 ? row.clashesWith.join(', ') : 'none'
  if (mode === 'local') {
    const local = row as LocalRow
    return [
      `${local.name} — project ${local.project}, offset ${local.offset} (${local.offsetSource}), clashes: ${clashes}`,
      `path ${local.path}${local.missing ? ' (missing)' : ''}${local.locked ? ' (locked)' : ''}${local.trust === 'untrusted' ? ' (untrusted: a machine of its own)' : ''}`,
      `branch ${local.branch ?? '(detached)'} at ${local.head?.slice(0, 12) ?? '-'}, base ${local.base ?? '-'}, ahead ${local.ahead ?? '-'}, behind ${local.behind ?? '-'}`,
      `git status: ${local.dirty ? `${local.dirty.modified} modified, ${local.dirty.untracked} untracked` : '-'}`,
      `ports ${ports}; stack ${runStateCell(local.stack)}; box ${runStateCell(local.box)}`,
    ]
  }

  const sandbox = row as ClusterRow
  return [
    `${sandbox.name} — pod ${sandbox.project} on ${sandbox.runtime}, ${sandbox.phase}, offset ${sandbox.offset} (${sandbox.offsetSource}), clashes: ${clashes}`,
    `ports ${ports}`,
    ...sandbox.repos.flatMap((repo) => [
      `/work/${repo.slot}: ${repo.identity} (cache ${repo.key}${repo.stale ? ', stale' : ''})`,
      ...repo.worktrees.map(
        (worktree) =>
          `  ${worktree.path} ${worktree.branch ?? '(detached)'}${worktree.dirty ? ' — unsaved changes' : ''}`,
      ),
    ]),
  ]
}
