/**
 * How the dashboard's lines share the terminal's height (DESIGN.md §6, docs/dashboard.md
 * "Scrolling"): the status line always, then the selected row, the table's header and the title;
 * the panes (details, help) and more rows share what is left. When the rows do not all fit, the
 * table shows a window of them that follows the selection, with a line saying how many are above
 * and below. Every line is one terminal line: the screen never asks Ink to squeeze lines.
 */

/** What the screen has to show; `panes` are the detail pane's and the help's lines, in order. */
export interface LayoutInput {
  /** Lines the screen may use (the terminal's rows - 1). */
  height: number
  /** Rows of the table (after the filter); 0 shows one message line instead. */
  rowCount: number
  /** The selected row's index (clamped to the rows). */
  selected: number
  /** The first row of the window on the screen before, so the window moves only as far as it must. */
  start: number
  panes: string[]
}

/** Which lines are drawn: the title, the header, rows start..start+shown-1, the "more" line, the panes. */
export interface Layout {
  title: boolean
  header: boolean
  start: number
  shown: number
  /** `↑ 3 more  ↓ 12 more` when rows are hidden and there is room to say so, else undefined. */
  more?: string
  panes: string[]
}

/** Rows the table keeps before the panes get lines (fewer when there are fewer rows). */
const TABLE_MINIMUM = 5

/**
 * Lays the screen out in `height` lines: status (1), table (at least the selected row or the
 * message line), header, title, then at least `TABLE_MINIMUM` rows, the panes (cut, ending with
 * `… N more lines`), and the rest for rows; a window of rows that keeps the selection visible.
 */
export function layoutScreen(input: LayoutInput): Layout {
  const rowCount = Math.max(input.rowCount, 0)
  const selected = Math.min(Math.max(input.selected, 0), Math.max(rowCount - 1, 0))
  // The status line, and one line of table (the selected row, or the message when there are no rows).
  let left = Math.max(input.height - 2, 0)
  const header = left >= 1
  if (header) left -= 1
  const title = left >= 1
  if (title) left -= 1
  // The table's lines beyond its first: more rows, or the "more" line.
  const wanted = rowCount > 1 ? rowCount - 1 : 0
  const minimum = Math.min(Math.min(rowCount, TABLE_MINIMUM) - 1, wanted, left)
  let table = Math.max(minimum, 0)
  left -= table
  let {panes} = input
  if (panes.length > left)
    panes = left <= 0 ? [] : [...panes.slice(0, left - 1), `… ${panes.length - left + 1} more lines`]
  left -= panes.length
  table += left
  // `table` + 1 lines for the rows and, when they do not all fit, the "more" line.
  const lines = table + 1
  let shown = rowCount
  let more = false
  if (rowCount > lines) {
    more = lines >= 2
    shown = more ? lines - 1 : lines
  }

  const start =
    rowCount <= shown ? 0 : Math.min(Math.max(input.start, selected - shown + 1, 0), selected, rowCount - shown)
  const above = start
  const below = rowCount - start - shown
  return {
    title,
    header,
    start,
    shown,
    panes,
    more: more
      ? [above > 0 ? `↑ ${above} more` : '', below > 0 ? `↓ ${below} more` : ''].filter(Boolean).join('  ')
      : undefined,
  }
}
