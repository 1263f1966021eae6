import {Args} from '@oclif/core'

import {relaySandbox} from '../../../core/sandbox/index.js'
import {BaseCommand} from '../../base.js'

/**
 * `yard sandbox pool relay NAME`: the host ports of a sandbox claimed from a pool, started by
 * create (port-relay.ts).
 */
export default class SandboxPoolRelay extends BaseCommand {
  static hidden = true
  static summary = "Relay a claimed sandbox's host ports to its pod until the sandbox is removed"
  static args = {name: Args.string({description: 'sandbox name', required: true})}

  async run(): Promise<void> {
    const {args} = await this.parse(SandboxPoolRelay)
    await relaySandbox(this.context, this.backends, args.name)
  }
}
