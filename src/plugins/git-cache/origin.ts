import type {ProcessRunner} from '../../sdk/process.js'
import type {CachePaths, CacheRecord} from './layout.js'
import type {LocalConfig} from './repository.js'

/**
 * Where a cache fetches from (DESIGN.md §5.1, "Identity"): a cache's key names one repository,
 * so its `remote.origin.url` and its record's url must have that key. A cache whose origin was
 * changed by hand, or recorded from a url yard now refuses (`http://host\@evil/…`), would bring
 * another repository's objects into every clone made from it: add, fetch, maintain and adoption
 * refuse it.
 */
import {RefusedError} from '../../sdk/errors.js'
import {repoIdentity} from '../../sdk/repo-identity.js'
import {redactUrl} from '../../sdk/repo-url.js'

/** The url a cache fetches from, as git has it and without credentials. */
export interface CacheOrigin {
  /** `remote.origin.url` without credentials; null when unset (a repository adopted bare). */
  origin: string | null
  /** The record's url without credentials; null without a record or url. */
  recorded: string | null
}

/** `git config --get remote.origin.url` of the cache; null when unset. */
async function originUrl(runner: ProcessRunner, repo: string): Promise<string | null> {
  const result = await runner.git(['config', '--local', '--get', 'remote.origin.url'], {cwd: repo, allowFailure: true})
  return result.exitCode === 0 ? result.stdout.trim() : null
}

/**
 * Checks that the cache's `remote.origin.url` and recorded url both name the repository of its
 * key (and, when `asked` is given, that identity). `config` (readLocalConfig) spares the read of
 * `remote.origin.url`.
 * @returns both urls without credentials (a record written with a token is rewritten from this).
 * @throws RefusedError (exit 3) naming the url found, why it is not this cache's, and how to
 *   inspect and remove the cache.
 */
export async function checkOrigin(
  runner: ProcessRunner,
  paths: CachePaths,
  record: CacheRecord | undefined,
  asked: {url: string; identity: string} | null,
  config?: LocalConfig,
): Promise<CacheOrigin> {
  // As `git config --get` answers: the last value, none when unset.
  const origin = config ? (config.get('remote.origin.url')?.at(-1) ?? null) : await originUrl(runner, paths.repo)
  const found: CacheOrigin = {origin: null, recorded: null}
  for (const [where, url] of [
    ['remote.origin.url', origin],
    [`recorded url (${paths.record})`, record?.url ?? null],
  ] as const) {
    if (url === null) continue
    let problem: string | undefined
    let clean: string | undefined
    try {
      const identity = repoIdentity(url)
      clean = identity.url
      if (identity.key !== paths.key || (asked !== null && identity.identity !== asked.identity))
        problem = `names ${identity.identity} (key ${identity.key})`
    } catch (error) {
      problem = `is a url yard refuses: ${(error as {why?: string}).why ?? (error as Error).message}`
    }

    if (problem !== undefined) throw foreignOrigin(paths, where, url, problem, asked)
    if (where === 'remote.origin.url') found.origin = clean!
    else found.recorded = clean!
  }

  return found
}

function foreignOrigin(
  paths: CachePaths,
  where: string,
  url: string,
  problem: string,
  asked: {url: string; identity: string} | null,
): RefusedError {
  const wanted = asked ? asked.identity : `the repository of its key ${paths.key}`
  return new RefusedError(
    `the cache ${paths.key} at ${paths.repo} fetches from ${JSON.stringify(redactUrl(url))}, which is not ${wanted}`,
    {
      why: `its ${where} ${problem}: somebody changed it, or it was recorded from a url that names another host to git than to yard; fetching would bring that repository's objects into every clone made from this cache`,
      fix: `inspect it (git -C ${paths.repo} config --get remote.origin.url; git -C ${paths.repo} log --oneline -3 --all); if it is not the repository you meant, remove the cache (yard cache evict ${asked ? asked.url : 'URL'}, after yard sandbox rm of its borrowers) and run yard cache add ${asked ? asked.url : 'URL'} again`,
    },
  )
}
