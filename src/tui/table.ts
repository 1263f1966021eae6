/**
 * Plain-text tables for listing commands when `--json` is not set: one header row, columns
 * padded to their widest cell, two spaces apart, no trailing spaces. No colour, so the output
 * is the same on a TTY, in a pipe and in tests.
 */

/** One column: its header and how to get a row's cell (null and undefined print as `-`). */
export interface Column<Row> {
  header: string
  cell: (row: Row) => string | number | null | undefined
}

/** Renders rows under their headers; an empty list renders the header row only. */
export function formatTable<Row>(columns: ReadonlyArray<Column<Row>>, rows: readonly Row[]): string {
  const cells = [
    columns.map((column) => column.header),
    ...rows.map((row) => columns.map((column) => String(column.cell(row) ?? '-'))),
  ]
  const widths = columns.map((_, index) => Math.max(...cells.map((line) => line[index].length)))
  return cells
    .map((line) =>
      line
        .map((cell, index) => cell.padEnd(widths[index]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')
}
