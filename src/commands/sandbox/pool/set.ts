import {Flags} from '@oclif/core'

import {type PoolDefinition, poolSet} from '../../../core/sandbox/index.js'
import {BaseCommand} from '../../base.js'

/** `yard sandbox pool set --repo [SLOT=]URL… --size N [--runtime R]` (docs/sandboxes.md, "Warm pool"). */
export default class SandboxPoolSet extends BaseCommand {
  static summary = 'Keep N ready sandbox pods for a repository set'
  static description =
    "Defines (or resizes) the warm pool of that repository set on a runtime: N pods with the caches mounted read-only and default/ cloned in every slot, made in the background. `yard sandbox create NAME` with the same --repo set (any #REF) claims one: it becomes NAME's sandbox with the identity a cold create gives, and the pool refills. On podman every repository must be cached (yard cache add); on kubernetes the pods are ordinary pods of [cluster] namespace, and a claim relabels one."

  static examples = ['<%= config.bin %> sandbox pool set --repo https://github.com/acme/app.git --size 2']
  static flags = {
    repo: Flags.string({
      description: 'repository: [SLOT=]URL (repeatable; the same set and order as sandbox create gets)',
      multiple: true,
      required: true,
    }),
    size: Flags.string({description: 'ready pods to keep (1–20)', required: true}),
    runtime: Flags.string({description: 'podman or kubernetes (default [cluster] runtime)'}),
  }

  async run(): Promise<PoolDefinition> {
    const {flags} = await this.parse(SandboxPoolSet)
    const pool = await poolSet(this.context, this.backends, {
      repos: flags.repo,
      size: flags.size,
      runtime: flags.runtime,
    })
    this.print(
      `pool ${pool.id} (${pool.runtime}) keeps ${pool.size} ready pod${pool.size === 1 ? '' : 's'} of ${pool.repos.join(' ')}; filling in the background (yard sandbox pool list)`,
    )
    return pool
  }
}
