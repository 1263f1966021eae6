import {Args} from '@oclif/core'

import {fillPool} from '../../../core/sandbox/index.js'
import {BaseCommand} from '../../base.js'

/** `yard sandbox pool fill ID`: the refill `pool set` and each claim start in the background (sandbox-pool-fill.ts). */
export default class SandboxPoolFill extends BaseCommand {
  static hidden = true
  static summary = 'Refill a warm pool until it is full, then exit'
  static args = {id: Args.string({description: 'pool id', required: true})}

  async run(): Promise<{made: string[]; removed: string[]}> {
    const {args} = await this.parse(SandboxPoolFill)
    const result = await fillPool(this.context, this.backends, args.id)
    this.print(`made ${result.made.length} pod(s), removed ${result.removed.length}`)
    return result
  }
}
