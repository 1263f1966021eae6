import {type MachineOutcome, machineStop} from '../../core/machine/index.js'
import {BaseCommand, machineWorktreeFlag} from '../base.js'

/** `yard machine stop` (DESIGN.md §4.3). */
export default class MachineStop extends BaseCommand {
  static summary = "Stop the project's machine"
  static description = 'Every stack and box of the project stops with it; volumes stay on its disk.'
  static flags = {worktree: machineWorktreeFlag}
  static examples = ['<%= config.bin %> machine stop']

  async run(): Promise<MachineOutcome> {
    const {flags} = await this.parse(MachineStop)
    const outcome = await machineStop(this.context, this.backends, flags.worktree)
    this.print(outcome.done ? `stopped machine ${outcome.name}` : `${outcome.reason}: nothing to do`)
    return outcome
  }
}
