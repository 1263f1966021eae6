/**
 * Identity rules shared by local and cluster mode (DESIGN.md §3): names, the prefix, project
 * names, the owner hash, the cksum offset and ports. Pure functions: no git, no fs.
 */
import {InputError} from '../../sdk/errors.js'
import {NAME_PATTERN} from '../../sdk/names.js'

export {NAME_PATTERN} from '../../sdk/names.js'
export const NAME_MAX = 40
export const PREFIX_MAX = 22
export const RESERVED_NAMES: readonly string[] = ['main', 'default', 'worktrees']
/** Offsets of worktrees and sandboxes: 1..OFFSET_SLOTS; main is 0. */
export const OFFSET_SLOTS = 89

/**
 * SHA-256 of `text` in hex. node:crypto is loaded on the first call (process.getBuiltinModule),
 * not with this module: its load is ~5 ms, and `yard exec` computes no hash when the owner is kept
 * (workspace.ts ownerOf).
 */
const sha256Hex = (text: string) =>
  process.getBuiltinModule('node:crypto').createHash('sha256').update(text, 'utf8').digest('hex')

/** Lower-case, runs of other characters → `-`, trimmed of `-`. */
export function slugify(text: string): string {
  return text
    .toLowerCase()
    .replaceAll(/[^a-z0-9]+/g, '-')
    .replaceAll(/^-+|-+$/g, '')
}

function cut(slug: string, max: number): string {
  return slug.slice(0, max).replace(/-+$/, '')
}

/** Why `name` is not a valid worktree or sandbox name, or undefined when it is. */
export function nameProblem(name: string): string | undefined {
  if (name === '') return 'it is empty'
  if (name.length > NAME_MAX) return `it has ${name.length} characters, more than ${NAME_MAX}`
  if (!NAME_PATTERN.test(name)) return 'names use only a-z, 0-9 and inner hyphens (a DNS-1123 label)'
  if (RESERVED_NAMES.includes(name)) return `"${name}" is reserved (${RESERVED_NAMES.join(', ')})`
  return undefined
}

/**
 * A valid name close to `input`, for error messages: the name `worktree add --branch` would
 * derive from it (DESIGN.md §3.1), so a suggestion never collides with another input's.
 */
export function suggestName(input: string): string {
  return nameFromBranch(input)
}

/**
 * Checks a worktree or sandbox name (DESIGN.md §3.1).
 * @throws InputError (exit 2) with the rule and a valid suggestion.
 */
export function validateName(name: string, what = 'name'): string {
  const problem = nameProblem(name)
  if (problem === undefined) return name
  throw new InputError(`invalid ${what} "${name}": ${problem}`, {
    why: `a ${what} must match ${NAME_PATTERN.source}, have at most ${NAME_MAX} characters and not be one of ${RESERVED_NAMES.join(', ')}, because it becomes part of compose project, pod and host names`,
    fix: `use "${suggestName(name)}" (a short hash of "${name}" ends it, so that two inputs never get the same name), or a ${what} of your own that matches`,
  })
}

/**
 * Derives a worktree name from a branch (DESIGN.md §3.1): slug cut to 35 characters; when that
 * changed anything or hit a reserved name, `-` + first 4 hex of sha256(branch) is appended; an
 * empty slug becomes `wt-<4 hex>`. So `a/x` → `a-x-<hash>` while `a-x` → `a-x`.
 */
export function nameFromBranch(branch: string): string {
  const hash4 = sha256Hex(branch).slice(0, 4)
  const slug = cut(slugify(branch), 35)
  if (slug === '') return `wt-${hash4}`
  if (slug !== branch || RESERVED_NAMES.includes(slug)) return `${slug}-${hash4}`
  return slug
}

/** A prefix derived from a directory name: slug cut to 22 characters (`My.App` → `my-app`). */
export function prefixFromDirectory(directoryName: string): string {
  const slug = cut(slugify(directoryName), PREFIX_MAX)
  return slug === '' ? 'yard' : slug
}

/**
 * Checks a configured prefix (DESIGN.md §3.1: ≤ 22 characters, the name rule).
 * @throws InputError (exit 2) naming `source` (e.g. "env YARD_PREFIX") and a valid suggestion.
 */
export function validatePrefix(prefix: string, source: string): string {
  if (prefix.length <= PREFIX_MAX && NAME_PATTERN.test(prefix)) return prefix
  const problem =
    prefix.length > PREFIX_MAX
      ? `it has ${prefix.length} characters, more than ${PREFIX_MAX}`
      : `it must match ${NAME_PATTERN.source}`
  throw new InputError(`invalid prefix "${prefix}" from ${source}: ${problem}`, {
    why: `the prefix starts every compose project and pod name, which must stay a valid DNS-1123 label (prefix ≤ ${PREFIX_MAX} so <prefix>-<name> ≤ 63)`,
    fix: `set ${source} to "${prefixFromDirectory(prefix)}"`,
  })
}

