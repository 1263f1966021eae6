import {type BackendEntry} from '../core/registry/index.js'
import {formatTable} from '../tui/table.js'
import {BaseCommand} from './base.js'

/** `yard backends` (DESIGN.md §7, Appendix A): every backend the installed plugins provide. */
export default class Backends extends BaseCommand {
  static summary = 'List the backends that plugins provide, and the plugins that failed to provide one'
  static description = `Runs every plugin's yard:backends hook. A plugin that throws, times out, returns a malformed backend or declares an unsupported contract is listed as broken or incompatible, with the reason, and skipped.`
  static examples = ['<%= config.bin %> backends', '<%= config.bin %> backends --json']

  async run(): Promise<BackendEntry[]> {
    await this.parse(Backends)
    const entries = await this.backends.entries()
    this.print(
      formatTable(
        [
          {header: 'ID', cell: (entry: BackendEntry) => entry.id},
          {header: 'KIND', cell: (entry) => entry.kind},
          {header: 'PLUGIN', cell: (entry) => entry.plugin},
          {header: 'VERSION', cell: (entry) => entry.version},
          {header: 'CONTRACT', cell: (entry) => entry.contract},
          {header: 'STATUS', cell: (entry) => entry.status},
          {header: 'ERROR', cell: (entry) => entry.error},
        ],
        entries,
      ),
    )
    return entries
  }
}
