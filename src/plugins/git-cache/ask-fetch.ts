/**
 * The cluster agent's answer to a pod's fetch-through ask (core/fetch-through.ts serves the asks
 * directories; k8s-sandbox/cluster-asks.ts says where they are): an on-demand fetch of the cache
 * on this node, with the credentials `yard cluster credentials` holds for its url, reported in
 * this node's entry of the Repo's status like any fetch of the agent.
 */
import type {CacheAgentEvent, CacheDemand} from '../../core/backend.js'
import type {AskFetch} from '../../core/fetch-through.js'
import {YardError} from '../../core/errors.js'
import {staleNote} from '../../core/stale.js'
import {cachePaths, type CacheRecord, isPresent, readRecord} from './layout.js'
import type {CacheStore} from './store.js'

/** What an ask's fetch needs of the agent running it (kube-agent.ts). */
export interface AskSide {
  cache: CacheStore
  root: string
  demand: CacheDemand
  /** The env that gives git the credentials for `url`, or undefined (credentials.ts). */
  credentials(url: string): {env: Record<string, string>} | undefined
  emit(event: CacheAgentEvent): void
  /** Writes this node's entry for `key` after the fetch. */
  report(key: string, present: boolean, record: CacheRecord | undefined): Promise<void>
}

/**
 * The AskFetch of a cluster agent: answers `''` when the cache was fetched, else the stale note
 * (core/stale.ts), or why there was nothing to fetch (the cache is not on this node yet). A
 * report that fails is a warning: the pod's answer does not wait on the API server.
 */
export function askFetcher(side: AskSide): AskFetch {
  return async (key, url) => {
    const paths = cachePaths(side.root, key)
    if (!isPresent(paths)) return `the cache ${key} is not on node ${side.demand.node} yet`
    const match = side.credentials(url)
    const worker = match ? side.cache.withEnv(match.env) : side.cache
    let note: string
    try {
      const result = await worker.fetchKey(side.root, key, url, true)
      side.emit(result.fetched ? {action: 'fetched', key, detail: 'asked by a pod (fetch-through)'} : {action: 'failed', key, detail: `stale since ${result.staleSince}: ${result.error}`})
      note = result.stale || !result.fetched ? staleNote(key, result.staleSince, result.error) : ''
    } catch (error) {
      const why = error instanceof YardError ? [error.message, error.why].filter(Boolean).join(': ') : String((error as Error)?.message ?? error)
      side.emit({action: 'failed', key, detail: why})
      note = `the cache ${key} could not be fetched: ${why.split('\n')[0]}`
    }
    await side.report(key, isPresent(paths), await readRecord(paths)).catch((error: Error) => side.cache.context.warn(`warning: could not report the cache ${key} on node ${side.demand.node}: ${error.message}`))
    return note
  }
}
