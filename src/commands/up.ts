import {loadRegistry} from '../core/registry.js'
import {describeTarget, stackUp} from '../core/stack.js'
import {BaseCommand, worktreeFlag} from './base.js'

/** `yard up` (DESIGN.md §4.2). */
export default class Up extends BaseCommand {
  static summary = "Start the targeted checkout's stack (its own compose project)"
  static description = 'Probes the checkout\'s host ports first (exit 3 when one is busy), refuses a project name owned by another checkout (exit 3), warns about host ports that do not move with the offset, then starts the compose project with the env of `yard env`. A project already running is left as it is.'
  static examples = ['<%= config.bin %> up', '<%= config.bin %> up --worktree feat']
  static flags = {worktree: worktreeFlag}

  async run(): Promise<{project: string; boxOnly: boolean}> {
    const {flags} = await this.parse(Up)
    const outcome = await stackUp(this.context, await loadRegistry(this.config), flags.worktree)
    const ports = Object.entries(outcome.target.ports).map(([key, port]) => `${key}=${port}`).join(' ')
    this.print(outcome.boxOnly
      ? `${describeTarget(outcome.target)} is box-only (no compose file): nothing to start; \`yard box up\` starts its box`
      : `${describeTarget(outcome.target)} is up${ports ? `: ${ports}` : ''}`)
    return {project: outcome.target.project, boxOnly: outcome.boxOnly}
  }
}
