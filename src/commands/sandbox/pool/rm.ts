import {Args, Flags} from '@oclif/core'

import {findPool, removePool} from '../../../core/sandbox/index.js'
import {BaseCommand} from '../../base.js'

/** `yard sandbox pool rm ID | --repo URL… [--runtime R] [--dry-run]` (docs/sandboxes.md, "Warm pool"). */
export default class SandboxPoolRm extends BaseCommand {
  static aliases = ['sandbox:pool:remove']
  static summary = 'Remove a warm pool and its unclaimed pods'
  static description =
    'Stops the refill, removes every pod of the pool no sandbox has claimed and releases its leases on the caches. Sandboxes claimed from it stay: they are ordinary sandboxes.'

  static examples = [
    '<%= config.bin %> sandbox pool rm 3f2a9c1b7d04',
    '<%= config.bin %> sandbox pool rm --repo https://github.com/acme/app.git',
  ]

  static args = {id: Args.string({description: 'pool id (yard sandbox pool list)'})}
  static flags = {
    repo: Flags.string({description: 'the pool of this repository set instead of an id', multiple: true}),
    runtime: Flags.string({description: 'podman or kubernetes (default [cluster] runtime)'}),
    'dry-run': Flags.boolean({description: 'show which pods would be removed, remove nothing'}),
  }

  async run(): Promise<{id: string; pods: string[]; dryRun: boolean}> {
    const {args, flags} = await this.parse(SandboxPoolRm)
    const {backends} = this
    const pool = await findPool(this.context, backends, {id: args.id, repos: flags.repo, runtime: flags.runtime})
    const result = await removePool(this.context, backends, pool, {dryRun: flags['dry-run']})
    this.print(
      `${flags['dry-run'] ? 'would remove' : 'removed'} pool ${result.id}${result.pods.length > 0 ? ` and ${result.pods.length} pod${result.pods.length === 1 ? '' : 's'}: ${result.pods.join(', ')}` : ''}`,
    )
    return {...result, dryRun: flags['dry-run']}
  }
}
