import {Flags} from '@oclif/core'
import {existsSync, statSync} from 'node:fs'
import path from 'node:path'

import {InputError} from '../sdk/errors.js'
import {BaseCommand} from './base.js'

/** `yard mcp [--read-only] [--project PATH]` (docs/agents.md): a Model Context Protocol server on stdio. */
export default class Mcp extends BaseCommand {
  static summary = 'Serve yard to coding agents: a Model Context Protocol server on stdin/stdout'
  static description = `Tools over the same use cases as the commands (worktree_add, worktree_list, worktree_remove, up, down, ps, logs, ports, env, box_up, box_down, exec, sandbox_create, sandbox_list, sandbox_attach, sandbox_rm, cache_list, doctor) and the resources yard://worktrees and yard://sandboxes, all on the checkout it was started in (or --project). Results are the --json shapes; errors carry code, message, why and fix. A tool call is never asked for confirmation: what a command would refuse without --force or --yes is refused (code 3) unless the call passes "force" or "yes". exec runs only in boxes and sandboxes, with a time-out and capped output. stdout carries only the protocol; warnings go to stderr and into the results. See docs/agents.md for registering it with an agent host.`
  static examples = [
    '<%= config.bin %> mcp',
    '<%= config.bin %> mcp --read-only --project ~/src/app',
    'claude mcp add yard -- yard mcp',
  ]

  static enableJsonFlag = false
  static flags = {
    'read-only': Flags.boolean({
      description: 'offer only the tools that change nothing; a call to another is refused',
      default: false,
    }),
    project: Flags.string({description: 'the checkout to serve (default: the current directory)', helpValue: 'PATH'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(Mcp)
    const project = path.resolve(flags.project ?? process.cwd())
    if (!existsSync(project) || !statSync(project).isDirectory()) {
      throw new InputError(`--project ${flags.project}: there is no directory ${project}`, {
        fix: 'name a checkout of the repository yard should serve',
      })
    }

    // The SDK loads only here: no other command pays for it.
    const {serveStdio} = await import('../core/mcp/index.js')
    await serveStdio({
      project,
      readOnly: flags['read-only'],
      backends: this.backends,
      selfRoot: this.config.root,
      version: this.config.version,
      verbose: this.isVerbose(),
    })
  }
}
