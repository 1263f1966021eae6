/**
 * Use cases of `yard cache …` (DESIGN.md §5.1): which cache backend and root apply, and the
 * `--all` forms of fetch and maintain. Caches live outside any checkout (a node's agent runs
 * with none), so outside a repository the root comes from `YARD_CACHE_ROOT` or the state dir.
 */
import path from 'node:path'

import type {CacheBackend, CacheFetchResult, CacheMaintainResult} from './backend.js'
import {loadConfig} from './config.js'
import type {YardContext} from './context.js'
import {InputError, OperationError} from './errors.js'
import type {Registry} from './registry.js'
import {stateDir} from './state.js'
import {findMainCheckout} from './workspace.js'

export const DEFAULT_CACHE_BACKEND = 'git-cache'

/**
 * `[cache] backend` and `[cache] root` (absolute): from the main checkout's config when the
 * current directory is in one, else `YARD_CACHE_ROOT` → `<state dir>/caches` and `git-cache`.
 * @throws InputError (exit 2) for invalid config.
 */
export async function cacheSettings(context: YardContext): Promise<{backend: string; root: string}> {
  let mainPath: string | undefined
  try {
    mainPath = (await findMainCheckout(context)).mainPath
  } catch (error) {
    if (!(error instanceof InputError)) throw error
  }
  if (mainPath !== undefined) {
    const config = loadConfig({mainPath, env: context.env, warn: context.warn})
    return {backend: config.cache.backend, root: config.cache.root}
  }
  const fromEnv = context.env.YARD_CACHE_ROOT?.trim()
  return {backend: DEFAULT_CACHE_BACKEND, root: path.resolve(context.cwd, fromEnv ? fromEnv : path.join(stateDir(context.env), 'caches'))}
}

/**
 * The cache backend `[cache] backend` selects, created through the registry, and the root.
 * @throws InputError (exit 2) for an unknown backend id or invalid config.
 */
export async function openCache(context: YardContext, registry: Registry): Promise<{cache: CacheBackend; root: string}> {
  const settings = await cacheSettings(context)
  const cache = await registry.create('cache', settings.backend, {runner: context.runner, env: context.env, stateDir: stateDir(context.env), warn: context.warn})
  return {cache, root: settings.root}
}

/** The url of every known cache (a record with a url, present), or the one given. */
async function targets(cache: CacheBackend, root: string, url: string | undefined): Promise<string[]> {
  if (url !== undefined) return [url]
  return (await cache.list(root)).filter((row) => row.present && row.url !== null).map((row) => row.url as string)
}

/**
 * `yard cache fetch [URL | --all]`: fetches each; a failure leaves that cache stale and usable.
 * @throws OperationError (exit 1) after all were tried, when any is stale: "stale since <time>".
 */
export async function fetchCaches(cache: CacheBackend, root: string, url: string | undefined): Promise<CacheFetchResult[]> {
  const results: CacheFetchResult[] = []
  for (const target of await targets(cache, root, url)) results.push(await cache.fetch(root, target))
  const stale = results.filter((result) => result.stale)
  if (stale.length > 0) {
    throw new OperationError(stale.map((result) => `the cache ${result.key} is stale since ${result.staleSince}: its fetch failed`).join('\n'), {
      why: stale.map((result) => result.error).join('\n'),
      fix: 'clones from it still work on the cached objects; check the remote (git ls-remote -- URL) and run yard cache fetch again',
    })
  }
  return results
}

/** `yard cache maintain [URL | --all] [--force]`. @throws OperationError when a maintenance command fails. */
export async function maintainCaches(cache: CacheBackend, root: string, url: string | undefined, force: boolean): Promise<CacheMaintainResult[]> {
  const results: CacheMaintainResult[] = []
  for (const target of await targets(cache, root, url)) results.push(await cache.maintain(root, target, {force}))
  return results
}

/** "5m", "90s", "1h", "250ms" → milliseconds. @throws InputError (exit 2) naming the flag. */
export function parseInterval(text: string, flag: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(text.trim())
  const ms = match ? Number(match[1]) * {ms: 1, s: 1000, m: 60_000, h: 3_600_000}[match[2] as 'ms' | 's' | 'm' | 'h'] : Number.NaN
  if (!(ms >= 1000)) {
    throw new InputError(`invalid ${flag} ${JSON.stringify(text)}`, {why: 'a duration is a number with ms, s, m or h, at least one second', fix: `e.g. ${flag} 5m`})
  }
  return Math.round(ms)
}
