import type {ClusterCredential} from '../../../sdk/sandbox.js'

import {listCredentials} from '../../../core/cluster/index.js'
import {formatTable} from '../../../tui/table.js'
import {BaseCommand} from '../../base.js'

/** `yard cluster credentials list [--json]`: prefixes and kinds, never a secret. */
export default class ClusterCredentialsList extends BaseCommand {
  static summary = 'List the url prefixes the cache agents have credentials for (never the secrets)'
  static examples = ['<%= config.bin %> cluster credentials list', '<%= config.bin %> cluster credentials list --json']

  async run(): Promise<ClusterCredential[]> {
    await this.parse(ClusterCredentialsList)
    const rows = await listCredentials(this.context, this.backends)
    this.print(
      rows.length === 0
        ? 'no credentials'
        : formatTable(
            [
              {header: 'PREFIX', cell: (row: ClusterCredential) => row.prefix},
              {header: 'KIND', cell: (row) => (row.kind === 'token' ? 'https token' : 'ssh key')},
              {header: 'USER', cell: (row) => row.username ?? undefined},
              {
                header: 'KNOWN HOSTS',
                cell: (row) => (row.kind === 'ssh' ? (row.knownHosts ? 'yes' : 'no (first use)') : undefined),
              },
            ],
            rows,
          ),
    )
    return rows
  }
}
