/**
 * `yard cluster credentials set|list|rm` (DESIGN.md §5.2: private repositories need an HTTPS
 * token or a deploy-key Secret): per url prefix one entry of the cluster's credentials Secret,
 * which the nodes' cache agents mount and hand to git (docs/cluster.md, "Private
 * repositories"). The token is read from an environment variable (never an argument: argv is
 * visible to every user of the machine) and no result or message carries it.
 */
import {existsSync, readFileSync, statSync} from 'node:fs'
import path from 'node:path'

import type {ClusterCredential, SandboxClusterSetup} from '../../sdk/sandbox.js'
import type {YardContext} from '../kernel/context.js'
import type {Backends} from '../registry/backends.js'

import {InputError} from '../../sdk/errors.js'
import {rawAuthority, redactUrl} from '../../sdk/repo-url.js'
import {openClusterSetup} from './cluster.js'

/** `yard cluster credentials set` flags. */
export interface CredentialSetRequest {
  prefix: string
  /** Name of the environment variable holding the https token. */
  tokenFromEnv?: string
  /** The https user name (default `x-access-token`, what GitHub and most hosts accept with a token). */
  username?: string
  /** Private key file of a deploy key (ssh). */
  sshKey?: string
  /** known_hosts file for the ssh host. */
  knownHosts?: string
}

const SCP_PREFIX = /^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:/

/**
 * Checks a url prefix: `https://host[:port]/…` or `http://…` for a token, `ssh://[user@]host/…`
 * or `user@host:…` for a deploy key; never with a password or token in it. A prefix that ends
 * with its host gets a `/`, so it covers that host only.
 * @throws InputError (exit 2) naming the rule.
 */
export function checkPrefix(prefix: string, kind: 'token' | 'ssh'): string {
  const text = prefix.trim()
  const refuse = (why: string, fix: string) =>
    new InputError(`invalid credentials url prefix ${JSON.stringify(redactUrl(text))}`, {why, fix})
  if (text === '' || text.startsWith('-'))
    throw refuse(
      'it is empty or starts with "-"',
      'give the start of the repository urls it serves, e.g. https://github.com/acme/',
    )
  if (/\s|\\/.test(text))
    throw refuse('it holds whitespace or a backslash', "give the url prefix exactly as the Repos' urls start")
  const raw = rawAuthority(text)
  if (kind === 'token') {
    if (!raw || (raw.scheme !== 'https://' && raw.scheme !== 'http://') || raw.host === '')
      throw refuse(
        'a token is for https (or http) urls: the prefix must be https://host/…',
        'e.g. https://github.com/acme/ (ssh urls take --ssh-key)',
      )
    if (raw.userinfo !== undefined)
      throw refuse(
        'it holds a user name or token before "@"; the token comes from --token-from-env and the user from --username',
        'write the prefix without "user@" or "user:token@"',
      )
    // A bare host ends at "/": https://github.com must not also cover https://github.com.evil.example/.
    return raw.rest === '' ? `${text}/` : text
  }

  if (raw ? raw.scheme !== 'ssh://' && raw.scheme !== 'git+ssh://' : !SCP_PREFIX.test(text))
    throw refuse(
      'a deploy key is for ssh urls: ssh://[user@]host/… or user@host:…',
      'e.g. git@github.com:acme/ (https urls take --token-from-env)',
    )
  if (raw?.userinfo?.includes(':')) throw refuse('it holds a password', 'write it as ssh://user@host/…')
  return raw && raw.rest === '' ? `${text}/` : text
}

async function credentialSetup(
  context: YardContext,
  backends: Backends,
): Promise<
  SandboxClusterSetup & Required<Pick<SandboxClusterSetup, 'setCredential' | 'listCredentials' | 'removeCredential'>>
> {
  const {setup} = await openClusterSetup(context, backends)
  if (!setup.setCredential || !setup.listCredentials || !setup.removeCredential) {
    throw new InputError('the sandbox backend keeps no cluster credentials', {
      fix: 'set [cluster] backend = "k8s-sandbox" in yard.toml',
    })
  }

  return setup as never
}

function readFile(file: string, flag: string): string {
  if (!existsSync(file) || !statSync(file).isFile())
    throw new InputError(`${flag} ${file} is not a file`, {
      fix: `give the path of the file (${flag} ~/.ssh/deploy_key)`,
    })
  return readFileSync(path.resolve(file), 'utf8')
}

/**
 * The https user name sent with a token (`--username`, default `x-access-token`): no whitespace,
 * no ":" (it ends the user in a credential), no control character, no leading "-".
 * @throws InputError (exit 2) naming the value.
 */
