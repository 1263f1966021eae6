/**
 * Repository identity and cache key (DESIGN.md §5.1): pure rules shared by the cache backend and
 * the sandbox backend. A url is normalised to `host[:port]/path` (or an absolute local path) so
 * that every spelling of one repository — https or ssh, with or without credentials, `.git` or
 * not — lands in one cache. Vectors: ../shared/vectors/identity.json.
 */

import {InputError} from './errors.js'
import {hostReason, rawAuthority, redactUrl, unsafeUrlReason, withoutCredentials} from './repo-url.js'

/** How the url reaches the repository; `git+ssh` is `ssh`, `file://` and absolute paths are `local`. */
export type RepoScheme = 'https' | 'http' | 'ssh' | 'git' | 'local'

/** What `yard cache identity` prints (DESIGN.md Appendix A). */
export interface RepoIdentity {
  /**
   * The url as given, trimmed, without credentials (repo-url.ts withoutCredentials): what git is
   * handed and what yard writes anywhere.
   */
  url: string
  scheme: RepoScheme
  /** `host[:port]/path`, or an absolute path for a local repository. */
  identity: string
  /** `slug-<8 hex>`: the cache's directory and object name. */
  key: string
}

/** Names yard may touch in a cache root: a key, optionally with one of its suffixes (DESIGN.md §5.1). */
export const CACHE_ENTRY_PATTERN = /^[a-z0-9-]+-[0-9a-f]{8}(\.cloning|\.leases|\.json)?$/

/** A bare cache key alone. */
export const CACHE_KEY_PATTERN = /^[a-z0-9-]+-[0-9a-f]{8}$/

const SCHEMES: Record<string, RepoScheme> = {
  'https:': 'https',
  'http:': 'http',
  'ssh:': 'ssh',
  'git+ssh:': 'ssh',
  'git:': 'git',
  'file:': 'local',
}

const DEFAULT_PORTS: Partial<Record<RepoScheme, string>> = {https: '443', http: '80', ssh: '22', git: '9418'}

const SLUG_MAX = 40

/** git's `<transport>::<address>` (remote helpers such as `ext::`, `fd::`): the transport's name. */
const REMOTE_HELPER = /^([A-Za-z][A-Za-z0-9+.-]*)::/

/**
 * Normalises a repository url (DESIGN.md §5.1, "Identity").
 *
 * Trim; refuse empty, a leading `-`, `<transport>::<address>` remote-helper urls (`ext::`
 * runs a command) and what URL parsers read differently (repo-url.ts unsafeUrlReason: `\`,
 * control characters, whitespace, odd authorities, hosts starting with `-`, empty users or
 * hosts); `[user@]host:path` is ssh; `://` urls go through the
 * WHATWG URL parser (schemes https, http, ssh, git+ssh → ssh, git, file → local); user,
 * password, query, fragment and the scheme's default port are dropped; the host is lower-cased,
 * the path keeps its case; empty and `.` segments are dropped, `..` pops (never above the root);
 * one trailing `.git` (or a last segment that is exactly `.git`) is dropped; local paths must be
 * absolute. A host the WHATWG parser rewrites (IPv4 shorthands, IPv6 spellings) and a path
 * segment that is an encoded `.` or `..` are refused: the identity must be what git reads.
 * @returns url (trimmed and without credentials, as git gets it), scheme, identity and cache key.
 * @throws InputError (exit 2) naming the url as given (its password redacted) and the rule it breaks.
 */
export function repoIdentity(input: string): RepoIdentity {
  const url = input.trim()
  const refuse = (why: string, fix: string) =>
    new InputError(`invalid repository url ${JSON.stringify(redactUrl(input))}`, {why, fix})
  if (url === '')
    throw refuse('the url is empty', "give the repository's clone url, e.g. https://github.com/org/repo.git")
  if (url.startsWith('-')) {
    throw refuse(
      'it starts with "-", so git would read it as an option',
      "give the repository's clone url, e.g. https://github.com/org/repo.git",
    )
  }

  const helper = REMOTE_HELPER.exec(url)?.[1]
  if (helper !== undefined) {
    throw refuse(
      `it is a remote-helper url (<transport>::<address>, here ${helper}::), which makes git run a helper program${helper.toLowerCase() === 'ext' ? ' (ext:: runs any command it names)' : ''} instead of naming a repository yard can cache`,
      "give the repository's clone url (https://…, ssh://…, user@host:path) or an absolute path",
    )
  }

  const unsafe = unsafeUrlReason(url)
  if (unsafe !== undefined)
    throw refuse(
      unsafe,
      "give the repository's clone url exactly as its host shows it (https://host/org/repo.git or git@host:org/repo.git)",
    )
  const parsed = url.includes('://')
    ? parseUrl(url, refuse)
    : url.startsWith('/')
      ? {scheme: 'local' as const, host: '', path: url}
      : parseScp(url, refuse)
  const segments = normalisePath(parsed.path)
  if (segments.length === 0)
    throw refuse(
      'its path is empty once normalised (no repository named)',
      "add the repository's path, e.g. https://host/org/repo.git",
    )
  const identity = parsed.scheme === 'local' ? `/${segments.join('/')}` : `${parsed.host}/${segments.join('/')}`
  return {url: withoutCredentials(url), scheme: parsed.scheme, identity, key: cacheKey(identity)}
}

/**
 * The cache key of an identity (DESIGN.md §5.1, "Cache key"): the slug of its last segment
 * (at most 40 characters, `repo` when nothing is left) + `-` + the first 8 hex of sha256(identity).
 */
