/**
 * The cache root's layout and records (DESIGN.md §5.1, "Layout"): `<key>/` the bare repository
 * (present = `HEAD` exists), `<key>.cloning` while cloning, `<key>.json` the record,
 * `<key>.leases/` one file per borrower (plus the cache's `.lock`). The root carries the marker
 * file `.yard-cache-root`; yard touches only entries whose names match CACHE_ENTRY_PATTERN.
 */
import {existsSync, promises as fs} from 'node:fs'
import path from 'node:path'

import {OperationError, RefusedError, YardError} from '../../sdk/errors.js'
import {CACHE_ENTRY_PATTERN, CACHE_KEY_PATTERN} from '../../sdk/repo-identity.js'

/** The marker file that makes a directory a cache root yard may clean up. */
export const ROOT_MARKER = '.yard-cache-root'

/** The paths of one cache. */
export interface CachePaths {
  key: string
  /** The bare repository: `<root>/<key>`. */
  repo: string
  /** `<root>/<key>.cloning`: present while a clone runs (or after one crashed). */
  marker: string
  /** `<root>/<key>.json`. */
  record: string
  /** `<root>/<key>.leases/`. */
  leases: string
  /** `<root>/<key>.leases/.lock`: one writer per cache. */
  lock: string
}

export function cachePaths(root: string, key: string): CachePaths {
  const leases = path.join(root, `${key}.leases`)
  return {
    key,
    repo: path.join(root, key),
    marker: path.join(root, `${key}.cloning`),
    record: path.join(root, `${key}.json`),
    leases,
    lock: path.join(leases, '.lock'),
  }
}

/** `<key>.json` (DESIGN.md §5.1): what yard knows of a cache beyond the repository itself. */
export interface CacheRecord {
  key: string
  /** The url as first given; null for a repository adopted without one. */
  url: string | null
  identity: string | null
  /** When `yard cache add` first cloned or adopted it, or the agent adopted it (ISO-8601). */
  added: string
  /** Start of the latest clone or fetch attempt. */
  lastAttempt: string | null
  /** Start of the latest successful clone or fetch. */
  lastFetched: string | null
  /** git's words when the latest attempt failed (last 2000 characters), else null. */
  lastError: string | null
  /** When maintenance last ran to the end. */
  lastMaintained: string | null
}

/** An ISO-8601 time with milliseconds: attempts and asks compare at that precision. */
export function stamp(date = new Date()): string {
  return date.toISOString()
}

/**
 * What failed and git's words ("git fetch … failed with exit code 128: fatal: …", or which budget
 * ran out), the last 2000 characters: enough to act on, small enough for a record.
 */
export function errorText(error: unknown): string {
  const text = error instanceof YardError ? [error.message, error.why].filter(Boolean).join(': ') : String(error)
  const trimmed = text.trim()
  return trimmed.length > 2000 ? trimmed.slice(-2000) : trimmed
}

