import {Args, Flags} from '@oclif/core'

import {createdLines, SANDBOX_RUNTIMES} from '../../cli/sandbox-created.js'
import {type CreateResult, createSandbox} from '../../core/sandbox/index.js'
import {BaseCommand, quietFlag} from '../base.js'

/** `yard sandbox create NAME --repo [SLOT=]URL[#REF]…` (DESIGN.md §5.2). */
export default class SandboxCreate extends BaseCommand {
  static summary = 'Create a sandbox pod on read-only caches and attach a branch'
  static description =
    "Every --repo is ensured in the cache (a failed clone stops here; a failed fetch goes on with a stale warning) and leased; the pod gets the same project name, offset and ports a worktree of that name would; each slot gets /work/<slot>/default (a --shared clone of the cache) and the branch worktree beside it. With --runtime kubernetes the nodes' cache agents hold the caches instead: create declares a Repo per cache key, then waits for the pod to be Ready ([cluster] ready-timeout-seconds) and for its node to hold every cache ([cluster] cache-timeout-seconds); a failure leaves nothing behind."

  static examples = [
    '<%= config.bin %> sandbox create feat --repo https://github.com/acme/app.git --repo lib=git@github.com:acme/lib.git#develop --branch feat/login',
    '<%= config.bin %> sandbox create feat --runtime kubernetes --repo https://github.com/acme/app.git',
  ]

  static args = {name: Args.string({description: 'sandbox name (a DNS-1123 label)', required: true})}
  static flags = {
    quiet: quietFlag,
    repo: Flags.string({
      description: 'repository: [SLOT=]URL[#REF] (repeatable; the first is the first slot)',
      multiple: true,
      required: true,
    }),
    branch: Flags.string({description: 'branch to attach in every slot (default wt/NAME)'}),
    runtime: Flags.string({
      description: 'podman or kubernetes (default [cluster] runtime)',
      options: [...SANDBOX_RUNTIMES],
    }),
    image: Flags.string({description: "the workspace image (default [cluster] image, else yard's default image)"}),
  }

  async run(): Promise<CreateResult> {
    const {args, flags} = await this.parse(SandboxCreate)
    const result = await createSandbox(this.context, this.backends, {
      name: args.name,
      repos: flags.repo,
      branch: flags.branch,
      runtime: flags.runtime,
      image: flags.image,
    })
    for (const line of createdLines(result)) this.print(line)
    return result
  }
}