/** `<prefix>` for the main checkout, `<prefix>-<name>` otherwise (DESIGN.md §3.1). */
export function projectName(prefix: string, name: string, isMain: boolean): string {
  return isMain ? prefix : `${prefix}-${name}`
}

/** The owner label value: first 12 hex of sha256 of the main checkout's real path. */
export function ownerHash(mainRealPath: string): string {
  return sha256Hex(mainRealPath).slice(0, 12)
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256)
  for (let i = 0; i < 256; i++) {
    let crc = i << 24
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x80_00_00_00 ? (crc << 1) ^ 0x04_c1_1d_b7 : crc << 1
    table[i] = crc >>> 0
  }

  return table
})()

/**
 * POSIX `cksum` CRC of `bytes` (DESIGN.md §3.4; POSIX cksum(1)): CRC-32 polynomial 0x04C11DB7,
 * MSB-first, register starting at 0; the data, then its length as little-endian bytes (as few
 * as needed, none for 0); then bitwise NOT. Returns an unsigned 32-bit integer.
 */
export function cksum(bytes: Uint8Array): number {
  let crc = 0
  const feed = (byte: number) => {
    crc = ((crc << 8) ^ CRC_TABLE[((crc >>> 24) ^ byte) & 0xff]) >>> 0
  }

  for (const byte of bytes) feed(byte)
  for (let {length} = bytes; length > 0; length = Math.floor(length / 256)) feed(length & 0xff)
  return ~crc >>> 0
}

/** The hash offset of a name: cksum of the UTF-8 bytes of `name + "\n"`, mod 89, plus 1. */
export function hashOffset(name: string): number {
  return (cksum(new TextEncoder().encode(name + '\n')) % OFFSET_SLOTS) + 1
}

/**
 * Parses and checks an offset for a worktree or sandbox: an integer in 1..89 (DESIGN.md §3.4).
 * Accepts a decimal string (from the environment) or a number; TOML booleans, floats and
 * strings are refused.
 * @throws InputError (exit 2) naming `source` and the fix.
 */
export function validateOffset(value: unknown, source: string, fix: string): number {
  // TOML is parsed with integersAsBigInt: a TOML integer is a bigint, so a number is a float (`3.0`).
  let offset: number | undefined
  if (typeof value === 'bigint') offset = Number(value)
  else if (typeof value === 'string' && source.startsWith('env ') && /^\s*-?\d+\s*$/.test(value))
    offset = Number(value.trim())
  if (offset !== undefined && offset >= 1 && offset <= OFFSET_SLOTS) return offset
  const shown =
    typeof value === 'string'
      ? JSON.stringify(value)
      : typeof value === 'number' && Number.isInteger(value)
        ? value.toFixed(1)
        : String(value)
  const kind =
    typeof value === 'boolean'
      ? 'a boolean'
      : typeof value === 'number'
        ? 'a float'
        : typeof value === 'string' && !source.startsWith('env ')
          ? 'a string'
          : offset === undefined
            ? 'not an integer'
            : offset === 0
              ? '0, which is reserved for the main checkout'
              : `out of range (1 to ${OFFSET_SLOTS})`
  throw new InputError(`invalid offset ${shown} from ${source}: ${kind}`, {
    why: `a worktree's or sandbox's offset must be an integer from 1 to ${OFFSET_SLOTS} (0 is the main checkout's)`,
    fix,
  })
}

/** `[ports]` key → base + offset (DESIGN.md §3.4, "Ports"). */
export function portsFor(bases: Record<string, number>, offset: number): Record<string, number> {
  return Object.fromEntries(Object.entries(bases).map(([key, base]) => [key, base + offset]))
}

/**
 * Names that share an offset with another name (DESIGN.md §3.4, "Collisions"). A worktree and a
 * sandbox with the same name are one identity and never clash. Returns name → clashing names
 * (sorted), for every name in `entries`.
 */
export function findClashes(entries: ReadonlyArray<{name: string; offset: number}>): Map<string, string[]> {
  const byOffset = new Map<number, Set<string>>()
  for (const {name, offset} of entries) {
    if (!byOffset.has(offset)) byOffset.set(offset, new Set())
    byOffset.get(offset)!.add(name)
  }

  const clashes = new Map<string, string[]>()
  for (const {name, offset} of entries) {
    clashes.set(name, [...byOffset.get(offset)!].filter((other) => other !== name).sort())
  }

  return clashes
}

/** The lowest offset in 1..89 not in `taken`, or undefined when every slot is used. */
export function lowestFreeOffset(taken: Iterable<number>): number | undefined {
  const used = new Set(taken)
  for (let offset = 1; offset <= OFFSET_SLOTS; offset++) if (!used.has(offset)) return offset
  return undefined
}
