/**
 * The cache agents' answer to a sandbox pod's fetch-through ask (sdk/fetch-through.ts serves the
 * asks directories): an on-demand fetch of the cache in the agent's root, emitted as the agent's
 * own fetches are. The cluster agent adds the credentials `yard cluster credentials` holds for
 * the url and reports the fetch in its node's entry of the Repo's status; the local agent finds
 * the podman sandboxes' asks directories itself (localAskDirs).
 */
import {promises as fs} from 'node:fs'
import path from 'node:path'

import type {CacheAgentEvent} from '../../sdk/cache.js'
import type {CacheStore} from './store.js'

import {YardError} from '../../sdk/errors.js'
import {type AskDir, type AskFetch} from '../../sdk/fetch-through.js'
import {CACHE_KEY_PATTERN} from '../../sdk/repo-identity.js'
import {staleNote} from '../../sdk/stale.js'
import {cachePaths, type CacheRecord, isPresent, readRecord} from './layout.js'

/** What an ask's fetch needs of the agent running it. */
export interface AskSide {
  cache: CacheStore
  root: string
  /** Where the cache is missing from, for the answer: `on node N`, `in ROOT`. */
  where: string
  /** The env that gives git the credentials for `url`, or undefined (credentials.ts). */
  credentials?(url: string): {env: Record<string, string>} | undefined
  emit(event: CacheAgentEvent): void
  /** Reports the cache's state after the fetch (the cluster agent's status entry). */
  report?(key: string, present: boolean, record: CacheRecord | undefined): Promise<void>
}

/**
 * An agent's AskFetch: answers `''` when the cache was fetched, else the stale note
 * (sdk/stale.ts), or that the cache is not there. A report that fails is a warning: the pod's
 * answer does not wait on it.
 */
export function askFetcher(side: AskSide): AskFetch {
  return async (key, url) => {
    const paths = cachePaths(side.root, key)
    if (!isPresent(paths)) return `the cache ${key} is not ${side.where} yet`
    const match = side.credentials?.(url)
    const worker = match ? side.cache.withEnv(match.env) : side.cache
    let note: string
    try {
      const result = await worker.fetchKey(side.root, key, url, true)
      side.emit(
        result.fetched
          ? {action: 'fetched', key, detail: 'asked by a sandbox (fetch-through)'}
          : {action: 'failed', key, detail: `stale since ${result.staleSince}: ${result.error}`},
      )
      note = result.fetched ? '' : staleNote(key, result.staleSince, result.error)
    } catch (error) {
      const why =
        error instanceof YardError
          ? [error.message, error.why].filter(Boolean).join(': ')
          : String((error as Error)?.message ?? error)
      side.emit({action: 'failed', key, detail: why})
      note = `the cache ${key} could not be fetched: ${why.split('\n', 1)[0]}`
    }

    if (side.report)
      await side
        .report(key, isPresent(paths), await readRecord(paths))
        .catch((error: Error) =>
          side.cache.context.warn(`warning: could not report the cache ${key} ${side.where}: ${error.message}`),
        )
    return note
  }
}

/**
 * The asks directories of the podman sandboxes on this machine (sdk/fetch-through.ts
 * `asksRoot`: `<state dir>/sandboxes/<pod>.asks/<key>/`) whose cache is present in `root` with a
 * recorded url — the url the local agent fetches it from. A key cached elsewhere is left to the
 * `yard exec` that serves it.
 */
export function localAskDirs(stateDir: string, root: string): () => Promise<AskDir[]> {
  const sandboxes = path.join(stateDir, 'sandboxes')
  return async () => {
    const found: AskDir[] = []
    for (const pod of (await fs.readdir(sandboxes).catch(() => [] as string[])).filter((name) =>
      name.endsWith('.asks'),
    )) {
      for (const key of (await fs.readdir(path.join(sandboxes, pod)).catch(() => [] as string[])).filter((name) =>
        CACHE_KEY_PATTERN.test(name),
      )) {
        const paths = cachePaths(root, key)
        const url = isPresent(paths) ? (await readRecord(paths).catch(() => undefined))?.url : undefined
        if (url) found.push({key, url, dir: path.join(sandboxes, pod, key)})
      }
    }

    return found
  }
}
