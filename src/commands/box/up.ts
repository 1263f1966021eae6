import {Flags} from '@oclif/core'

import {boxUp} from '../../core/machine/index.js'
import {describeSharedStop, describeTarget} from '../../core/stack/index.js'
import {BaseCommand, targetArgs, targetName, worktreeFlag} from '../base.js'

/** `yard box up` (DESIGN.md §4.2). */
export default class BoxUp extends BaseCommand {
  static summary = "Start the targeted checkout's dev box"
  static description =
    "Container <project>-box from [box] image (default: yard's own image, built once when missing), on the stack's network, with the main checkout and the worktrees root mounted at their own paths and the env of `yard env` plus YARD_IN_BOX=1."

  static examples = ['<%= config.bin %> box up', '<%= config.bin %> box up --worktree feat']
  static args = targetArgs
  static flags = {
    worktree: worktreeFlag,
    'stop-shared': Flags.boolean({
      description:
        'an untrusted worktree: stop the shared machine first when it runs (one VM at a time); the stacks that go down are listed',
    }),
  }

  async run(): Promise<{
    project: string
    image: string
    started: boolean
    stoppedShared: {machine: string; stacks: string[]} | null
  }> {
    const {args, flags} = await this.parse(BoxUp)
    const worktree = targetName(args, flags)
    const outcome = await boxUp(this.context, this.backends, worktree, {stopShared: flags['stop-shared']})
    if (outcome.stoppedShared) this.print(describeSharedStop(outcome.stoppedShared))
    if (outcome.builtImage) this.print(`built ${outcome.image}`)
    this.print(
      `${describeTarget(outcome.target)}: box ${outcome.target.project}-box ${outcome.started ? 'started' : 'was already running'} (${outcome.image})`,
    )
    return {
      project: outcome.target.project,
      image: outcome.image,
      started: outcome.started,
      stoppedShared: outcome.stoppedShared ?? null,
    }
  }
}
