import {Args, Flags} from '@oclif/core'

import {addClusterRepos} from '../../../core/cluster/index.js'
import {BaseCommand} from '../../base.js'

/** `yard cluster repo add URL… [--refresh 10m]` (docs/cluster.md, "Repositories declared ahead"). */
export default class ClusterRepoAdd extends BaseCommand {
  static summary = 'Declare repositories every node caches before any sandbox needs them'
  static description =
    "Creates a Repo (named by the cache key) with spec.prefetch for each url, or marks an existing one so: every node's cache agent clones it at once and keeps it fresh, so a first sandbox create finds a warm cache. Urls the cluster cannot fetch (local paths, file://, localhost) are exit 2 before anything is made."

  static examples = [
    '<%= config.bin %> cluster repo add https://github.com/acme/app.git https://github.com/acme/lib.git --refresh 10m',
  ]

  static strict = false
  static args = {url: Args.string({description: 'repository url (several may follow)', required: true})}
  static flags = {
    refresh: Flags.string({description: "how often each node fetches it, e.g. 10m (default the agent's --interval)"}),
  }

  async run() {
    const {argv, flags} = await this.parse(ClusterRepoAdd)
    const results = await addClusterRepos(this.context, this.backends, argv as string[], {refresh: flags.refresh})
    for (const result of results) this.print(`${result.action.padEnd(9)} Repo ${result.key} ${result.url}`)
    return results
  }
}
