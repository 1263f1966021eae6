import type {ClusterRepo} from '../../../sdk/sandbox.js'

import {listClusterRepos} from '../../../core/cluster/index.js'
import {formatTable} from '../../../tui/table.js'
import {BaseCommand} from '../../base.js'

/** `yard cluster repo list [--json]`. */
export default class ClusterRepoList extends BaseCommand {
  static summary = "List the cluster's Repos: url, refresh, declared ahead, nodes holding them"
  static examples = ['<%= config.bin %> cluster repo list --json']

  async run(): Promise<ClusterRepo[]> {
    await this.parse(ClusterRepoList)
    const rows = await listClusterRepos(this.context, this.backends)
    this.print(
      rows.length === 0
        ? 'no repos'
        : formatTable(
            [
              {header: 'REPO', cell: (row: ClusterRepo) => row.key},
              {header: 'URL', cell: (row) => row.url},
              {header: 'REFRESH', cell: (row) => row.refreshInterval ?? undefined},
              {header: 'AHEAD', cell: (row) => (row.prefetch ? 'yes' : 'no')},
              {header: 'PRESENT ON', cell: (row) => row.present.join(',') || undefined},
            ],
            rows,
          ),
    )
    return rows
  }
}