export function checkUsername(given: string | undefined): string {
  const username = given?.trim() || 'x-access-token'
  if (/[\s:\p{Cc}]/u.test(username) || username.startsWith('-')) {
    throw new InputError(`invalid --username ${JSON.stringify(username)}`, {
      why: 'a user name holds no whitespace, ":" or control character, and does not start with "-"',
      fix: 'give the user name the host expects with a token (GitHub: any, GitLab: oauth2)',
    })
  }

  return username
}

/**
 * `yard cluster credentials set PREFIX --token-from-env VAR [--username U] | --ssh-key FILE [--known-hosts FILE]`.
 * @returns the entry as listed (no secret), and what happened to the Secret.
 * @throws InputError (exit 2) for a bad prefix, both or neither kind, an empty variable or a
 *   missing file, before the cluster is asked; OperationError (exit 1) when it refuses.
 */
export async function setCredential(
  context: YardContext,
  backends: Backends,
  request: CredentialSetRequest,
): Promise<{entry: ClusterCredential; action: 'created' | 'updated'; secret: string}> {
  const token = request.tokenFromEnv !== undefined
  const ssh = request.sshKey !== undefined
  if (token === ssh) {
    throw new InputError(
      token
        ? 'give either --token-from-env or --ssh-key, not both'
        : 'credentials need --token-from-env VAR (https) or --ssh-key FILE (ssh)',
      {
        fix: 'yard cluster credentials set https://github.com/acme/ --token-from-env GITHUB_TOKEN, or yard cluster credentials set git@github.com:acme/ --ssh-key ~/.ssh/deploy_key --known-hosts ~/.ssh/known_hosts',
      },
    )
  }

  if (!ssh && request.knownHosts !== undefined)
    throw new InputError('--known-hosts goes with --ssh-key', {fix: 'leave out --known-hosts for an https token'})
  if (ssh && request.username !== undefined)
    throw new InputError('--username goes with --token-from-env', {fix: 'an ssh url carries its user (git@host:…)'})
  const prefix = checkPrefix(request.prefix, token ? 'token' : 'ssh')
  const username = token ? checkUsername(request.username) : undefined
  const setup = await credentialSetup(context, backends)
  if (token) {
    const variable = request.tokenFromEnv!
    const value = context.env[variable]?.trim()
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(variable) || !value) {
      throw new InputError(`the environment variable ${JSON.stringify(variable)} holds no token`, {
        why: 'the token is read from the environment, never from an argument (argv is visible to every user of this machine)',
        fix: `export ${/^[A-Za-z_][A-Za-z0-9_]*$/.test(variable) ? variable : 'GITHUB_TOKEN'}=… first (read -rs VAR && export VAR), then run the command again`,
      })
    }

    const done = await setup.setCredential({prefix, kind: 'token', username: username!, token: value})
    return {entry: {prefix, kind: 'token', username: username!, knownHosts: false}, ...done}
  }

  const key = readFile(request.sshKey!, '--ssh-key')
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(key))
    throw new InputError(`--ssh-key ${request.sshKey} is not a private key`, {
      why: 'it has no "-----BEGIN … PRIVATE KEY-----" line',
      fix: 'give the private half of the deploy key (not the .pub file)',
    })
  const knownHosts = request.knownHosts === undefined ? undefined : readFile(request.knownHosts, '--known-hosts')
  const done = await setup.setCredential({prefix, kind: 'ssh', key, ...(knownHosts && {knownHosts})})
  return {entry: {prefix, kind: 'ssh', username: null, knownHosts: knownHosts !== undefined}, ...done}
}

/** `yard cluster credentials list`: every entry, without secrets. */
export async function listCredentials(context: YardContext, backends: Backends): Promise<ClusterCredential[]> {
  return (await credentialSetup(context, backends)).listCredentials()
}

/**
 * `yard cluster credentials rm PREFIX`.
 * @throws InputError (exit 2) when no entry has that prefix, listing those there are.
 */
export async function removeCredential(
  context: YardContext,
  backends: Backends,
  prefix: string,
): Promise<{prefix: string}> {
  const setup = await credentialSetup(context, backends)
  if (await setup.removeCredential(prefix.trim())) return {prefix: prefix.trim()}
  const known = (await setup.listCredentials()).map((entry) => entry.prefix)
  throw new InputError(`no credentials for the url prefix ${JSON.stringify(redactUrl(prefix))}`, {
    why: known.length > 0 ? `the prefixes with credentials are ${known.join(', ')}` : 'the cluster has no credentials',
    fix: 'yard cluster credentials list shows them',
  })
}
