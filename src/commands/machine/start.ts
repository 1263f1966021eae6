import {type MachineOutcome, machineStart} from '../../core/machine/index.js'
import {BaseCommand, machineWorktreeFlag} from '../base.js'

/** `yard machine start` (DESIGN.md §4.3). */
export default class MachineStart extends BaseCommand {
  static summary = "Start the project's machine"
  static description =
    "podman-machine: podman runs one machine at a time on macOS, so this refuses (exit 3) while another podman machine runs, naming it and the ways out. Waits until the machine's API socket answers. A running machine is left as it is."

  static flags = {worktree: machineWorktreeFlag}
  static examples = ['<%= config.bin %> machine start']

  async run(): Promise<MachineOutcome> {
    const {flags} = await this.parse(MachineStart)
    const outcome = await machineStart(this.context, this.backends, flags.worktree)
    this.print(outcome.done ? `started machine ${outcome.name}` : `${outcome.reason}: nothing to do`)
    return outcome
  }
}
