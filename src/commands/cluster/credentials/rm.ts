import {Args} from '@oclif/core'

import {removeCredential} from '../../../core/cluster/index.js'
import {BaseCommand} from '../../base.js'

/** `yard cluster credentials rm PREFIX`. */
export default class ClusterCredentialsRm extends BaseCommand {
  static summary = 'Remove the credentials of a url prefix'
  static description =
    'Deletes the entry of URL-PREFIX from the Secret yard-cache-credentials; the agents stop using it once the kubelet updates the mounted Secret. A prefix without an entry is exit 2.'

  static examples = ['<%= config.bin %> cluster credentials rm https://github.com/acme/']
  static args = {prefix: Args.string({description: 'the url prefix as `credentials list` shows it', required: true})}

  async run(): Promise<{prefix: string}> {
    const {args} = await this.parse(ClusterCredentialsRm)
    const result = await removeCredential(this.context, this.backends, args.prefix)
    this.print(`removed the credentials of ${result.prefix}`)
    return result
  }
}