export function cacheKey(identity: string): string {
  return `${identitySlug(identity)}-${process.getBuiltinModule('node:crypto').createHash('sha256').update(identity, 'utf8').digest('hex').slice(0, 8)}`
}

/**
 * The slug of an identity's last segment: lower-case, runs of other characters → `-`, trimmed,
 * at most 40 characters, `repo` when empty. It names a cache key and a sandbox's default slot
 * (DESIGN.md §5.1, §5.2).
 */
export function identitySlug(identity: string): string {
  const last = identity.split('/').pop() ?? ''
  const slug = last
    .toLowerCase()
    .replaceAll(/[^a-z0-9]+/g, '-')
    .replaceAll(/^-+|-+$/g, '')
    .slice(0, SLUG_MAX)
    .replace(/-+$/, '')
  return slug === '' ? 'repo' : slug
}

type Refuse = (why: string, fix: string) => InputError

interface Parsed {
  scheme: RepoScheme
  /** Lower-case host with a non-default port; empty for local. */
  host: string
  /** The raw path, still to be normalised. */
  path: string
}

function parseUrl(url: string, refuse: Refuse): Parsed {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw refuse('it is not a valid url', "check the url's spelling (scheme://host/path)")
  }

  const scheme = SCHEMES[parsed.protocol]
  if (scheme === undefined) {
    throw refuse(
      `the scheme ${parsed.protocol.slice(0, -1)} is not supported`,
      'use an https, http, ssh, git or file url, or user@host:path',
    )
  }

  if (scheme === 'local') {
    if (parsed.hostname !== '')
      throw refuse(
        `a file url names no host (got ${parsed.hostname})`,
        'write it as file:///absolute/path or as the absolute path itself',
      )
    return {scheme, host: '', path: decodePath(parsed.pathname)}
  }

  const hostname = parsed.hostname.toLowerCase()
  if (hostname === '') throw refuse('it names no host', 'write it as scheme://host/path')
  const written = rawAuthority(url)
  if (written !== undefined && written.host.toLowerCase() !== hostname) {
    throw refuse(
      `its host "${written.host}" is read as "${hostname}" by URL parsers, and maybe otherwise by git`,
      `write the host as ${hostname}`,
    )
  }

  if (written !== undefined && encodedDotSegment(written.rest)) {
    throw refuse(
      'its path has a percent-encoded "." or ".." segment, which URL parsers resolve differently',
      'write the path without "." and ".." segments',
    )
  }

  const port = parsed.port === '' || parsed.port === DEFAULT_PORTS[scheme] ? '' : `:${parsed.port}`
  return {scheme, host: hostname + port, path: decodePath(parsed.pathname)}
}

/**
 * `[user@]host:path` (git's scp-like syntax): a colon before any slash. git reads the host up to
 * the first colon, so a user holds neither `:` nor `@`, and the host no `@`.
 */
function parseScp(url: string, refuse: Refuse): Parsed {
  const head = url.split('/', 1)[0]
  const at = head.indexOf('@')
  const colon = head.indexOf(':')
  if (at !== -1 && ((colon !== -1 && colon < at) || head.includes('@', at + 1))) {
    throw refuse(
      'git reads user@host:path up to the first ":" as the host, so a ":" or a second "@" before the host names another host than it seems',
      'write it as user@host:org/repo.git; give a password or token through a credential helper, not in the url',
    )
  }

  const match = /^(?:([^@/:]*)@)?(\[[^\]/]+\]|[^:/[\]@]*):(.*)$/.exec(url)
  if (!match) {
    throw refuse(
      'it is neither a url (scheme://…), user@host:path, nor an absolute path; local paths must be absolute',
      'give an absolute path (e.g. /srv/git/repo.git) or the clone url',
    )
  }

  const [, user, host, path] = match
  if (user === '')
    throw refuse('its user name is empty (nothing before "@")', 'write it as user@host:org/repo.git, or leave out "@"')
  const bad = hostReason(host)
  if (bad !== undefined)
    throw refuse(bad, "give the repository's clone url exactly as its host shows it, e.g. git@github.com:org/repo.git")
  return {scheme: 'ssh', host: host.toLowerCase(), path}
}

/** Whether a path (before `?`/`#`) has a segment that decodes to `.` or `..` but is written otherwise. */
function encodedDotSegment(rest: string): boolean {
  const pathname = rest.split(/[?#]/, 1)[0]
  return pathname.split('/').some((segment) => segment.includes('%') && /^\.{1,2}$/.test(safeDecode(segment)))
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

/** Percent-decodes each segment, except where that would invent a `/` (kept encoded then). */
function decodePath(pathname: string): string {
  return pathname
    .split('/')
    .map((segment) => {
      try {
        const decoded = decodeURIComponent(segment)
        return decoded.includes('/') ? segment : decoded
      } catch {
        return segment
      }
    })
    .join('/')
}

function normalisePath(raw: string): string[] {
  const segments: string[] = []
  for (const segment of raw.split('/')) {
    if (segment === '' || segment === '.') continue
    if (segment === '..') segments.pop()
    else segments.push(segment)
  }

  const last = segments.length - 1
  if (last >= 0) {
    if (segments[last] === '.git') segments.pop()
    else if (segments[last].endsWith('.git')) segments[last] = segments[last].slice(0, -'.git'.length)
  }

  return segments
}
