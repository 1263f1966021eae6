import {Args, Flags} from '@oclif/core'

import {loadRegistry} from '../../core/registry.js'
import {removeSandbox, RemoveResult} from '../../core/sandbox-rm.js'
import {BaseCommand} from '../base.js'

/** `yard sandbox rm NAME [--force] [--dry-run]` (DESIGN.md §5.2). */
export default class SandboxRm extends BaseCommand {
  static summary = 'Remove a sandbox pod and release its caches'
  static description = 'Refuses (exit 3) while a slot holds modified or untracked files or commits not on origin, listing them. --force first saves a git bundle of every branch and a patch of uncommitted changes under <state dir>/sandboxes/<name>/ and says where.'
  static examples = ['<%= config.bin %> sandbox rm feat', '<%= config.bin %> sandbox rm feat --force --dry-run']
  static args = {name: Args.string({description: 'sandbox name', required: true})}
  static flags = {
    force: Flags.boolean({description: 'save unsaved work as a bundle and patches, then remove'}),
    'dry-run': Flags.boolean({description: 'show what would be saved and removed, change nothing'}),
    runtime: Flags.string({description: 'podman or kubernetes (default [cluster] runtime)', options: ['podman', 'kubernetes']}),
  }

  async run(): Promise<RemoveResult> {
    const {args, flags} = await this.parse(SandboxRm)
    const result = await removeSandbox(this.context, await loadRegistry(this.config), {name: args.name, force: flags.force, dryRun: flags['dry-run'], runtime: flags.runtime})
    const verb = result.dryRun ? 'would' : 'did'
    for (const line of result.unsaved) this.print(`unsaved: ${line}`)
    if (result.savedIn) this.print(result.dryRun ? `would save a bundle and patches under ${result.savedIn}` : `saved ${result.saved.length} file(s) under ${result.savedIn}:\n  ${result.saved.join('\n  ')}`)
    this.print(`${verb === 'would' ? 'would remove' : 'removed'} sandbox ${result.name} (pod ${result.project})`)
    return result
  }
}
