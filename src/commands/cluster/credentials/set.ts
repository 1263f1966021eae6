import {Args, Flags} from '@oclif/core'

import {setCredential} from '../../../core/cluster/index.js'
import {BaseCommand} from '../../base.js'

/**
 * `yard cluster credentials set PREFIX --token-from-env VAR | --ssh-key FILE` (docs/cluster.md,
 * "Private repositories").
 */
export default class ClusterCredentialsSet extends BaseCommand {
  static summary = 'Store the credentials the cache agents use for repositories under a url prefix'
  static description = `Creates or replaces the entry for URL-PREFIX in the Secret yard-cache-credentials of [cluster] namespace, which every node's cache agent mounts read-only and hands to git for the Repos whose url starts with it (the longest prefix wins): an https token through a credential helper scoped to the prefix's host, a deploy key through GIT_SSH_COMMAND. The token is read from the environment variable named by --token-from-env, never from an argument, and is shown nowhere; sandboxes never see it (they read the caches). The agents see a change once the kubelet updates the mounted Secret (about a minute).`
  static examples = [
    'read -rs GITHUB_TOKEN && export GITHUB_TOKEN && <%= config.bin %> cluster credentials set https://github.com/acme/ --token-from-env GITHUB_TOKEN',
    '<%= config.bin %> cluster credentials set git@github.com:acme/ --ssh-key ~/.ssh/acme_deploy --known-hosts ~/.ssh/known_hosts',
  ]

  static args = {
    prefix: Args.string({
      description: 'url prefix, e.g. https://github.com/acme/ or git@github.com:acme/',
      required: true,
    }),
  }

  static flags = {
    'token-from-env': Flags.string({description: 'name of the environment variable holding the https token'}),
    username: Flags.string({description: 'https user name sent with the token (default x-access-token)'}),
    'ssh-key': Flags.string({description: 'private key file of a deploy key (ssh urls)'}),
    'known-hosts': Flags.string({description: 'known_hosts file for the ssh host (default: trust on first use)'}),
  }

  async run() {
    const {args, flags} = await this.parse(ClusterCredentialsSet)
    const result = await setCredential(this.context, this.backends, {
      prefix: args.prefix,
      tokenFromEnv: flags['token-from-env'],
      username: flags.username,
      sshKey: flags['ssh-key'],
      knownHosts: flags['known-hosts'],
    })
    const {entry} = result
    this.print(
      `${result.action === 'created' ? 'created' : 'updated'} Secret ${result.secret}: ${entry.prefix} → ${entry.kind === 'token' ? `https token (user ${entry.username})` : `ssh deploy key${entry.knownHosts ? ' with known hosts' : ''}`}`,
    )
    return result
  }
}
