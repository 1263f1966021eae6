import {Args, Flags} from '@oclif/core'

import type {SandboxAttachResult} from '../../sdk/sandbox.js'

import {attachSandbox} from '../../core/sandbox/index.js'
import {BaseCommand} from '../base.js'

/** `yard sandbox attach NAME [--branch BRANCH]` (DESIGN.md §5.2): idempotent. */
export default class SandboxAttach extends BaseCommand {
  static summary = 'Attach a branch worktree in every slot of a sandbox'
  static description =
    'Starts from the remote\'s now: each cache is fetched first (podman: this machine\'s cache; kubernetes: the pod\'s node is asked through the Repo\'s spec.askedAt and waited for, within [cluster] cache-timeout-seconds) — a failure warns that the cache is stale and since when, and attach goes on — then /work/<slot>/default fetches from the cache and fast-forwards. Creates /work/<slot>/<branch with "/" → "-"> from origin/HEAD (or the --repo #REF) with no upstream; what exists is kept as it is, uncommitted work included. Branch "default" and a directory holding another branch are refused.'

  static examples = ['<%= config.bin %> sandbox attach feat --branch feat/login']
  static args = {name: Args.string({description: 'sandbox name', required: true})}
  static flags = {
    branch: Flags.string({description: 'branch (default wt/NAME)'}),
    runtime: Flags.string({
      description: 'podman or kubernetes (default [cluster] runtime)',
      options: ['podman', 'kubernetes'],
    }),
  }

  async run(): Promise<SandboxAttachResult & {name: string}> {
    const {args, flags} = await this.parse(SandboxAttach)
    const result = await attachSandbox(this.context, this.backends, {
      name: args.name,
      branch: flags.branch,
      runtime: flags.runtime,
    })
    for (const slot of result.slots)
      this.print(`${slot.slot}: ${slot.path} on ${result.branch}${slot.created ? '' : ' (already attached)'}`)
    return result
  }
}
