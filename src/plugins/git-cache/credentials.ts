/**
 * Credentials of the cluster-mode agent for private repositories (DESIGN.md §5.2: every
 * repository must be fetchable from the cluster, with an HTTPS token or a deploy-key Secret for
 * private ones). The agent's pod mounts the Secret `yard cluster credentials set` writes, read-only,
 * at `YARD_CREDENTIALS_DIR`: per url prefix an entry `<id>.prefix` with either `<id>.username` and
 * `<id>.token` (https) or `<id>.ssh-key` and optionally `<id>.known-hosts` (ssh). The longest
 * prefix of a Repo's url picks the entry, and git gets it only through its own mechanisms, for
 * that one git process, in its environment:
 * - https: a credential helper scoped to the prefix's scheme and host
 *   (`credential.<scheme>://<host>.helper`, after `credential.helper=` resets inherited ones;
 *   gitcredentials(7)) that prints the mounted files' contents — the token never enters a url,
 *   an argv, the cache's config, a record or a log;
 * - ssh: `GIT_SSH_COMMAND` with the key file, no agent, and the known hosts when given.
 * Config goes through `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_<n>`/`GIT_CONFIG_VALUE_<n>` (git-config(1)),
 * appended to any the agent already has.
 */
import {existsSync, readdirSync, readFileSync} from 'node:fs'
import path from 'node:path'

/** One mounted entry: its id (file stem), url prefix and kind. */
export interface MountedCredential {
  id: string
  prefix: string
  kind: 'token' | 'ssh'
}

/** What a git process gets for a url: the entry matched, and the environment to add. */
export interface CredentialMatch {
  credential: MountedCredential
  env: Record<string, string>
}

/** Entry ids are what `yard cluster credentials set` writes: `c` + 12 hex. */
const ID = /^c[0-9a-f]{12}$/

/** The entries of a mounted Secret directory (none when it is absent or empty: the Secret is optional). */
export function mountedCredentials(dir: string): MountedCredential[] {
  if (!existsSync(dir)) return []
  const found: MountedCredential[] = []
  for (const name of readdirSync(dir)) {
    const match = /^(.+)\.prefix$/.exec(name)
    if (!match || !ID.test(match[1])) continue
    const id = match[1]
    const prefix = readFileSync(path.join(dir, name), 'utf8').trim()
    if (prefix === '') continue
    if (existsSync(path.join(dir, `${id}.token`))) found.push({id, prefix, kind: 'token'})
    else if (existsSync(path.join(dir, `${id}.ssh-key`))) found.push({id, prefix, kind: 'ssh'})
  }

  return found
}

/** The entry whose prefix is the longest one of `url`, or undefined. */
export function matchCredential(entries: readonly MountedCredential[], url: string): MountedCredential | undefined {
  return entries.filter((entry) => url.startsWith(entry.prefix)).sort((a, b) => b.prefix.length - a.prefix.length)[0]
}

/** `'…'` for sh; the directory is the agent's own setting, refused when it could break out. */
function quoted(file: string): string {
  if (file.includes("'")) throw new Error(`the credentials path ${file} holds a single quote`)
  return `'${file}'`
}

/** `https://host[:port]` of an https or http prefix: the credential context git matches. */
function schemeAndHost(prefix: string): string | undefined {
  return /^(https?:\/\/[^/]+)/i.exec(prefix)?.[1]
}

/**
 * The environment that lets git authenticate `url` with the mounted entry matching it, or
 * undefined when none matches. `baseEnv` is the agent's (its `GIT_CONFIG_COUNT` is kept).
 */
export function credentialsFor(dir: string, url: string, baseEnv: NodeJS.ProcessEnv): CredentialMatch | undefined {
  const credential = matchCredential(mountedCredentials(dir), url)
  if (!credential) return undefined
  const file = (suffix: string) => quoted(path.join(dir, `${credential.id}.${suffix}`))
  if (credential.kind === 'ssh') {
    const knownHosts = existsSync(path.join(dir, `${credential.id}.known-hosts`))
    const options = [
      '-i',
      file('ssh-key'),
      '-o',
      'IdentitiesOnly=yes',
      '-o',
      'IdentityAgent=none',
      '-o',
      'BatchMode=yes',
      ...(knownHosts
        ? ['-o', `UserKnownHostsFile=${file('known-hosts')}`, '-o', 'StrictHostKeyChecking=yes']
        : ['-o', 'StrictHostKeyChecking=accept-new']),
    ]
    return {credential, env: {GIT_SSH_COMMAND: ['ssh', ...options].join(' ')}}
  }

  const context = schemeAndHost(credential.prefix)
  if (!context) return undefined
  // Only `get` answers; store and erase have nothing to do (the Secret is the store).
  const helper = String.raw`!f() { test "$1" = get || exit 0; printf 'username=%s\npassword=%s\n' "$(cat ${file('username')})" "$(cat ${file('token')})"; }; f`
  const count = Number(baseEnv.GIT_CONFIG_COUNT ?? 0) || 0
  return {
    credential,
    env: {
      GIT_CONFIG_COUNT: String(count + 2),
      [`GIT_CONFIG_KEY_${count}`]: 'credential.helper',
      [`GIT_CONFIG_VALUE_${count}`]: '',
      [`GIT_CONFIG_KEY_${count + 1}`]: `credential.${context}.helper`,
      [`GIT_CONFIG_VALUE_${count + 1}`]: helper,
    },
  }
}

/**
 * What a node adds to git's words when a clone or fetch of a remote `url` failed and no
 * credentials matched it (a private repository needs them).
 */
export function missingCredentialsNote(url: string): string {
  return `no yard cluster credentials match ${url}; a private repository needs them: yard cluster credentials set URL-PREFIX --token-from-env VAR (https) or --ssh-key FILE (ssh)`
}
