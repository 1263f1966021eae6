import {Args} from '@oclif/core'

import {type RepoIdentity, repoIdentity} from '../../sdk/repo-identity.js'
import {BaseCommand} from '../base.js'

/** `yard cache identity URL` (DESIGN.md §5.1, Appendix A): pure, touches nothing. */
export default class CacheIdentity extends BaseCommand {
  static summary = 'Show the identity and cache key of a repository url'
  static description =
    'Every spelling of one repository (https or ssh, with credentials or a .git suffix) has one identity, host[:port]/path or an absolute path, and one cache key derived from it. A url starting with "-" is refused: pass it after -- to see why.'

  static examples = [
    '<%= config.bin %> cache identity git@github.com:acme/app.git',
    '<%= config.bin %> cache identity https://github.com/acme/app --json',
  ]

  static args = {url: Args.string({description: 'repository url or absolute path', required: true})}

  async run(): Promise<RepoIdentity> {
    const {args} = await this.parse(CacheIdentity)
    const result = repoIdentity(args.url)
    this.print(`identity  ${result.identity}\nkey       ${result.key}\nscheme    ${result.scheme}`)
    return result
  }
}
