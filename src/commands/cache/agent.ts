import {Flags} from '@oclif/core'

import type {CacheAgentPass} from '../../core/backend.js'
import {openCache, parseInterval} from '../../core/cache.js'
import {loadRegistry} from '../../core/registry.js'
import {BaseCommand} from '../base.js'

/** `yard cache agent [--interval 5m] [--once]` (DESIGN.md §5.1): the loop a node runs. */
export default class CacheAgent extends BaseCommand {
  static summary = 'Keep the caches of this node fresh: refresh, serve asks, adopt and sweep'
  static description = 'Refreshes each cache on its interval (±20 % jitter) and on borrowers\' asks, at most 4 at once; adopts unknown repositories named like caches (pinned, not fetched) and removes cache-named entries that are not repositories and that nobody borrows — only in a root carrying .yard-cache-root. Stops on SIGINT or SIGTERM after the fetches in flight.'
  static examples = ['<%= config.bin %> cache agent', '<%= config.bin %> cache agent --interval 10m', '<%= config.bin %> cache agent --once --json']
  static flags = {
    interval: Flags.string({description: 'refresh interval (ms, s, m or h)', default: '5m'}),
    once: Flags.boolean({description: 'one pass, then exit'}),
  }

  async run(): Promise<CacheAgentPass> {
    const {flags} = await this.parse(CacheAgent)
    const intervalMs = parseInterval(flags.interval, '--interval')
    const {cache, root} = await openCache(this.context, await loadRegistry(this.config))
    const stop = new AbortController()
    const onSignal = () => stop.abort()
    process.once('SIGINT', onSignal).once('SIGTERM', onSignal)
    try {
      return await cache.agent(root, {intervalMs, once: flags.once, signal: stop.signal, onEvent: (event) => this.print(`${event.action} ${event.key}${event.detail ? `: ${event.detail}` : ''}`)})
    } finally {
      process.off('SIGINT', onSignal).off('SIGTERM', onSignal)
    }
  }
}
