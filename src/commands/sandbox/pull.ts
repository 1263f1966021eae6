import {Args, Flags} from '@oclif/core'

import {type PullResult, pullSandbox} from '../../core/sandbox/index.js'
import {BaseCommand} from '../base.js'

/** `yard sandbox pull NAME[/BRANCH]` (DESIGN.md §5.2): a sandbox's branch into the main checkout. */
export default class SandboxPull extends BaseCommand {
  static summary = 'Fetch a sandbox branch into the main checkout as refs/remotes/sandbox/NAME/BRANCH'
  static description =
    "The branch is bundled inside the pod and copied out by the runtime, so it works when the pod cannot push (an origin that is a path on this host). --branch LOCAL also creates or fast-forwards a local branch; one that has commits the sandbox's lacks is refused (exit 3) unless --force."

  static examples = [
    '<%= config.bin %> sandbox pull feat/login',
    '<%= config.bin %> sandbox pull feat/login --branch login',
  ]

  static args = {
    target: Args.string({description: 'NAME or NAME/BRANCH (default: the branch attached at create)', required: true}),
  }

  static flags = {
    slot: Flags.string({description: 'the slot (default: the first)'}),
    branch: Flags.string({description: 'also create or fast-forward this local branch', helpValue: 'LOCAL'}),
    force: Flags.boolean({
      description: "move --branch LOCAL even when it has commits the sandbox's branch lacks",
      default: false,
    }),
    runtime: Flags.string({
      description: 'podman or kubernetes (default [cluster] runtime)',
      options: ['podman', 'kubernetes'],
    }),
  }

  async run(): Promise<PullResult> {
    const {args, flags} = await this.parse(SandboxPull)
    const result = await pullSandbox(this.context, this.backends, {
      target: args.target,
      slot: flags.slot,
      branch: flags.branch,
      force: flags.force,
      runtime: flags.runtime,
    })
    this.print(
      [
        `${result.ref} at ${result.commit}`,
        ...(result.local ? [`${result.local.ref} ${result.local.action}`] : []),
      ].join('\n'),
    )
    return result
  }
}
