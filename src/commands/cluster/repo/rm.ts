import {Args} from '@oclif/core'

import {removeClusterRepos} from '../../../core/cluster/index.js'
import {BaseCommand} from '../../base.js'

/** `yard cluster repo rm URL|KEY…`. */
export default class ClusterRepoRm extends BaseCommand {
  static summary = 'Delete Repos; each node evicts the cache once no pod on it mounts it'
  static description =
    "Deletes the Repo of each url (its cache key) or key. Every node's cache agent evicts the cache once no pod on that node that has not ended mounts it; sandboxes that still mount it keep their cache until they are removed, but it is no longer refreshed."

  static examples = ['<%= config.bin %> cluster repo rm https://github.com/acme/app.git']
  static strict = false
  static args = {repo: Args.string({description: 'repository url or cache key (several may follow)', required: true})}

  async run() {
    const {argv} = await this.parse(ClusterRepoRm)
    const results = await removeClusterRepos(this.context, this.backends, argv as string[])
    for (const result of results) {
      this.print(
        `${result.removed ? 'removed' : 'no Repo'} ${result.key}${result.mountedBy.length > 0 ? ` (still mounted by ${result.mountedBy.join(', ')}: its nodes evict it once those end)` : ''}`,
      )
    }

    return results
  }
}
