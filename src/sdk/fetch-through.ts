/**
 * Fetch-through (DESIGN.md §5.1 "fetch in place", the sandbox-workspace record's "refresh is
 * fetch-in-place"): a `git fetch` of origin inside a sandbox first asks for the cache to be
 * fetched from the remote, waits for the answer within `[cache] fetch-through-seconds`, then
 * reads the cache.
 *
 * The pod's only new capability is a writable asks directory per cache it mounts, `/yard/asks/<key>`
 * in the pod; the cache itself stays read-only. origin's `remote.origin.uploadpack` is a small sh
 * script (fetchThroughScript) that writes `<id>.ask` there and waits for `<id>.answer`: empty
 * when the cache was fetched, else the one-line stale note it prints on stderr. Who answers
 * depends on the runtime: on podman the directory is `<state dir>/sandboxes/<project>.asks/<key>/`
 * and yard serves it while a `yard exec` into that sandbox runs (serveAsks), and so does a local
 * `yard cache agent` holding the cache (git-cache/ask-fetch.ts); on kubernetes it is
 * on the pod's node and the node's cache agent serves it (k8s-sandbox/cluster-asks.ts). Both
 * serve with serveAskDirs: one fetch answers every ask of a cache pending at the time, and
 * fetches of one cache start at least FETCH_THROUGH_GAP_MS apart.
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
 * just fetched) it is plain `git-upload-pack`. `seconds`: how long it waits for the answer;
 * `server`: who answers, named in the time-out's note (the runtime's; see serveAskDirs).
 */
export function fetchThroughScript(seconds: number, server = 'a yard exec or yard cache agent'): string {
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
      echo "yard: the cache $key did not answer within ${seconds}s (its fetch takes longer, or ${server} is not running); reading what it holds" >&2
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

/** One asks directory: where a pod asks for a refresh of the cache `key`, whose remote is `url`. */
export interface AskDir {
  key: string
  url: string
  dir: string
}

/**
 * Fetches the cache `key` from `url` for the asks pending: resolves with the answer, empty when
 * the cache was fetched, else the one-line note the pod prints (a rejection is answered with
 * its first line).
 */
export type AskFetch = (key: string, url: string) => Promise<string>

/**
 * Serves the asks of `sandbox`'s pod until `signal` aborts (serveAskDirs over its asks
 * directories, fetching with the cache backend's on-demand fetch). Keys of submodules' caches
 * have no asks directory. `side` may be a function giving the cache side: it is called on the
 * first ask (a `yard exec` whose command never fetches loads no cache backend). Never throws: a
 * fetch that fails, or a side that cannot be had, answers with the stale note.
 */
export async function serveAsks(
  stateDir: string,
  sandbox: SandboxRecord,
  side: FetchThroughCache | (() => Promise<FetchThroughCache>),
  signal: AbortSignal,
): Promise<void> {
  const root = asksRoot(stateDir, sandbox.project)
  const dirs = [...new Map(sandbox.spec.repos.map((repo) => [repo.key, repo.url]))].map(([key, url]) => ({
    key,
    url,
    dir: path.join(root, key),
  }))
  let opened: Promise<FetchThroughCache> | undefined
  const fetch: AskFetch = async (key, url) => {
    opened ??= typeof side === 'function' ? side() : Promise.resolve(side)
    const {cache, root: cacheRoot, lfs} = await opened
    const result = await cache.fetch(cacheRoot, url, {onDemand: true, ...(lfs && {lfs})})
    return result.stale ? staleNote(key, result.staleSince, result.error) : ''
  }

  await serveAskDirs(() => dirs, fetch, signal)
}

/**
 * Serves asks until `signal` aborts, in the directories `dirs()` names at each look (every
 * `pollMs`, default POLL_MS): per cache key with an ask in any of its directories, the ask files
 * are claimed (renamed, so two servers never serve one ask twice), the cache fetched once
 * (`fetch`) and each claimed ask answered. Fetches of one key start at least
 * FETCH_THROUGH_GAP_MS apart, and a key being served does not hold up the others. The pod owns
 * the directories: answers are written without following a link it may have put there. Never
 * throws (a `dirs` that fails is an empty look).
 */
export async function serveAskDirs(
  dirs: () => Promise<readonly AskDir[]> | readonly AskDir[],
  fetch: AskFetch,
  signal: AbortSignal,
  options: {pollMs?: number} = {},
): Promise<void> {
  const lastStart = new Map<string, number>()
  const serving = new Map<string, Promise<void>>()
  const serveKey = async (key: string, url: string, keyDirs: string[]): Promise<void> => {
    const wait = (lastStart.get(key) ?? 0) + FETCH_THROUGH_GAP_MS - Date.now()
    if (wait > 0) await sleep(wait, signal)
    const claimed: string[] = []
    for (const dir of keyDirs) {
      for (const name of await asksIn(dir)) {
        const claim = path.join(dir, `${name.slice(0, -'.ask'.length)}.serving-${process.pid}`)
        if (
          await fs.rename(path.join(dir, name), claim).then(
            () => true,
            () => false,
          )
        )
          claimed.push(claim)
      }
    }

    if (claimed.length === 0) return
    lastStart.set(key, Date.now())
    const note = await fetch(key, url).catch(
      (error: Error) => `the cache ${key} could not be fetched: ${String(error?.message ?? error).split('\n', 1)[0]}`,
    )
    for (const claim of claimed) await answer(claim, note)
  }

  while (!signal.aborted) {
    const byKey = new Map<string, {url: string; dirs: string[]}>()
    for (const entry of await Promise.resolve()
      .then(dirs)
      .catch(() => [] as AskDir[])) {
      const known = byKey.get(entry.key) ?? {url: entry.url, dirs: []}
      known.dirs.push(entry.dir)
      byKey.set(entry.key, known)
    }

    await Promise.all(
      [...byKey].map(async ([key, {url, dirs: keyDirs}]) => {
        if (serving.has(key)) return
        const pending = await Promise.all(keyDirs.map(async (dir) => (await asksIn(dir)).length > 0))
        if (!pending.includes(true)) return
        const work = serveKey(key, url, keyDirs)
          .catch(() => undefined)
          .finally(() => serving.delete(key))
        serving.set(key, work)
      }),
    )
    await sleep(options.pollMs ?? POLL_MS, signal)
  }

  await Promise.all(serving.values())
}

/** The ask files in `dir` (none when it cannot be read). */
async function asksIn(dir: string): Promise<string[]> {
  return (await fs.readdir(dir).catch(() => [] as string[])).filter((name) => ASK.test(name))
}

/**
 * Answers the claimed ask `claim`: `<id>.answer` holds `note` (plus a newline) or nothing. The
 * temporary file is created exclusively (O_EXCL refuses an existing file or link), so a link
 * the pod planted there is never written through; the rename replaces a link, not its target.
 */
async function answer(claim: string, note: string): Promise<void> {
  const target = claim.replace(/\.serving-[0-9]+$/, '.answer')
  const temporary = `${target}.tmp`
  try {
    await fs.rm(temporary, {force: true})
    await fs.writeFile(temporary, note ? `${note}\n` : '', {flag: 'wx'})
    await fs.rename(temporary, target)
  } catch {
    // The pod made a directory or raced a link in: it gets no answer, and reads the cache after its wait.
  }

  await fs.rm(claim, {recursive: true, force: true}).catch(() => undefined)
}

async function sleep(ms: number, signal: AbortSignal): Promise<void> {
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
