import type {MachineStatus} from '../../sdk/machine.js'

import {machineStatus} from '../../core/machine/index.js'
import {BaseCommand, machineWorktreeFlag} from '../base.js'

/** `yard machine status` (DESIGN.md §4.3, Appendix A). */
export default class MachineStatusCommand extends BaseCommand {
  static summary = 'Show the container machine yard uses'
  static description =
    "On Linux the machine is `native`: no VM, the host's podman. With podman-machine: `unresponsive` when podman says the VM runs but its API socket does not answer, and a warning with the recreate command when its mounts are not the main checkout and the worktrees root. Never creates or starts a machine."

  static flags = {worktree: machineWorktreeFlag}
  static examples = ['<%= config.bin %> machine status', '<%= config.bin %> machine status --json']

  async run(): Promise<MachineStatus> {
    const {flags} = await this.parse(MachineStatusCommand)
    const status = await machineStatus(this.context, this.backends, flags.worktree)
    const note = status.backend === 'native' ? " (no VM: the host's podman)" : ''
    const fix = status.state === 'absent' ? ' (yard machine init, or yard up)' : ''
    this.print(
      [
        `backend  ${status.backend}${note}`,
        `name     ${status.name}`,
        `state    ${status.state}${fix}`,
        `socket   ${status.socket ?? "the engine's default"}`,
        `mounts   ${status.mounts.length > 0 ? status.mounts.join(', ') : '-'}`,
        `cpus     ${status.cpus ?? '-'}  memory ${status.memoryMiB ?? '-'} MiB  disk ${status.diskGiB ?? '-'} GiB`,
      ].join('\n'),
    )
    return status
  }
}
