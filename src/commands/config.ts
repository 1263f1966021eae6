import {type ConfigReport, targetConfigReport} from '../core/config/index.js'
import {BaseCommand, targetArgs, targetName, worktreeFlag} from './base.js'

export default class ConfigCommand extends BaseCommand {
  static summary = 'Show every configuration value and where it comes from'
  static description =
    "Project-wide tables come from the main checkout's yard.toml, [ports], [stack] and [box] from the targeted checkout's when it has them, then yard.local.toml, then environment overrides."

  static examples = ['<%= config.bin %> config', '<%= config.bin %> config --worktree feat --json']
  static args = targetArgs
  static flags = {worktree: worktreeFlag}

  async run(): Promise<ConfigReport> {
    const {args, flags} = await this.parse(ConfigCommand)
    const worktree = targetName(args, flags)
    const report = await targetConfigReport(this.context, worktree)
    const width = Math.max(...Object.keys(report).map((key) => key.length))
    for (const [key, {value, origin}] of Object.entries(report)) {
      this.print(
        `${key.padEnd(width)}  ${value === null || value === undefined ? '(unset)' : JSON.stringify(value)}  ← ${origin}`,
      )
    }

    return report
  }
}
