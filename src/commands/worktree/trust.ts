import {Args, Flags} from '@oclif/core'

import {setWorktreeTrust, type TrustOutcome, whereItRuns} from '../../core/worktree/index.js'
import {InputError} from '../../sdk/errors.js'
import {BaseCommand} from '../base.js'

/** `yard worktree trust NAME --untrusted|--trusted` (docs/worktrees.md, "Untrusted worktrees"). */
export default class WorktreeTrust extends BaseCommand {
  static hiddenAliases = ['wt:trust']
  static summary = 'Mark a worktree untrusted (a machine of its own) or trusted again'
  static description = `--untrusted records it in the main checkout's yard.local.toml ([worktrees.NAME] trust = "untrusted"): its stack and box then run on a machine of their own, yard-<prefix>-NAME, that mounts only this worktree and the git dir read-only (on the native backend: the host's podman, with the box's mounts narrowed so and the compose file checked before every up). Refused (exit 3) while its stack or box still runs on the shared machine.
--trusted deletes the record: it runs on the shared machine again. Refused (exit 3) while its own machine exists (yard machine rm --worktree NAME removes it).`

  static examples = [
    '<%= config.bin %> worktree trust pr-123 --untrusted',
    '<%= config.bin %> worktree trust pr-123 --trusted',
  ]

  static args = {
    name: Args.string({description: 'the worktree', required: true}),
  }

  static flags = {
    untrusted: Flags.boolean({description: 'run it on a machine of its own', exclusive: ['trusted']}),
    trusted: Flags.boolean({description: 'run it on the shared machine again', exclusive: ['untrusted']}),
  }

  async run(): Promise<TrustOutcome> {
    const {args, flags} = await this.parse(WorktreeTrust)
    if (flags.untrusted === flags.trusted)
      throw new InputError('say which: --untrusted or --trusted', {
        fix: `yard worktree trust ${args.name} --untrusted (or --trusted)`,
      })
    const outcome = await setWorktreeTrust(this.context, this.backends, {
      name: args.name,
      trust: flags.untrusted ? 'untrusted' : 'trusted',
    })
    const where = whereItRuns(outcome.trust, outcome.machine, outcome.machineBackend)
    this.print(`worktree ${outcome.name} ${outcome.changed ? 'is now' : 'is already'} ${outcome.trust}: ${where}`)
    return outcome
  }
}
