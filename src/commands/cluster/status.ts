import type {ClusterStatus as Status} from '../../sdk/sandbox.js'

import {clusterStatus} from '../../core/cluster/index.js'
import {age} from '../../tui/dashboard-table.js'
import {formatTable} from '../../tui/table.js'
import {BaseCommand} from '../base.js'

/** `yard cluster status [--json]` (DESIGN.md §5.2, Appendix A). */
export default class ClusterStatus extends BaseCommand {
  static summary = "Show the cache agent on each node and every Repo's state per node"
  static description =
    "Reads [cluster] namespace of [cluster] context: the cache agent DaemonSet and its pods (node, phase, ready, restarts), and every Repo (one per cache key) with each node's entry: present, when it last fetched, and its last error."

  static examples = ['<%= config.bin %> cluster status', '<%= config.bin %> cluster status --json']

  async run(): Promise<Status> {
    await this.parse(ClusterStatus)
    const status = await clusterStatus(this.context, this.backends)
    const agent = status.agent
      ? `${status.agent.ready}/${status.agent.desired} ready, image ${status.agent.image}`
      : 'not installed (run yard cluster install)'
    this.print(`context ${status.context}, namespace ${status.namespace}\ncache agent: ${agent}`)
    if (status.agents.length > 0) {
      this.print(
        formatTable(
          [
            {header: 'NODE', cell: (row: Status['agents'][number]) => row.node ?? '(unscheduled)'},
            {header: 'POD', cell: (row) => row.pod},
            {header: 'PHASE', cell: (row) => row.phase},
            {header: 'READY', cell: (row) => (row.ready ? 'yes' : 'no')},
            {header: 'RESTARTS', cell: (row) => row.restarts},
          ],
          status.agents,
        ),
      )
    }

    interface RepoRow {
      repo: Status['repos'][number]
      node?: Status['repos'][number]['nodes'][number]
    }
    const rows: RepoRow[] = status.repos.flatMap((repo) =>
      repo.nodes.length > 0 ? repo.nodes.map((node) => ({repo, node})) : [{repo}],
    )
    this.print(
      status.repos.length === 0
        ? 'no repos'
        : formatTable(
            [
              {header: 'REPO', cell: (row: RepoRow) => row.repo.key},
              {header: 'URL', cell: (row) => row.repo.url},
              {header: 'NODE', cell: (row) => row.node?.node ?? '(none yet)'},
              {header: 'PRESENT', cell: (row) => (row.node ? (row.node.present ? 'yes' : 'no') : undefined)},
              {
                header: 'FETCHED',
                cell: (row) => (row.node?.lastFetched ? `${age(row.node.lastFetched)} ago` : undefined),
              },
              {header: 'CREDENTIALS', cell: (row) => row.node?.credentials ?? undefined},
              {header: 'ERROR', cell: (row) => row.node?.lastError ?? undefined},
            ],
            rows,
          ),
    )
    return status
  }
}
