import {machineInit, type MachineOutcome} from '../../core/machine/index.js'
import {BaseCommand, machineWorktreeFlag} from '../base.js'

/** `yard machine init` (DESIGN.md §4.3). */
export default class MachineInit extends BaseCommand {
  static summary = "Create the project's machine"
  static description =
    "podman-machine: creates [machine] name (default yard-<prefix>) with [machine] cpus, memory-mib and disk-gib, and exactly two volumes, each mounted at its own path: the main checkout and the worktrees root (instead of podman's default home mount). An existing machine is kept, with a warning when its mounts differ. `yard up` creates the machine when it is missing."

  static flags = {worktree: machineWorktreeFlag}
  static examples = ['<%= config.bin %> machine init']

  async run(): Promise<MachineOutcome> {
    const {flags} = await this.parse(MachineInit)
    const outcome = await machineInit(this.context, this.backends, flags.worktree)
    this.print(
      outcome.done
        ? `created machine ${outcome.name}; start it with \`yard machine start\``
        : `${outcome.reason}: nothing to do`,
    )
    return outcome
  }
}
