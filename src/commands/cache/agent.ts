import {Flags} from '@oclif/core'

import type {CacheAgentPass} from '../../sdk/cache.js'

import {parseInterval, runCacheAgent} from '../../core/cache/index.js'
import {BaseCommand} from '../base.js'

/** `yard cache agent [--interval 5m] [--once] [--kubernetes]` (DESIGN.md §5.1): the loop a node runs. */
export default class CacheAgent extends BaseCommand {
  static summary = 'Keep the caches of this node fresh: refresh, serve asks, adopt and sweep'
  static description =
    "Refreshes each cache on its interval (±20 % jitter) and on borrowers' asks, at most 4 at once; answers the fetch-through asks of this machine's podman sandboxes whose cache it holds (not with --once); adopts unknown repositories named like caches (pinned, not fetched) and removes cache-named entries that are not repositories and that nobody borrows — only in a root carrying .yard-cache-root. Stops on SIGINT or SIGTERM after the fetches in flight.\n\nWith --kubernetes (the cache DaemonSet; NODE_NAME names the node) the cluster drives it: a Repo's cache is cloned once a pod on this node mounts it, refreshed on the Repo's refreshInterval and when the Repo's spec.askedAt is newer than the ask this node served last (reported as lastAsked), and evicted once its Repo is gone and no pod on this node that has not ended mounts it; the fetch-through asks of the sandbox pods on this node (<cache root>.asks/<pod>/<key>) are answered with an on-demand fetch, at most one start per cache every 2 s; the agent writes only its node's entry of each Repo's status (present, lastFetched, lastError, lastAsked). The root is [cluster] cache-root (outside a checkout: YARD_CACHE_ROOT, else /var/lib/yard/<namespace>/caches)."

  static examples = [
    '<%= config.bin %> cache agent',
    '<%= config.bin %> cache agent --interval 10m',
    '<%= config.bin %> cache agent --once --json',
    'NODE_NAME=node-1 <%= config.bin %> cache agent --kubernetes --once --json',
  ]

  static flags = {
    interval: Flags.string({
      description: 'refresh interval (ms, s, m or h); with --kubernetes, for Repos without a refreshInterval',
      default: '5m',
    }),
    once: Flags.boolean({description: 'one pass, then exit'}),
    kubernetes: Flags.boolean({
      description: 'cluster mode: driven by Repo objects and the pods on this node (needs NODE_NAME)',
    }),
  }

  async run(): Promise<CacheAgentPass> {
    const {flags} = await this.parse(CacheAgent)
    const intervalMs = parseInterval(flags.interval, '--interval')
    const stop = new AbortController()
    const onSignal = () => stop.abort()
    process.once('SIGINT', onSignal).once('SIGTERM', onSignal)
    try {
      return await runCacheAgent(this.context, this.backends, {
        kubernetes: flags.kubernetes,
        intervalMs,
        once: flags.once,
        signal: stop.signal,
        onEvent: (event) => this.print(`${event.action} ${event.key}${event.detail ? `: ${event.detail}` : ''}`),
      })
    } finally {
      process.off('SIGINT', onSignal).off('SIGTERM', onSignal)
    }
  }
}
