import type {CacheStatus} from '../../core/backend.js'
import {openCache} from '../../core/cache.js'
import {loadRegistry} from '../../core/registry.js'
import {formatTable} from '../../tui/table.js'
import {BaseCommand} from '../base.js'

/** `yard cache list` (DESIGN.md Appendix A). */
export default class CacheList extends BaseCommand {
  static aliases = ['cache:ls']
  static summary = 'List the caches: freshness, packs, loose objects, size and borrowers'
  static examples = ['<%= config.bin %> cache list', '<%= config.bin %> cache list --json']

  async run(): Promise<CacheStatus[]> {
    await this.parse(CacheList)
    const {cache, root} = await openCache(this.context, await loadRegistry(this.config))
    const rows = await cache.list(root)
    this.print(
      formatTable(
        [
          {header: 'KEY', cell: (row: CacheStatus) => row.key},
          {header: 'IDENTITY', cell: (row) => row.identity},
          {header: 'PRESENT', cell: (row) => (row.present ? 'yes' : 'no')},
          {header: 'LAST FETCHED', cell: (row) => row.lastFetched},
          {header: 'STALE', cell: (row) => (row.stale ? 'yes' : 'no')},
          {header: 'PACKS', cell: (row) => row.packs},
          {header: 'LOOSE', cell: (row) => row.looseObjects},
          {header: 'SIZE', cell: (row) => `${(row.sizeBytes / 1048576).toFixed(1)} MiB`},
          {header: 'BORROWERS', cell: (row) => row.borrowers.map((lease) => `${lease.kind}/${lease.name}`).join(',') || undefined},
        ],
        rows,
      ),
    )
    return rows
  }
}
