import {Args, Flags} from '@oclif/core'

import {execAnywhere} from '../core/sandbox/index.js'
import {InputError} from '../sdk/errors.js'
import {BaseCommand, targetName, worktreeFlag} from './base.js'

/** `yard exec [NAME] -- CMD…` (DESIGN.md §4.2): exit codes pass through. */
export default class Exec extends BaseCommand {
  static summary = "Run a command in a checkout's dev box"
  static description =
    "Runs CMD in the box of worktree NAME (default: the targeted checkout), in the checkout's directory. The `--` is required. The command's exit code is yard's; 125/126/127 mean the engine failed / the command cannot run / was not found, as with podman exec; a stopped box is exit 1. On a terminal the command gets one at the terminal's size, following resizes. In a sandbox on the kubernetes runtime the command runs through kubectl exec (-it on a terminal; the directory through sh -c 'cd \"$1\" && shift && exec \"$@\"', your words staying arguments), and kubectl's exit code is yard's."

  static examples = [
    '<%= config.bin %> exec feat -- git status',
    "<%= config.bin %> exec -- sh -c 'echo $WORKTREE'",
    '<%= config.bin %> exec feat/feat/login -- git status',
  ]

  static usage = ['exec [NAME] [--local] -- CMD [ARG…]', 'exec SANDBOX/BRANCH -- CMD [ARG…]']
  static strict = false
  static enableJsonFlag = false
  static args = {
    name: Args.string({
      description:
        'worktree name or main (default: YARD_WORKTREE, the current directory, main); SANDBOX/BRANCH for a sandbox',
    }),
  }

  static flags = {
    worktree: worktreeFlag,
    sandbox: Flags.string({description: "run in this sandbox's attached branch", helpValue: 'NAME'}),
    slot: Flags.string({description: 'the sandbox slot (default: the first)'}),
    local: Flags.boolean({description: "the worktree's box, even when a sandbox has the name"}),
  }

  async run(): Promise<void> {
    const split = this.argv.indexOf('--')
    if (split === -1) {
      throw new InputError('yard exec needs `--` before the command', {
        why: 'everything after `--` is the command, passed on as it is; before it only the worktree name',
        fix: 'yard exec [NAME] -- CMD [ARG…], e.g. yard exec feat -- git status',
      })
    }

    const command = this.argv.slice(split + 1)
    const {args, argv, flags} = await this.parse(Exec, this.argv.slice(0, split))
    if (argv.length > 1)
      throw new InputError(`yard exec takes one worktree name before \`--\`, got ${argv.length}: ${argv.join(' ')}`, {
        fix: 'yard exec [NAME] -- CMD [ARG…]',
      })
    const code = await execAnywhere(this.context, this.backends, {
      ...flags,
      name: targetName(args, flags),
      argv: command,
      tty: Boolean(process.stdin.isTTY),
    })
    if (code !== 0) this.exit(code)
  }
}
