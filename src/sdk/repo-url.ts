/**
 * What a repository url may carry and how it is shown (DESIGN.md §5.1, "Identity"): the
 * characters and authorities refused because URL parsers disagree on them (the cache key must
 * name the repository git and curl actually talk to), credentials stripped before anything is
 * written or run, and passwords redacted wherever a url as given is shown.
 */

/** `scheme://authority…`: the scheme, the authority (up to the first `/`, `?` or `#`) and the rest. */
const AUTHORITY_URL = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^/?#]*)(.*)$/s

/** Schemes whose user name is a login rather than a credential (ssh needs it to log in). */
const LOGIN_SCHEMES = new Set(['ssh://', 'git+ssh://'])

/** A host as yard accepts it: an ASCII DNS name or IPv4 address, or a bracketed IPv6 literal. */
const HOST = /^(?:[A-Za-z0-9_][A-Za-z0-9_.-]*|\[[0-9A-Fa-f:.]+\])$/

/** The parts of a `scheme://` url's authority as written (before any parser rewrites them). */
export interface RawAuthority {
  scheme: string
  /** Everything before the `@`, undefined without one. */
  userinfo: string | undefined
  host: string
  /** The digits after the host's `:`, undefined without one. */
  port: string | undefined
  /** What follows the authority: path, query and fragment. */
  rest: string
}

/** Splits a `scheme://` url's authority as written; undefined for other urls. */
export function rawAuthority(url: string): RawAuthority | undefined {
  const match = AUTHORITY_URL.exec(url)
  if (!match) return undefined
  const [, scheme, authority, rest] = match
  const at = authority.lastIndexOf('@')
  const userinfo = at === -1 ? undefined : authority.slice(0, at)
  const hostPort = authority.slice(at + 1)
  const bracket = hostPort.startsWith('[') ? hostPort.indexOf(']') : -1
  const colon = hostPort.indexOf(':', bracket + 1)
  return {
    scheme: scheme.toLowerCase(),
    userinfo,
    host: colon === -1 ? hostPort : hostPort.slice(0, colon),
    port: colon === -1 ? undefined : hostPort.slice(colon + 1),
    rest,
  }
}

/**
 * Why a url (trimmed) must be refused before it is parsed, or undefined: a backslash (WHATWG
 * reads it as `/` in http(s) urls, git and curl as part of the user name, so `http://host\@evil/x`
 * would get the cache of `host` while git fetches from `evil`), a control character or whitespace
 * (WHATWG drops tabs and newlines), and in a `scheme://` authority: more than one `@`, an empty or
 * option-like user (ssh), an empty host, a host that is not plain ASCII (percent-encoded or
 * international names are rewritten by the parser), a host starting with `-` (ssh would read it
 * as an option), or a non-numeric port.
 */
export function unsafeUrlReason(url: string): string | undefined {
  if (url.includes('\\'))
    return 'it contains a backslash, which URL parsers read differently (WHATWG as "/", git and curl as part of the user name), so it could name one host to yard and another to git'
  const control = /\p{Cc}/u.exec(url)
  if (control)
    return `it contains the control character U+${control[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}, which URL parsers drop or keep differently`
  if (/\s/u.test(url)) return 'it contains whitespace, which URL parsers drop or keep differently'
  const raw = rawAuthority(url)
  if (raw === undefined || raw.scheme === 'file://') return undefined
  if (raw.userinfo !== undefined && raw.userinfo.includes('@'))
    return 'its authority has more than one "@", which URL parsers split at different places (encode an "@" in a user name or password as %40)'
  if (LOGIN_SCHEMES.has(raw.scheme) && raw.userinfo !== undefined) {
    const user = raw.userinfo.split(':', 1)[0]
    if (user === '') return 'its user name is empty (nothing before "@")'
    if (user.startsWith('-')) return `its user name starts with "-", so ssh would read it as an option`
  }

  return (
    hostReason(raw.host) ??
    (raw.port !== undefined && !/^\d*$/.test(raw.port) ? `its port "${raw.port}" is not a number` : undefined)
  )
}

/** Why a host as written is refused (see unsafeUrlReason), or undefined. */
export function hostReason(host: string): string | undefined {
  if (host === '') return 'it names no host'
  if (host.startsWith('-')) return `its host "${host}" starts with "-", so ssh would read it as an option`
  if (!HOST.test(host))
    return `its host "${host}" is not a plain ASCII host name or address (percent-encoded, international or other characters are rewritten by URL parsers)`
  return undefined
}

/**
 * The url without credentials (DESIGN.md §5.1): for https, http and git urls the whole userinfo
 * goes (a token is often given as the user name alone); for ssh urls the password goes and the
 * user name (the login) stays. git's credential helpers supply credentials when git needs them.
 * scp-like `user@host:path` carries no password and is returned as it is.
 */
export function withoutCredentials(url: string): string {
  const raw = rawAuthority(url)
  if (raw?.userinfo === undefined) return url
  const user = raw.userinfo.split(':', 1)[0]
  const userinfo = LOGIN_SCHEMES.has(raw.scheme) && user !== '' ? `${user}@` : ''
  return `${url.slice(0, url.indexOf('://') + 3)}${userinfo}${raw.host}${raw.port === undefined ? '' : `:${raw.port}`}${raw.rest}`
}

/**
 * The url as given, for messages: a password (`user:secret@`) is shown as `user:***@`. Works on
 * any text, also one that is not a valid url.
 */
export function redactUrl(text: string): string {
  const raw = rawAuthority(text)
  if (raw?.userinfo === undefined || !raw.userinfo.includes(':')) return text
  const start = text.indexOf('://') + 3
  const colon = text.indexOf(':', start)
  return `${text.slice(0, colon)}:***${text.slice(start + raw.userinfo.length)}`
}
