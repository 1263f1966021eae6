import {Flags} from '@oclif/core'

import type {StackContainer} from '../sdk/stack.js'

import {type CheckoutContainers, psAllCheckouts, stackPs} from '../core/stack/index.js'
import {InputError} from '../sdk/errors.js'
import {formatContainers} from '../tui/containers.js'
import {BaseCommand, targetArgs, targetName, worktreeFlag} from './base.js'

/** `yard ps [NAME | --all]` (DESIGN.md §4.2, Appendix A). */
export default class Ps extends BaseCommand {
  static summary = "List the targeted checkout's stack containers, or every checkout's stack and box"
  static description =
    "An exited container shows its exit code: `exited (3)`. --all lists main and every worktree, each with its stack's containers and its box (--json: [{worktree, project, stack, box}])."

  static examples = ['<%= config.bin %> ps', '<%= config.bin %> ps feat --json', '<%= config.bin %> ps --all']
  static args = targetArgs
  static flags = {
    worktree: worktreeFlag,
    all: Flags.boolean({description: "every checkout's stack and box", exclusive: ['worktree']}),
  }

  async run(): Promise<StackContainer[] | CheckoutContainers[]> {
    const {args, flags} = await this.parse(Ps)
    const worktree = targetName(args, flags)
    if (flags.all) {
      if (worktree !== undefined)
        throw new InputError(`${worktree} names a worktree, but --all was given too`, {
          fix: 'give one: yard ps NAME, or yard ps --all',
        })
      const checkouts = await psAllCheckouts(this.context, this.backends)
      this.print(
        checkouts
          .map(
            (checkout) =>
              `${checkout.worktree} (${checkout.project})\n${checkout.stack.length + checkout.box.length === 0 ? '  nothing runs' : indent(formatContainers([...checkout.stack, ...checkout.box]))}`,
          )
          .join('\n'),
      )
      return checkouts
    }

    const rows = await stackPs(this.context, this.backends, worktree)
    // As --all says it: a bare header would read as a table cut short.
    this.print(rows.length === 0 ? 'nothing runs' : formatContainers(rows))
    return rows
  }
}

const indent = (text: string) =>
  text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n')
