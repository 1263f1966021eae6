/**
 * The dashboard's screen rules that need no terminal (DESIGN.md §6, docs/dashboard.md): the key
 * table (which keys apply in which mode; the help screen is made from it), the rows' order, the
 * filter and where the selection goes, and how a long status message keeps its end.
 */
import type {ClusterRow, DashboardMode, LocalRow} from '../core/dashboard/index.js'

/** One key of the screen: what it does, and the modes it applies in. */
export interface KeyEntry {
  key: string
  what: string
  modes: readonly DashboardMode[]
  /** The status line when it is pressed in a mode it does not apply in. */
  elsewhere?: string
}

const BOTH = ['local', 'cluster'] as const
const LOCAL_ONLY = ['local'] as const

/**
 * Every key, in the order of the `?` screen; docs/dashboard.md's keys table names the same keys
 * in the same order (a test compares them).
 */
export const KEY_TABLE: readonly KeyEntry[] = [
  {key: '↑/↓ j/k', what: 'select', modes: BOTH},
  {key: 'Tab', what: 'local ⇄ cluster', modes: BOTH},
  {key: 'Enter', what: 'details of the row', modes: BOTH},
  {key: 'n', what: 'new worktree/sandbox', modes: BOTH},
  {
    key: 'u',
    what: 'stack up',
    modes: LOCAL_ONLY,
    elsewhere: 'u: a sandbox has no stack to start (its pod runs while it exists); Tab goes to the worktrees',
  },
  {
    key: 'd',
    what: 'stack down',
    modes: LOCAL_ONLY,
    elsewhere: 'd: a sandbox has no stack to stop (x removes it); Tab goes to the worktrees',
  },
  {
    key: 'b',
    what: 'box up',
    modes: LOCAL_ONLY,
    elsewhere: 'b: a sandbox is its own box (e opens a shell in it); Tab goes to the worktrees',
  },
  {
    key: 'l',
    what: "follow the stack's logs",
    modes: LOCAL_ONLY,
    elsewhere: 'l: sandboxes have no stack logs here (yard exec SANDBOX -- … runs in one); Tab goes to the worktrees',
  },
  {key: 'x', what: 'remove (asks first)', modes: BOTH},
  {key: 'e', what: 'shell in the box or sandbox', modes: BOTH},
  {key: 'r', what: 'refresh now', modes: BOTH},
  {key: '/', what: 'filter by name or branch', modes: BOTH},
  {key: '?', what: 'this help (Esc closes it)', modes: BOTH},
  {key: 'q', what: 'quit', modes: BOTH},
  {key: 'Ctrl-C', what: 'quit (exit 130)', modes: BOTH},
]

/**
 * The keys of the `?` screen as [key, what it does]; docs/dashboard.md's keys table names the
 * same keys in the same order (a test compares them).
 */
export const HELP_KEYS: ReadonlyArray<readonly [string, string]> = KEY_TABLE.map(
  (entry) => [entry.key, entry.modes.length === 1 ? `${entry.what} (${entry.modes[0]})` : entry.what] as const,
)

/** The `?` screen: the keys two to a line, each as `KEY  what`, the second column aligned at least 3 spaces on. */
export const HELP_LINES: string[] = (() => {
  const entries = HELP_KEYS.map(([key, what]) => `${key}  ${what}`)
  const width = Math.max(...entries.map((entry) => entry.length))
  const lines: string[] = []
  for (let index = 0; index < entries.length; index += 2)
    lines.push([entries[index].padEnd(width), entries[index + 1] ?? ''].join(' '.repeat(3)).trimEnd())
  return lines
})()

/**
 * Why `e` cannot hand the terminal over for `row`, known from the row itself (no box), or
 * undefined: the screen then stays and says so in the status line.
 */
export function shellProblem(mode: DashboardMode, row: LocalRow | ClusterRow): string | undefined {
  if (mode !== 'local') return undefined
  const local = row as LocalRow
  if (local.box === null) return `no box for ${local.name}: the stack backend has none`
  if (local.box.state === 'absent')
    return `no box for ${local.name}: run yard box up${local.name === 'main' ? '' : ` --worktree ${local.name}`} (u starts only the stack)`
  return undefined
}

/** What the status line says for `input` in `mode` when the key does not apply there, else undefined. */
export function keyNotApplying(mode: DashboardMode, input: string): string | undefined {
  const entry = KEY_TABLE.find((candidate) => candidate.key === input)
  return entry && !entry.modes.includes(mode) ? (entry.elsewhere ?? `${input} does nothing in ${mode} mode`) : undefined
}

const collator = new Intl.Collator('en', {numeric: true})

/** The rows in screen order: main first, then by name in natural order (`w2` before `w10`). */
export function sortRows<Row extends {name: string}>(rows: readonly Row[], mode: DashboardMode): Row[] {
  return [...rows].sort((left, right) => {
    if (mode === 'local' && (left.name === 'main') !== (right.name === 'main')) return left.name === 'main' ? -1 : 1
    return collator.compare(left.name, right.name)
  })
}

/** The rows whose name or branch contains `filter` (all rows for an empty one). */
export function filterRows<Row extends {name: string; branch?: string | null}>(
  rows: readonly Row[],
  filter: string,
): Row[] {
  return filter === ''
    ? [...rows]
    : rows.filter((row) => row.name.includes(filter) || (row.branch ?? '').includes(filter))
}

/**
 * Where the selection goes when the rows change (a refresh, a filter, a row made): onto the row
 * named `name` when it is there, else the same index, kept within the rows.
 */
export function selectionIn(rows: ReadonlyArray<{name: string}>, name: string | undefined, index: number): number {
  const found = name === undefined ? -1 : rows.findIndex((row) => row.name === name)
  if (found >= 0) return found
  return Math.max(0, Math.min(index, rows.length - 1))
}

/** Status lines the screen gives a message before the rest of it goes into a pane. */
export const STATUS_LINES = 3

/**
 * `text` cut into lines of at most `width` characters, at spaces where there are any.
 */
export function wrapText(text: string, width: number): string[] {
  const lines: string[] = []
  for (const paragraph of text.split('\n')) {
    let line = ''
    for (const word of paragraph.split(' ')) {
      let rest = word
      while (rest.length > 0) {
        const room = width - (line === '' ? 0 : line.length + 1)
        if (rest.length <= room) {
          line = line === '' ? rest : `${line} ${rest}`
          rest = ''
        } else if (line === '') {
          lines.push(rest.slice(0, width))
          rest = rest.slice(width)
        } else {
          lines.push(line)
          line = ''
        }
      }
    }

    lines.push(line)
  }

  return lines
}

/**
 * How a status message is shown at `width` columns: wrapped; at most `STATUS_LINES` lines at the
 * bottom, which are its last ones (the end holds the question `y/N` or the fix), and when it is
 * longer, the whole message also in a pane above so nothing of it is lost.
 */
export function statusLayout(text: string, width: number): {lines: string[]; pane: string[]} {
  const lines = wrapText(text, Math.max(width, 10))
  if (lines.length <= STATUS_LINES) return {lines, pane: []}
  const pane = wrapText(text, Math.max(width - 2, 10)).map((line) => `  ${line}`)
  return {lines: ['(the whole message is above)', ...lines.slice(-(STATUS_LINES - 1))], pane: ['message:', ...pane]}
}
