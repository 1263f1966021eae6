import {machineStop, MachineOutcome} from '../../core/machine.js'
import {loadRegistry} from '../../core/registry.js'
import {BaseCommand} from '../base.js'

/** `yard machine stop` (DESIGN.md §4.3). */
export default class MachineStop extends BaseCommand {
  static summary = "Stop the project's machine"
  static description = 'Every stack and box of the project stops with it; volumes stay on its disk.'
  static examples = ['<%= config.bin %> machine stop']

  async run(): Promise<MachineOutcome> {
    await this.parse(MachineStop)
    const outcome = await machineStop(this.context, await loadRegistry(this.config))
    this.print(outcome.done ? `stopped machine ${outcome.name}` : `${outcome.reason}: nothing to do`)
    return outcome
  }
}
