import {Args} from '@oclif/core'

import {loadRegistry} from '../../../core/registry.js'
import {relaySandbox} from '../../../core/sandbox-pool-fill.js'
import {BaseCommand} from '../../base.js'

/** `yard sandbox pool relay NAME`: the host ports of a sandbox claimed from a pool, started by create (port-relay.ts). */
export default class SandboxPoolRelay extends BaseCommand {
  static hidden = true
  static summary = "Relay a claimed sandbox's host ports to its pod until the sandbox is removed"
  static args = {name: Args.string({description: 'sandbox name', required: true})}

  async run(): Promise<void> {
    const {args} = await this.parse(SandboxPoolRelay)
    await relaySandbox(this.context, await loadRegistry(this.config), args.name)
  }
}
