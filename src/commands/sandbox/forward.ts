import {Args, Flags} from '@oclif/core'

import {type ForwardResult, forwardSandbox} from '../../core/sandbox/index.js'
import {InputError} from '../../sdk/errors.js'
import {formatArgv} from '../../sdk/process.js'
import {BaseCommand} from '../base.js'

/** `yard sandbox forward NAME [--runtime] [--dry-run]` (DESIGN.md §5.2). */
export default class SandboxForward extends BaseCommand {
  static summary = "Forward a sandbox's [ports] to this machine"
  static description =
    'Every [ports] key: local port base + offset → container port base, the same numbers a worktree of that name gets. On the kubernetes runtime this runs one `kubectl port-forward` until Ctrl-C (exit code passed through); the podman runtime already publishes them as host ports, so it lists them and exits 0. --dry-run prints the kubectl command without running it; --json needs --dry-run on kubernetes (kubectl writes to stdout).'

  static examples = [
    '<%= config.bin %> sandbox forward feat',
    '<%= config.bin %> sandbox forward feat --runtime kubernetes --dry-run --json',
  ]

  static args = {name: Args.string({description: 'sandbox name', required: true})}
  static flags = {
    runtime: Flags.string({
      description: 'podman or kubernetes (default [cluster] runtime)',
      options: ['podman', 'kubernetes'],
    }),
    'dry-run': Flags.boolean({description: 'print the forwarding command, run nothing'}),
  }

  async run(): Promise<ForwardResult> {
    const {args, flags} = await this.parse(SandboxForward)
    const result = await forwardSandbox(this.context, this.backends, {
      name: args.name,
      runtime: flags.runtime,
      dryRun: flags['dry-run'],
      onStart: (plan) => {
        if (this.jsonEnabled())
          throw new InputError('--json needs --dry-run when kubectl port-forward runs', {
            why: "kubectl's own output would mix into the JSON on stdout",
            fix: `yard sandbox forward ${args.name} --dry-run --json`,
          })
        for (const line of describe(plan)) this.logToStderr(line)
        this.logToStderr('Ctrl-C stops forwarding')
      },
    })
    if (result.forwards.length === 0) this.print(`sandbox ${result.name} has no [ports] keys: nothing to forward`)
    else if (result.published)
      this.print(
        [
          `the ${result.runtime} runtime already publishes the ports of ${result.name} on this machine:`,
          ...describe(result),
        ].join('\n'),
      )
    else if (result.dryRun) this.print(formatArgv(result.argv!))
    if (result.exitCode !== null && result.exitCode !== 0) this.exit(result.exitCode)
    return result
  }
}

function describe(result: ForwardResult): string[] {
  return result.forwards.map(
    (forward) => `  ${forward.key}: localhost:${forward.local} → ${result.project}:${forward.container}`,
  )
}
