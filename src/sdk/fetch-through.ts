/**
 * Fetch-through on the podman runtime (DESIGN.md §5.1 "fetch in place", the sandbox-workspace
 * record's "refresh is fetch-in-place"): a `git fetch` of origin inside a sandbox first asks the
 * host to fetch the cache from the remote, waits for the answer within `[cache]
 * fetch-through-seconds`, then reads the cache.
 *
 * The pod's only new capability is a writable asks directory per cache it mounts,
 * `<state dir>/sandboxes/<project>.asks/<key>/` on the host, `/yard/asks/<key>` in the pod; the
 * cache itself stays read-only. origin's `remote.origin.uploadpack` is a small sh script
 * (FETCH_THROUGH_SCRIPT) that writes `<id>.ask` there and waits for `<id>.answer`: empty when the
 * cache was fetched, else the one-line stale note it prints on stderr. While a `yard exec` runs,
 * yard serves that sandbox's asks (serveAsks): one fetch answers every ask of a cache pending at
 * the time, and fetches of one cache start at least FETCH_THROUGH_GAP_MS apart.
 */
import {promises as fs} from 'node:fs'
import path from 'node:path'

import type {CacheBackend} from './cache.js'
import type {SandboxRecord} from './sandbox.js'
import {staleNote} from './stale.js'

/** Where a pod mounts the asks directory of cache `key`. */
export const podAsksPath = (key: string) => `/yard/asks/${key}`

/** `<state dir>/sandboxes/<project>.asks`: the host side of every asks directory of that pod. */
export const asksRoot = (stateDir: string, project: string) => path.join(stateDir, 'sandboxes', `${project}.asks`)

/** The uploadpack script's path in the pod (the `/work` emptyDir: the pod's own). */
export const FETCH_THROUGH_PATH = '/work/.yard/fetch-through'

/** The shortest time between two fetches of one cache that asks start, in ms (the rate limit). */
export const FETCH_THROUGH_GAP_MS = 2000

/** How often the host looks for asks, in ms. */
const POLL_MS = 150

const ASK = /^([0-9]+\.[0-9]+)\.ask$/

/**
 * The uploadpack command git runs for origin (`git fetch`, `pull`, `ls-remote`), given the cache
 * path as `$1` (git's local transport runs it through sh). Without an asks directory (a pod made
 * before fetch-through, or another runtime) or with `YARD_FETCH_THROUGH=0` (attach: the host has
 * just fetched) it is plain `git-upload-pack`. `seconds`: how long it waits for the answer.
 */
export function fetchThroughScript(seconds: number): string {
  const tenths = Math.max(1, Math.round(seconds * 10))
  return `#!/bin/sh
# yard fetch-through: ask the host to fetch the cache from the remote, then read the cache.
repo=\${1%/}
key=\${repo##*/}
asks=/yard/asks/$key
if [ -d "$asks" ] && [ "\${YARD_FETCH_THROUGH:-1}" != 0 ]; then
  id=$(date +%s).$$
  if : > "$asks/$id.ask" 2>/dev/null; then
    i=0
    while [ ! -e "$asks/$id.answer" ] && [ "$i" -lt ${tenths} ]; do sleep 0.1; i=$((i + 1)); done
    if [ -e "$asks/$id.answer" ]; then
      note=$(cat "$asks/$id.answer")
      rm -f "$asks/$id.answer"
      [ -z "$note" ] || echo "yard: $note; reading what the cache holds" >&2
    else
      rm -f "$asks/$id.ask"
      echo "yard: the cache $key did not answer within ${seconds}s (is a yard exec running?); reading what it holds" >&2
    fi
  fi
fi
exec git-upload-pack "$@"
`
}

/** What serveAsks needs of the cache side: the backend, its root and `[cache] lfs`. */
export interface FetchThroughCache {
  cache: CacheBackend
  root: string
  lfs?: 'all' | 'off'
}

/**
 * Serves the asks of `sandbox`'s pod until `signal` aborts: per cache key with an ask, the ask
 * files are claimed (renamed, so two `yard exec`s never serve one ask twice), the cache fetched
 * once (`onDemand`) and each claimed ask answered. Keys of submodules' caches have no asks
 * directory. Never throws: a fetch that fails answers with the stale note.
 */
export async function serveAsks(stateDir: string, sandbox: SandboxRecord, side: FetchThroughCache, signal: AbortSignal): Promise<void> {
  const root = asksRoot(stateDir, sandbox.project)
  const urls = new Map(sandbox.spec.repos.map((repo) => [repo.key, repo.url]))
  const lastStart = new Map<string, number>()
  while (!signal.aborted) {
    await Promise.all([...urls].map(async ([key, url]) => {
      const dir = path.join(root, key)
      const asks = (await fs.readdir(dir).catch(() => [] as string[])).filter((name) => ASK.test(name))
      if (asks.length === 0) return
      const wait = (lastStart.get(key) ?? 0) + FETCH_THROUGH_GAP_MS - Date.now()
      if (wait > 0) await sleep(wait, signal)
      const claimed: string[] = []
      for (const name of (await fs.readdir(dir).catch(() => [] as string[])).filter((entry) => ASK.test(entry))) {
        const serving = path.join(dir, `${name.slice(0, -'.ask'.length)}.serving-${process.pid}`)
        if (await fs.rename(path.join(dir, name), serving).then(() => true, () => false)) claimed.push(serving)
      }
      if (claimed.length === 0) return
      lastStart.set(key, Date.now())
      const note = await side.cache.fetch(side.root, url, {onDemand: true, ...(side.lfs ? {lfs: side.lfs} : {})}).then(
        (result) => (result.stale ? staleNote(key, result.staleSince, result.error) : ''),
        (error: Error) => `the cache ${key} could not be fetched: ${error.message.split('\n')[0]}`,
      )
      for (const serving of claimed) {
        const answer = serving.replace(/\.serving-[0-9]+$/, '.answer')
        await fs.writeFile(`${answer}.tmp`, note ? `${note}\n` : '').then(() => fs.rename(`${answer}.tmp`, answer)).catch(() => undefined)
        await fs.rm(serving, {force: true})
      }
    }))
    await sleep(POLL_MS, signal)
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const timer = setTimeout(done, ms)
    function done() {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    signal.addEventListener('abort', done, {once: true})
  })
}
