import {Args, Flags} from '@oclif/core'

import {manifestText, sandboxManifest} from '../../core/sandbox/index.js'
import {BaseCommand} from '../base.js'

/** `yard sandbox manifest NAME` (DESIGN.md §5.2): the Pod YAML. */
export default class SandboxManifest extends BaseCommand {
  static summary = "Print a sandbox's Pod manifest"
  static description =
    'The very Pod the runtime was given (podman kube play, or a cluster), as YAML; --json prints it as JSON.'

  static examples = ['<%= config.bin %> sandbox manifest feat']
  static args = {name: Args.string({description: 'sandbox name', required: true})}
  static flags = {
    runtime: Flags.string({
      description: 'podman or kubernetes (default [cluster] runtime)',
      options: ['podman', 'kubernetes'],
    }),
  }

  async run(): Promise<Record<string, unknown>> {
    const {args, flags} = await this.parse(SandboxManifest)
    const manifest = await sandboxManifest(this.context, this.backends, args.name, flags.runtime)
    if (!this.jsonEnabled()) process.stdout.write(await manifestText(manifest))
    return manifest
  }
}
