import {completionCandidates, type CompletionCommand} from '../core/host/index.js'
import {BaseCommand} from './base.js'

/** `yard complete -- WORD…` (hidden): what the scripts of `yard completion` call on every TAB. */
export default class Complete extends BaseCommand {
  static hidden = true
  static summary = 'Print the completions of the last word (for the scripts of yard completion)'
  static strict = false
  static enableJsonFlag = false

  async run(): Promise<void> {
    // The words are the user's half-typed command line, never this command's flags.
    const split = this.argv.indexOf('--')
    const words = split === -1 ? [...this.argv] : this.argv.slice(split + 1)
    await this.parse(Complete, [])
    // oclif lists each alias as a command of its own too: completion keys them to the command they name.
    const aliases = new Set(
      this.config.commands.flatMap((command) => [...command.aliases, ...(command.hiddenAliases ?? [])]),
    )
    const commands: CompletionCommand[] = this.config.commands
      .filter((command) => !command.hidden && !aliases.has(command.id))
      .map((command) => ({
        id: command.id,
        names: [command.id, ...command.aliases, ...(command.hiddenAliases ?? [])],
        flags: Object.entries(command.flags ?? {})
          .filter(([, flag]) => !flag.hidden)
          .map(([name, flag]) => ({name, char: flag.char, takesValue: flag.type === 'option'})),
      }))
    // Notes and warnings of the lookups would land in the middle of the user's command line.
    const quiet = {...this.context, warn() {}}
    const candidates = await completionCandidates(quiet, this.backends, commands, words)
    if (candidates.length > 0) process.stdout.write(candidates.join('\n') + '\n')
  }
}
