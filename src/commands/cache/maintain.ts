import {Args, Flags} from '@oclif/core'

import type {CacheMaintainResult} from '../../sdk/cache.js'

import {maintainCaches, openCache} from '../../core/cache/index.js'
import {InputError} from '../../sdk/errors.js'
import {BaseCommand} from '../base.js'

/** `yard cache maintain [URL | --all] [--force]` (DESIGN.md §5.1). */
export default class CacheMaintain extends BaseCommand {
  static summary = 'Repack a cache into one pack, keeping every object'
  static description =
    'Runs git repack -a -d -k, git commit-graph write --reachable and git pack-refs --all when the cache has 50 packs or 500 loose objects (always with --force). Never gc, never prune: objects that clones borrow are kept.'

  static examples = [
    '<%= config.bin %> cache maintain https://github.com/acme/app.git --force',
    '<%= config.bin %> cache maintain --all',
  ]

  static args = {url: Args.string({description: 'repository url or absolute path'})}
  static flags = {
    all: Flags.boolean({description: 'every cache with a known url', exclusive: ['url']}),
    force: Flags.boolean({description: 'maintain even below the thresholds'}),
  }

  async run(): Promise<CacheMaintainResult[]> {
    const {args, flags} = await this.parse(CacheMaintain)
    if (args.url === undefined && !flags.all)
      throw new InputError('give a URL or --all', {
        why: 'yard cache maintain acts on one cache or on every cache',
        fix: 'yard cache maintain URL, or yard cache maintain --all',
      })
    const {cache, root} = await openCache(this.context, this.backends)
    const results = await maintainCaches(cache, root, args.url, flags.force)
    for (const result of results) {
      const counts = `${result.after.packs} packs, ${result.after.looseObjects} loose objects`
      this.print(
        result.ran
          ? `maintained ${result.key} (${result.reason}): ${counts}`
          : `left ${result.key} alone: ${result.reason}`,
      )
    }

    return results
  }
}
