import {Flags} from '@oclif/core'

import {ENV_FORMATS, renderEnv, stackEnv} from '../core/config/index.js'
import {implicitPortEnv, stackImplicitPorts} from '../core/identity/index.js'
import {machineSocketEnv} from '../core/machine/index.js'
import {resolveTarget} from '../core/workspace/index.js'
import {BaseCommand, targetArgs, targetName, worktreeFlag} from './base.js'

export default class Env extends BaseCommand {
  static summary = "Print the environment a checkout's stack and box get"
  static description =
    'Use `eval "$(yard env)"` in sh/bash/zsh, or `yard env --format fish | source`. WORKTREE is unset for the main checkout, so ${WORKTREE:-main} works in compose files. CONTAINER_HOST and DOCKER_HOST point at the machine\'s socket when it has one and runs (nothing is started). Host ports the compose file publishes itself are exported as YARD_PORT_<SERVICE>_<PORT>, with _UDP after it for a udp port (the port as written in the file → the port this checkout publishes).'

  static examples = ['eval "$(<%= config.bin %> env --worktree feat)"', '<%= config.bin %> env --format json']
  static args = targetArgs
  static flags = {
    worktree: worktreeFlag,
    format: Flags.string({description: 'output format', options: [...ENV_FORMATS], default: 'sh'}),
  }

  /** `--format json` means the same as `--json` (DESIGN.md Appendix A): the result and errors are JSON. */
  public jsonEnabled(): boolean {
    if (super.jsonEnabled()) return true
    const end = this.argv.indexOf('--')
    const args = end === -1 ? this.argv : this.argv.slice(0, end)
    return args.some((arg, index) => arg === '--format=json' || (arg === '--format' && args[index + 1] === 'json'))
  }

  async run(): Promise<Record<string, string>> {
    const {args, flags} = await this.parse(Env)
    const worktree = targetName(args, flags)
    const {workspace, target} = await resolveTarget(this.context, worktree)
    const implicit = await stackImplicitPorts(this.context, this.backends)(workspace, target)
    const env = {
      ...stackEnv(target, this.context, await machineSocketEnv(this.context, this.backends, workspace, target.name)),
      ...implicitPortEnv(implicit),
    }
    if (flags.format !== 'json')
      this.printData(renderEnv(env, flags.format as 'sh' | 'fish', target.isMain ? ['WORKTREE'] : []))
    return env
  }
}
