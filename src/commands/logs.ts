import {Args, Flags} from '@oclif/core'
import {existsSync} from 'node:fs'

import type {YardContext} from '../core/kernel/index.js'

import {describeTarget, stackLogs} from '../core/stack/index.js'
import {openWorkspace, worktreePath} from '../core/workspace/index.js'
import {InputError} from '../sdk/errors.js'
import {BaseCommand, worktreeFlag} from './base.js'

/** `yard logs [SERVICE…] [-f] [--tail N] [--since T] [-t]` (DESIGN.md §4.2): the stack's logs on stdout. */
export default class Logs extends BaseCommand {
  static summary = "Show the logs of the targeted checkout's stack"
  static description =
    'Every line on stdout, whichever stream the service wrote it to, led by its service name (`web | …`, as compose prints them). The words are services (default: all); the checkout is -w/--worktree NAME.'

  static examples = [
    '<%= config.bin %> logs',
    '<%= config.bin %> logs web -f -w feat',
    '<%= config.bin %> logs --tail 20 --since 10m -t',
  ]

  static strict = false
  static enableJsonFlag = false
  static args = {service: Args.string({description: 'services to show (default: all)'})}
  static flags = {
    worktree: worktreeFlag,
    follow: Flags.boolean({char: 'f', description: 'keep following new lines'}),
    tail: Flags.integer({char: 'n', description: 'only the last N lines of each service', min: 0, helpValue: 'N'}),
    since: Flags.string({
      description:
        'only lines since this time: a timestamp (2026-12-01T10:00:00) or a duration back from now (10m, 1h)',
      helpValue: 'TIME',
    }),
    timestamps: Flags.boolean({char: 't', description: "show each line's time"}),
  }

  async run(): Promise<void> {
    const {flags, argv} = await this.parse(Logs)
    if (flags.since?.startsWith('-'))
      throw new InputError(`--since ${flags.since} is not a time`, {
        fix: 'give a timestamp (2026-12-01T10:00:00) or a duration such as 10m',
      })
    const services = argv as string[]
    const outcome = await stackLogs(this.context, this.backends, {
      flag: flags.worktree,
      services,
      follow: flags.follow,
      tail: flags.tail,
      since: flags.since,
      timestamps: flags.timestamps,
    }).catch(async (error: unknown) => {
      // `yard logs feat` where feat is a worktree, not a service: the other commands take the name positionally.
      const named = flags.worktree === undefined && services.length === 1 ? services[0] : undefined
      if (error instanceof InputError && named !== undefined && (await isWorktree(this.context, named))) {
        throw new InputError(error.message, {
          why: `${error.why ? `${error.why}; ` : ''}${named} is a worktree, and the words of yard logs are services`,
          fix: `yard logs -w ${named}`,
          cause: error,
        })
      }

      throw error
    })
    if (outcome.boxOnly) this.print(`${describeTarget(outcome.target)} is box-only (no compose file): no stack logs`)
  }
}

async function isWorktree(context: YardContext, name: string): Promise<boolean> {
  try {
    return existsSync(worktreePath(await openWorkspace(context), name))
  } catch {
    return false
  }
}
