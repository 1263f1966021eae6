import {Args} from '@oclif/core'

import type {CacheAddResult, CacheFetchResult} from '../../sdk/cache.js'

import {addCache, openCache} from '../../core/cache/index.js'
import {BaseCommand, quietFlag} from '../base.js'

/** `yard cache add URL` (DESIGN.md §5.1): clone when missing, adopt when found. */
export default class CacheAdd extends BaseCommand {
  static summary = 'Clone a repository into its cache, or adopt the repository already there'
  static description =
    "Clones with git clone --bare and pins the cache (no gc, no pruning, no background maintenance) before anything can fetch into it. A bare repository already at the cache's path is adopted: pinned, not fetched. Each submodule of the default branch (nested ones too) gets a cache of its own; with [cache] lfs (default: when the repository uses LFS) the LFS objects of every ref are fetched into the cache. A url already cached is said so and fetched in place."

  static examples = [
    '<%= config.bin %> cache add https://github.com/acme/app.git',
    '<%= config.bin %> cache add /srv/git/app.git --json',
  ]

  static args = {url: Args.string({description: 'repository url or absolute path', required: true})}
  static flags = {quiet: quietFlag}

  async run(): Promise<CacheAddResult & {fetch?: CacheFetchResult}> {
    const {args} = await this.parse(CacheAdd)
    const {cache, root, lfs} = await openCache(this.context, this.backends)
    const result = await addCache(cache, root, args.url, lfs)
    if (!result.fetch) this.print(`${result.action} ${result.identity} → ${result.path}`)
    else if (result.fetch.stale)
      this.print(
        `${result.identity} is already cached in ${result.path}; the fetch failed, the cache stays as it was (stale): ${result.fetch.error?.trim().split('\n').at(-1) ?? ''}`,
      )
    else this.print(`${result.identity} is already cached in ${result.path}: fetched`)
    for (const submodule of result.submodules ?? [])
      this.print(
        `  submodule ${submodule.path}: ${submodule.present ? submodule.cachePath : `no cache (${submodule.error})`}`,
      )
    return result
  }
}
