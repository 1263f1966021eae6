import {Flags} from '@oclif/core'

import {type MachineOutcome, machineRm} from '../../core/machine/index.js'
import {BaseCommand, machineWorktreeFlag} from '../base.js'

/** `yard machine rm` (DESIGN.md §4.3): destroys the VM's disk, so it asks first. */
export default class MachineRm extends BaseCommand {
  static aliases = ['machine:remove']
  static summary = "Remove the project's machine with its disk"
  static description =
    'Every container, image and volume inside the machine goes with it; the checkouts on the host stay. Asks for confirmation on a terminal; without one, pass --yes (else exit 3). --dry-run says what would go.'

  static examples = [
    '<%= config.bin %> machine rm --dry-run',
    '<%= config.bin %> machine rm --yes',
    '<%= config.bin %> machine rm --worktree pr-123 --yes',
  ]

  static flags = {
    yes: Flags.boolean({char: 'y', description: 'do not ask for confirmation', default: false}),
    'dry-run': Flags.boolean({description: 'say what would be removed; remove nothing', default: false}),
    worktree: machineWorktreeFlag,
  }

  async run(): Promise<MachineOutcome & {dryRun: boolean}> {
    const {flags} = await this.parse(MachineRm)
    const outcome = await machineRm(this.context, this.backends, {
      dryRun: flags['dry-run'],
      worktree: flags.worktree,
      confirm: async (question) => this.confirmOrRefuse(question, {yes: flags.yes, flag: '--yes'}),
    })
    this.print(
      outcome.done
        ? `removed machine ${outcome.name}`
        : flags['dry-run']
          ? (outcome.reason ?? '')
          : `${outcome.reason}: nothing to do`,
    )
    return {...outcome, dryRun: flags['dry-run']}
  }
}
