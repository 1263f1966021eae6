/**
 * Submodules of a cached repository (DESIGN.md §5.1): each gets its own cache, whose identity is
 * the submodule's url resolved against the superproject's **upstream** url (gitsubmodules(7):
 * a url starting with `./` or `../` is relative to the superproject's remote), never against a
 * cache path. Read from `.gitmodules` at the default branch of the bare cache, and one level
 * deeper at the commit each gitlink records, up to MAX_SUBMODULE_DEPTH.
 */
import type {CacheSubmodule} from '../../sdk/cache.js'
import type {ProcessRunner} from '../../sdk/process.js'
import type {CacheStore} from './store.js'

import {YardError} from '../../sdk/errors.js'
import {repoIdentity} from '../../sdk/repo-identity.js'
import {redactUrl} from '../../sdk/repo-url.js'
import {resolveSubmoduleUrl} from '../../sdk/submodule-url.js'
import {cachePaths, isPresent} from './layout.js'

/** Deeper than this, nested submodules get no cache (worktree-submodules.ts stops at 8 too). */
export const MAX_SUBMODULE_DEPTH = 8

/** One entry of a `.gitmodules`, with its gitlink's commit when the tree has one. */
export interface GitmodulesEntry {
  name: string
  path: string
  /** As written: absolute, or relative (`../lib.git`). */
  url: string
  /** The commit the superproject's tree records at `path`; null when the tree has no gitlink there. */
  commit: string | null
}

/**
 * The `.gitmodules` entries at `rev` of a repository (bare or not), with the commit each gitlink
 * records; empty when `rev` has no `.gitmodules` or it cannot be read. Entries whose name, path
 * or url starts with `-` are left out (they would reach git as options).
 */
export async function gitmodulesAt(runner: ProcessRunner, repo: string, rev: string): Promise<GitmodulesEntry[]> {
  const listed = await runner.git(
    ['config', '--blob', `${rev}:.gitmodules`, '--null', '--get-regexp', String.raw`^submodule\..*\.(path|url)$`],
    {cwd: repo, allowFailure: true},
  )
  if (listed.exitCode !== 0) return []
  const byName = new Map<string, {path?: string; url?: string}>()
  for (const record of listed.stdout.split('\0')) {
    const newline = record.indexOf('\n')
    if (newline === -1) continue
    const key = record.slice(0, newline)
    const field = key.endsWith('.path') ? 'path' : 'url'
    const name = key.slice('submodule.'.length, -`.${field}`.length)
    byName.set(name, {...byName.get(name), [field]: record.slice(newline + 1)})
  }

  const entries = [...byName].filter((entry): entry is [string, {path: string; url: string}] => {
    const [name, {path, url}] = entry
    return (
      path !== undefined &&
      url !== undefined &&
      [name, path, url].every((value) => !(value.startsWith('-') || value === ''))
    )
  })
  if (entries.length === 0) return []
  const tree = await runner.git(['ls-tree', '-z', rev, '--', ...entries.map(([, {path}]) => path)], {
    cwd: repo,
    allowFailure: true,
  })
  const commits = new Map<string, string>()
  for (const line of tree.stdout.split('\0')) {
    const match = /^160000 commit ([0-9a-f]+)\t(.*)$/.exec(line)
    if (match) commits.set(match[2], match[1])
  }

  return entries.map(([name, {path, url}]) => ({name, path, url, commit: commits.get(path) ?? null}))
}

/** A submodule's cache as add or fetch of its superproject left it (CacheSubmodule in backend.ts). */
export type SubmoduleCache = CacheSubmodule

/**
 * Gives every submodule of the cache at `repo` (its `.gitmodules` at `HEAD`, the default
 * branch; nested ones at the commit each gitlink records, else their own `HEAD`) a cache of its
 * own: added when missing, fetched when `fetch` is set (an on-demand fetch when `onDemand`).
 * Each one's lock is taken by add/fetch alone, never while another cache's is held. A submodule
 * whose url yard refuses, or whose clone fails, is a warning and an entry with its error: the
 * superproject's cache stays usable.
 * @returns every submodule cache reached, nested ones included, each once (by key).
 */
export async function cacheSubmodules(
  cache: CacheStore,
  root: string,
  superUrl: string,
  repo: string,
  options: {fetch: boolean; onDemand?: boolean},
): Promise<SubmoduleCache[]> {
  const found = new Map<string, SubmoduleCache>()
  const visit = async (url: string, at: string, rev: string, depth: number): Promise<void> => {
    if (depth >= MAX_SUBMODULE_DEPTH) return
    for (const entry of await gitmodulesAt(cache.context.runner, at, rev)) {
      const resolved = resolveSubmoduleUrl(url, entry.url)
      let key: string
      let cleanUrl: string
      try {
        ;({key, url: cleanUrl} = repoIdentity(resolved))
      } catch (error) {
        cache.context.warn(
          `warning: the submodule ${entry.path} of ${redactUrl(url)} gets no cache: ${(error as {why?: string}).why ?? (error as Error).message}`,
        )
        continue
      }

      if (found.has(key)) continue
      const paths = cachePaths(root, key)
      const row: SubmoduleCache = {
        name: entry.name,
        path: entry.path,
        url: cleanUrl,
        key,
        cachePath: paths.repo,
        present: false,
        error: null,
      }
      found.set(key, row)
      const hasCommit = async () =>
        entry.commit !== null &&
        (
          await cache.context.runner.git(['cat-file', '-e', `${entry.commit}^{commit}`], {
            cwd: paths.repo,
            allowFailure: true,
          })
        ).exitCode === 0
      try {
        if (!isPresent(paths)) await cache.add(root, resolved, {submodules: false})
        // A cache that lacks the recorded commit is fetched even by an add.
        else if (options.fetch || !(await hasCommit())) {
          const fetched = await cache.fetchKey(root, key, cleanUrl, Boolean(options.onDemand))
          if (fetched.stale) row.error = `stale: ${fetched.error?.trim().split('\n').at(-1) ?? 'its fetch failed'}`
        }
      } catch (error) {
        row.error =
          error instanceof YardError ? [error.message, error.why].filter(Boolean).join(': ') : (error as Error).message
        cache.context.warn(
          `warning: the submodule ${entry.path} (${redactUrl(cleanUrl)}) of ${redactUrl(url)} has no cache: ${row.error}`,
        )
        continue
      }

      row.present = isPresent(paths)
      await visit(cleanUrl, paths.repo, (await hasCommit()) ? entry.commit! : 'HEAD', depth + 1)
    }
  }

  await visit(superUrl, repo, 'HEAD', 0)
  return [...found.values()]
}
