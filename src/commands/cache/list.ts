import type {CacheStatus} from '../../sdk/cache.js'

import {openCache} from '../../core/cache/index.js'
import {formatAge, formatBytes} from '../../core/kernel/index.js'
import {type Column, formatTable} from '../../tui/table.js'
import {BaseCommand} from '../base.js'

/** `yard cache list` (DESIGN.md Appendix A). */
export default class CacheList extends BaseCommand {
  static aliases = ['cache:ls']
  static summary = 'List the caches: freshness, packs, loose objects, size and borrowers'
  static description =
    'STATE is `fresh 37s` (the last fetch or clone succeeded, that long ago), `stale 2h` (the latest attempt failed; the cache is used as it is), `adopted` (found in place, not fetched yet), `failed` (no clone yet: its error is in ERROR) or `missing`. --json has the timestamps and byte counts.'

  static examples = ['<%= config.bin %> cache list', '<%= config.bin %> cache list --json']

  async run(): Promise<CacheStatus[]> {
    await this.parse(CacheList)
    const {cache, root} = await openCache(this.context, this.backends)
    const rows = await cache.list(root)
    const now = Date.now()
    const columns: Array<Column<CacheStatus>> = [
      {header: 'KEY', cell: (row) => row.key},
      {header: 'IDENTITY', cell: (row) => row.identity},
      {header: 'STATE', cell: (row) => cacheState(row, now)},
      {header: 'PACKS', cell: (row) => row.packs},
      {header: 'LOOSE', cell: (row) => row.looseObjects},
      {header: 'SIZE', cell: (row) => formatBytes(row.sizeBytes)},
      {
        header: 'BORROWERS',
        cell: (row) => row.borrowers.map((lease) => `${lease.kind}/${lease.name}`).join(',') || undefined,
      },
    ]
    // A failed clone or fetch shows its error here too, not only in --json.
    if (rows.some((row) => row.lastError !== null))
      columns.push({header: 'ERROR', cell: (row) => row.lastError && errorGist(row.lastError)})
    this.print(formatTable(columns, rows))
    return rows
  }
}

/** `fresh 37s`, `stale 2h`, `adopted`, `failed` or `missing`: what a person needs from a cache's record. */
function cacheState(row: CacheStatus, now: number): string {
  if (!row.present) return row.lastError === null ? 'missing' : 'failed'
  if (!row.stale && row.lastFetched === null) return 'adopted'
  const age = row.lastFetched === null ? '' : ` ${formatAge(now - Date.parse(row.lastFetched))}`
  return `${row.stale ? 'stale' : 'fresh'}${age}`
}

/** The part of a recorded git failure that says why (`fatal: repository … does not exist`), at most 120 characters. */
function errorGist(error: string): string {
  const line = error.trim().split('\n').at(-1) ?? ''
  const said = /(?:fatal|error): .*$/.exec(line)?.[0] ?? line
  return said.length > 120 ? `${said.slice(0, 119)}…` : said
}
