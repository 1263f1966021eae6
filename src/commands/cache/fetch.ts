import {Args, Flags} from '@oclif/core'

import type {CacheFetchResult} from '../../sdk/cache.js'

import {fetchCaches, openCache} from '../../core/cache/index.js'
import {InputError} from '../../sdk/errors.js'
import {BaseCommand, quietFlag} from '../base.js'

/** `yard cache fetch [URL | --all]` (DESIGN.md §5.1): fetch in place, never pruning. */
export default class CacheFetch extends BaseCommand {
  static summary = 'Fetch a cache (or every cache) in place'
  static description =
    'Runs git fetch origin in the cache, never with --prune, then maintains the cache when it has 50 packs or 500 loose objects. A failed fetch leaves the cache usable: it exits 1 saying since when the cache is stale.'

  static examples = [
    '<%= config.bin %> cache fetch https://github.com/acme/app.git',
    '<%= config.bin %> cache fetch --all',
  ]

  static args = {url: Args.string({description: 'repository url or absolute path'})}
  static flags = {
    all: Flags.boolean({description: 'every cache with a known url', exclusive: ['url']}),
    quiet: quietFlag,
  }

  async run(): Promise<CacheFetchResult[]> {
    const {args, flags} = await this.parse(CacheFetch)
    if (args.url === undefined && !flags.all)
      throw new InputError('give a URL or --all', {
        why: 'yard cache fetch acts on one cache or on every cache',
        fix: 'yard cache fetch URL, or yard cache fetch --all',
      })
    const {cache, root, lfs} = await openCache(this.context, this.backends)
    const results = await fetchCaches(cache, root, args.url, lfs)
    for (const result of results)
      this.print(`fetched ${result.identity ?? result.key}${result.maintained ? ' (maintained)' : ''}`)
    return results
  }
}
