import {Args, Flags} from '@oclif/core'

import type {CacheEvictResult} from '../../sdk/cache.js'

import {evictCache} from '../../core/cache/index.js'
import {BaseCommand} from '../base.js'

/** `yard cache evict URL [--dry-run]` (DESIGN.md §5.1): no force, a borrowed cache is never evicted. */
export default class CacheEvict extends BaseCommand {
  static aliases = ['cache:rm', 'cache:remove']
  static summary = 'Delete a whole cache that nobody borrows'
  static description =
    'Refuses (exit 3) while a live borrower holds a lease, naming it; there is no --force. Leases whose holders are provably gone are cleared first: a clone directory that no longer exists, a process that ended, a sandbox whose pod is gone (the sandbox backend is asked).'

  static examples = ['<%= config.bin %> cache evict https://github.com/acme/app.git --dry-run']
  static args = {url: Args.string({description: 'repository url or absolute path', required: true})}
  static flags = {'dry-run': Flags.boolean({description: 'show what would be removed, remove nothing'})}

  async run(): Promise<CacheEvictResult> {
    const {args, flags} = await this.parse(CacheEvict)
    const result = await evictCache(this.context, this.backends, args.url, {dryRun: flags['dry-run']})
    for (const cleared of result.clearedLeases)
      this.context.warn(
        `${result.dryRun ? 'would clear' : 'cleared'} the lease of ${cleared.borrower.kind} ${cleared.borrower.name}: ${cleared.reason}`,
      )
    this.print(result.removed.map((entry) => `${result.dryRun ? 'would remove' : 'removed'} ${entry}`).join('\n'))
    return result
  }
}
