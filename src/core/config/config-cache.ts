/**
 * The validated tables of config files, kept between runs (DESIGN.md §3.2, §9 "Start-up"):
 * every command reads `yard.toml` and `yard.local.toml`, and parsing and validating them (smol-toml
 * and the zod schema, config-files.ts) costs more than `yard exec`'s own work. What a file gave is
 * kept in the repository's directory of yard's state (repository-state.ts; never in `.git`, which a
 * box may write, so nothing but yard decides what counts as validated) under the file's
 * signature — device, inode, size, and the modification and change times in nanoseconds — and
 * under the build of yard that validated it. A file whose signature or yard's build differs is
 * read again, and so is one whose kept entry is not of the shape yard writes.
 *
 * A file changed within RACY_MS of being read is not kept (git's "racily clean" entries,
 * gitformat-index(5)): a second edit of the same size within the file system's timestamp
 * granularity would otherwise keep the first edit's signature. The cache is best effort: a
 * directory that cannot be written, or a cache file that cannot be read, means no cache.
 */
import {type BigIntStats, lstatSync, readdirSync, readlinkSync, statSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

import type {FileTables} from './config-files.js'

import {InputError} from '../../sdk/errors.js'
import {shellQuote} from '../../sdk/shell.js'
import {readKeptFile} from '../kernel/kept-file.js'
import {buildId} from '../kernel/package-root.js'
import {keepFile, repositoryStateDir} from '../kernel/repository-state.js'

/** A file changed less than this long ago (ms) is validated but not kept. */
export const RACY_MS = 2000

/** At most this many files are kept; the least recently validated go first. */
const MAX_ENTRIES = 64
/** A cache file larger than this is not read (64 entries of tables are a few hundred kB at most). */
const MAX_CACHE_BYTES = 16 * 1024 * 1024

/** How a bigint is written in the cache file (JSON has none); a table with this key is not kept. */
const BIGINT_KEY = '$yard-bigint'

/**
 * `<state dir>/repositories/<id>/config-cache.json`: where the config cache of the repository
 * whose git common directory is `commonDir` lives.
 * @throws InputError (exit 2) for a relative YARD_STATE_DIR.
 */
export function configCachePath(env: NodeJS.ProcessEnv, commonDir: string): string {
  return path.join(repositoryStateDir(env, commonDir), 'config-cache.json')
}

/**
 * Checks that a config file is something yard can read: absent, or a regular file (through a
 * symlink that resolves). A dangling link, a directory or a FIFO is refused before it is read (a
 * FIFO would block the read forever).
 * @returns the file's stats (of its target, for a link); undefined when it does not exist.
 * @throws InputError (exit 2) for a dangling symlink or anything that is not a regular file.
 */
export function readableStat(file: string): BigIntStats | undefined {
  let link
  try {
    link = lstatSync(file, {bigint: true})
  } catch (error) {
    const {code} = error as NodeJS.ErrnoException
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined
    throw new InputError(`cannot read ${file}: ${(error as Error).message}`, {
      why: 'yard could not look at the file',
      fix: 'check the permissions of the file and its directory',
    })
  }

  let stats = link
  if (link.isSymbolicLink()) {
    let target = '?'
    try {
      target = readlinkSync(file)
    } catch {
      // The target is only for the message.
    }

    try {
      stats = statSync(file, {bigint: true})
    } catch {
      throw new InputError(`${file} is a symlink to ${target}, which does not exist`, {
        why: 'a dangling link is not taken for an absent file: the settings it was meant to hold would silently be missing',
        fix: `restore ${target}, or remove the link (rm ${shellQuote(file)})`,
      })
    }
  }

  if (stats.isFile()) return stats
  const kind = stats.isDirectory()
    ? 'a directory'
    : stats.isFIFO()
      ? 'a named pipe (FIFO)'
      : stats.isSocket()
        ? 'a socket'
        : 'a device or other special file'
  throw new InputError(`${file} is ${kind}, not a file`, {
    why: `yard reads its settings from a regular TOML file named ${path.basename(file)}`,
    fix: `move it out of the way and write the settings to a file ${file}`,
  })
}

interface Entry {
  kind: 'yard' | 'local'
  signature: string
  /** When it was validated (ms since the epoch), for pruning. */
  at: number
  tables: FileTables
}

interface CacheFile {
  build: string
  entries: Record<string, Entry>
}

/**
 * One command's view of a repository's config cache: read once when opened, written back by
 * `save` when something was added. Without a path (a config read outside a repository, tests)
 * it keeps nothing.
 */
export class ConfigCache {
  private changed = false

  private constructor(
    private readonly file: string | undefined,
    private readonly build: string,
    private readonly entries: Record<string, Entry>,
  ) {}

  /** The cache at `file` (configCachePath), or one that keeps nothing when `file` is undefined. */
  static open(file: string | undefined): ConfigCache {
    if (file === undefined) return new ConfigCache(undefined, '', {})
    const build = buildStamp()
    let stored: CacheFile | undefined
    try {
      const text = readKeptFile(file, MAX_CACHE_BYTES)
      if (text !== undefined) stored = decode(text) as CacheFile
    } catch {
      // Absent or unreadable: an empty cache.
    }

    const valid = stored?.build === build && typeof stored.entries === 'object' && stored.entries !== null
    return new ConfigCache(file, build, valid ? stored!.entries : {})
  }

  /** What `file` gave when it last had these stats and `kind`, if kept. */
  get(file: string, kind: Entry['kind'], stats: BigIntStats): FileTables | undefined {
    const entry = this.entries[file] as Entry | undefined
    if (entry?.kind !== kind || entry.signature !== signature(stats) || !keptShape(entry.tables, kind)) return undefined
    return entry.tables
  }

  /** Keeps what `file` gave, unless it changed too recently to be told apart from its next edit. */
  set(file: string, kind: Entry['kind'], stats: BigIntStats, tables: FileTables): void {
    if (this.file === undefined || !keepable(tables)) return
    const now = BigInt(Date.now()) * 1_000_000n
    const racy = (time: bigint) => now - time < BigInt(RACY_MS) * 1_000_000n
    if (racy(stats.mtimeNs) || racy(stats.ctimeNs)) return
    this.entries[file] = {kind, signature: signature(stats), at: Date.now(), tables}
    this.changed = true
  }

  /** Writes the cache back (repository-state.ts keepFile) when something was added. Never throws. */
  save(): void {
    if (this.file === undefined || !this.changed) return
    const kept = Object.entries(this.entries)
      .sort(([, a], [, b]) => b.at - a.at)
      .slice(0, MAX_ENTRIES)
    keepFile(this.file, encode({build: this.build, entries: Object.fromEntries(kept)}))
    this.changed = false
  }
}

function signature(stats: BigIntStats): string {
  return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`
}

/**
 * Which yard validated: the built package's build id (scripts/bundle.mjs writes `dist/build-id`,
 * a hash of every file of the bundle, so a build or an install of other code has another), or,
 * run from source, the newest time of any source file, since any of them may change what
 * validation gives.
 */
function buildStamp(): string {
  const self = fileURLToPath(import.meta.url)
  if (!self.endsWith('.ts')) {
    const id = buildId()
    if (id !== undefined) return `build:${id}`
    const stats = statSync(self)
    return `${self}:${stats.size}:${stats.mtimeMs}`
  }

  const sources = path.resolve(path.dirname(self), '..', '..')
  let newest = 0
  for (const entry of readdirSync(sources, {recursive: true, withFileTypes: true})) {
    if (!entry.isFile()) continue
    newest = Math.max(newest, statSync(path.join(entry.parentPath, entry.name)).mtimeMs)
  }

  return `source:${sources}:${newest}`
}

/**
 * Whether kept tables have the shape validation gives: tables of tables (or, for `[ports]`,
 * numbers), and for yard.local.toml the trust of each worktree. A cache file edited by hand (or
 * cut short where JSON still parses) is read again rather than believed.
 */
function keptShape(value: unknown, kind: Entry['kind']): value is FileTables {
  const isTable = (item: unknown): item is Record<string, unknown> =>
    typeof item === 'object' && item !== null && !Array.isArray(item)
  if (!isTable(value) || !isTable(value.tables)) return false
  if (Object.values(value.tables).some((table) => !isTable(table))) return false
  if (kind === 'yard') return value.trust === undefined
  return (
    isTable(value.trust) && Object.values(value.trust).every((level) => level === 'trusted' || level === 'untrusted')
  )
}

/** Whether a value survives the cache file as it is: TOML's types as smol-toml gives them, but dates. */
function keepable(value: unknown): boolean {
  if (['bigint', 'boolean', 'string'].includes(typeof value)) return true
  if (typeof value === 'number') return Number.isFinite(value)
  if (Array.isArray(value)) return value.every((item) => keepable(item))
  if (typeof value !== 'object' || value === null) return false
  const prototype = Object.getPrototypeOf(value) as unknown
  if (prototype !== Object.prototype && prototype !== null) return false
  return Object.entries(value).every(([key, item]) => key !== BIGINT_KEY && keepable(item))
}

function encode(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    typeof item === 'bigint' ? {[BIGINT_KEY]: item.toString()} : item,
  )
}

function decode(text: string): unknown {
  return JSON.parse(text, (_key, item: unknown) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return item
    const keys = Object.keys(item)
    const digits = (item as Record<string, unknown>)[BIGINT_KEY]
    return keys.length === 1 && typeof digits === 'string' ? BigInt(digits) : item
  })
}
