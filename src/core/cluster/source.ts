import type {RepoIdentity} from '../../sdk/repo-identity.js'

/**
 * Which repositories a cluster can fetch (DESIGN.md §5.2, "Runtimes": every repository must be
 * fetchable from the cluster). A node's cache agent clones on the node, so a working copy that
 * exists only on someone's host is not a valid source: a local path, a `file://` url, and hosts
 * that resolve only to the machine asking — `localhost` and its subdomains (RFC 6761 §6.3), the
 * IPv4 loopback block 127.0.0.0/8 and IPv6 `[::1]` (RFC 1122 §3.2.1.3, RFC 4291 §2.5.3), and the
 * unspecified addresses 0.0.0.0 and `[::]`, which clients connect to as this machine; a trailing dot
 * (`localhost.`) names the same host. They
 * are refused before anything is made on the cluster. Pure: no git, no network.
 */
import {InputError} from '../../sdk/errors.js'
import {redactUrl} from '../../sdk/repo-url.js'

/** The host of a non-local identity `host[:port]/path` (`[v6]` kept bracketed). */
export function identityHost(identity: string): string {
  const authority = identity.split('/', 1)[0]
  if (authority.startsWith('[')) return authority.slice(0, authority.indexOf(']') + 1)
  return authority.split(':', 1)[0]
}

/** Why the cluster cannot fetch this repository by construction, or undefined when it may. */
export function clusterSourceProblem(repo: Pick<RepoIdentity, 'scheme' | 'identity'>): string | undefined {
  if (repo.scheme === 'local')
    return 'it is a path on this machine (a local path or a file:// url), which no node of the cluster can read'
  // A trailing dot is the same name, fully qualified (RFC 1034 §3.1); hosts are case-insensitive.
  const host = identityHost(repo.identity).toLowerCase().replace(/\.$/, '')
  if (host === 'localhost' || host.endsWith('.localhost'))
    return `its host ${host} is this machine: on a node it names the node itself`
  if (/^127\.\d+\.\d+\.\d+$/.test(host))
    return `its host ${host} is a loopback address (127.0.0.0/8): on a node it names the node itself`
  if (host === '[::1]') return 'its host [::1] is the IPv6 loopback address: on a node it names the node itself'
  if (host === '0.0.0.0' || host === '[::]')
    return `its host ${host} is the unspecified address, which a client takes for this machine: on a node it names the node itself`
  return undefined
}

/**
 * Refuses a repository a cluster cannot fetch (see the module comment).
 * @throws InputError (exit 2) naming the url as given, the rule and the fix.
 */
export function requireClusterSource(
  repo: Pick<RepoIdentity, 'scheme' | 'identity'>,
  given: string,
  flag = '--repo',
): void {
  const problem = clusterSourceProblem(repo)
  if (problem === undefined) return
  throw new InputError(`${flag} ${JSON.stringify(redactUrl(given))} cannot be fetched by the cluster`, {
    why: `the nodes' cache agents clone every repository on the node, so it must be reachable from the cluster; ${problem}`,
    fix: 'push it somewhere the cluster can fetch (your git host: https://… or git@host:…) and give that url, or use --runtime podman for a repository that exists only here',
  })
}