/** Reads `<key>.json`; undefined when absent, a fresh record when unreadable (it is rewritten). */
export async function readRecord(paths: CachePaths): Promise<CacheRecord | undefined> {
  let text: string
  try {
    text = await fs.readFile(paths.record, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }

  try {
    return {...emptyRecord(paths.key, null), ...(JSON.parse(text) as Partial<CacheRecord>), key: paths.key}
  } catch {
    return emptyRecord(paths.key, null)
  }
}

export function emptyRecord(key: string, url: string | null, identity: string | null = null): CacheRecord {
  return {
    key,
    url,
    identity,
    added: stamp(),
    lastAttempt: null,
    lastFetched: null,
    lastError: null,
    lastMaintained: null,
  }
}

/**
 * Writes `<key>.json` atomically (a temporary file in `<key>.leases/`, then rename), readable by
 * its owner only (0600: a record names the repository and where it failed). Hold the lock.
 */
export async function writeRecord(paths: CachePaths, record: CacheRecord): Promise<void> {
  await fs.mkdir(paths.leases, {recursive: true})
  const temporary = path.join(paths.leases, '.record.tmp')
  // A leftover of a killed write would keep its mode: start afresh.
  await fs.rm(temporary, {force: true})
  await fs.writeFile(temporary, JSON.stringify(record, null, 2) + '\n', {mode: 0o600})
  await fs.rename(temporary, paths.record)
}

/**
 * A cache is present when its `HEAD` exists, not when its directory does (DESIGN.md §5.1: a
 * pod's hostPath volume creates the directory) — and no clone is under way or half done.
 */
export function isPresent(paths: CachePaths): boolean {
  return existsSync(path.join(paths.repo, 'HEAD')) && !existsSync(paths.marker)
}

/**
 * Makes `root` a cache root: creates it with its marker when it is missing or empty — or, with
 * `claimCacheNamed`, when everything in it is named like a cache entry.
 * @returns whether the root carries the marker.
 * @throws OperationError (exit 1) when the root cannot be created (a file in the way, no permission).
 */
export async function ensureRoot(root: string, options: {claimCacheNamed?: boolean} = {}): Promise<boolean> {
  try {
    await fs.mkdir(root, {recursive: true})
    const marker = path.join(root, ROOT_MARKER)
    if (existsSync(marker)) return true
    const names = await fs.readdir(root)
    if (names.length > 0 && !(options.claimCacheNamed && names.every((name) => CACHE_ENTRY_PATTERN.test(name))))
      return false
    await fs.writeFile(marker, 'yard cache root: yard removes only entries named like caches here (DESIGN.md §5.1)\n')
    return true
  } catch (error) {
    throw new OperationError(`cannot use ${root} as the cache root`, {
      why: (error as Error).message,
      fix: 'set [cache] root in yard.toml (or YARD_CACHE_ROOT) to a directory yard can create and write',
    })
  }
}

/**
 * Makes `root` a cache root for writing (ensureRoot, claiming a root of cache-named entries
 * only); refuses a directory that holds other things but no marker: it is somebody's directory.
 * @throws RefusedError (exit 3) naming the root and the marker.
 */
export async function requireRoot(root: string): Promise<void> {
  if (await ensureRoot(root, {claimCacheNamed: true})) return
  throw new RefusedError(`${root} is not a yard cache root: it holds other files and no ${ROOT_MARKER}`, {
    why: 'yard keeps caches only in a directory it made (or one marked as its own), so it never deletes files that are not its own',
    fix: `point [cache] root (or YARD_CACHE_ROOT) to an empty or new directory, or create ${path.join(root, ROOT_MARKER)} if the directory is meant for caches`,
  })
}

/** Every cache key that has an entry in the root (repository, marker, record or leases), sorted. */
export async function keysInRoot(root: string): Promise<string[]> {
  let names: string[]
  try {
    names = await fs.readdir(root)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }

  const keys = new Set<string>()
  for (const name of names) {
    if (!CACHE_ENTRY_PATTERN.test(name)) continue
    const key = name.replace(/\.(cloning|leases|json)$/, '')
    if (CACHE_KEY_PATTERN.test(key)) keys.add(key)
  }

  return [...keys].sort()
}

/** Loose objects (files under `objects/??/`) and packs (`objects/pack/*.pack`) of a repository. */
export async function objectCounts(repo: string): Promise<{packs: number; looseObjects: number}> {
  const objects = path.join(repo, 'objects')
  const names = await fs.readdir(objects).catch(() => [] as string[])
  let looseObjects = 0
  for (const name of names) {
    if (/^[0-9a-f]{2}$/.test(name)) looseObjects += (await fs.readdir(path.join(objects, name)).catch(() => [])).length
  }

  const packs = (await fs.readdir(path.join(objects, 'pack')).catch(() => [] as string[])).filter((name) =>
    name.endsWith('.pack'),
  ).length
  return {packs, looseObjects}
}

/** Bytes of every file under `dir` (0 when it is absent). */
export async function sizeOnDisk(dir: string): Promise<number> {
  const entries = await fs.readdir(dir, {recursive: true, withFileTypes: true}).catch(() => [])
  let total = 0
  for (const entry of entries) {
    if (!entry.isFile()) continue
    total += (await fs.stat(path.join(entry.parentPath, entry.name)).catch(() => ({size: 0}))).size
  }

  return total
}

/** Removes everything inside `dir` but keeps `dir` itself (a pod's bind mount follows its inode). */
export async function emptyDirectory(dir: string): Promise<void> {
  await fs.mkdir(dir, {recursive: true})
  for (const name of await fs.readdir(dir)) await fs.rm(path.join(dir, name), {recursive: true, force: true})
}
