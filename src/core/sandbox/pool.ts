/**
 * Warm pools of sandbox pods (docs/sandboxes.md, "Warm pool"): `yard sandbox pool set|list|rm`
 * and what `sandbox create` asks of a pool. A pool is a definition in the state directory,
 * `<state dir>/pools/<id>.json`, per project (owner), runtime and repository set: keep `size`
 * ready pods. Its id is the first 12 hex of sha256 over owner, runtime and the slots with their
 * cache keys, so `pool set` of the same set again changes the size of that pool. Refilling runs
 * in a detached `yard sandbox pool fill ID` (sandbox-pool-fill.ts).
 *
 * The identity rule (DESIGN.md §3.4) decides what a pool pod may carry: a sandbox's offset is its
 * label, a pin or the hash of its name, decided under the project lock when the sandbox is made,
 * so a pod made before the name is known has no offset, no name, no labels of a sandbox and no
 * published port. The claim gives it all of them from the same allocator a cold create uses.
 */
import {createHash} from 'node:crypto'
import {existsSync, promises as fs} from 'node:fs'
import path from 'node:path'

import type {PoolOwner, PoolPod} from '../../sdk/sandbox-pool.js'
import type {SandboxRepo, SandboxSpec} from '../../sdk/sandbox.js'
import type {YardContext} from '../kernel/context.js'
import type {Backends} from '../registry/backends.js'

import {InputError} from '../../sdk/errors.js'
import {identitySlug, repoIdentity} from '../../sdk/repo-identity.js'
import {redactUrl} from '../../sdk/repo-url.js'
import {parseRepoFlags} from '../../sdk/sandbox-repos.js'
import {requireClusterSource} from '../cluster/source.js'
import {stateDir} from '../kernel/state.js'
import {buildDefaultImage} from '../machine/image.js'
import {openSandboxCache, openSandboxes, type SandboxSession} from './sandbox.js'

/** The largest pool: each ready pod is a running container holding checkouts. */
export const POOL_MAX = 20

/** A pool as stored. */
export interface PoolDefinition {
  id: string
  prefix: string
  owner: string
  mainPath: string
  runtime: string
  /** `[SLOT=]URL` in order, credentials stripped; no `#REF` (the branch's base is each create's). */
  repos: string[]
  size: number
  /** The workspace image of its pods (`[cluster] image`, else yard's default image, at set). */
  image: string
  created: string
}

/** One row of `yard sandbox pool list` (stable `--json`). */
export interface PoolRow {
  id: string
  runtime: string
  repos: Array<{slot: string; url: string; key: string}>
  size: number
  image: string
  /** Running, prepared, unclaimed pods. */
  ready: number
  /**
   * Unclaimed pods, ready or not (starting, preparing, dead, of an older spec, `Gone`: a ready
   * marker left of a removed pod), and phase `orphaned`: taken by a create that died before its claim.
   */
  pods: Array<{name: string; phase: string; ready: boolean}>
}

const poolsDir = (env: NodeJS.ProcessEnv) => path.join(stateDir(env), 'pools')
const poolFile = (env: NodeJS.ProcessEnv, id: string) => path.join(poolsDir(env), `${id}.json`)

/** The pool id of a repository set (see the module comment). */
export function poolId(
  owner: string,
  runtime: string,
  repos: ReadonlyArray<Pick<SandboxRepo, 'slot' | 'key'>>,
): string {
  const text = JSON.stringify([owner, runtime, repos.map((repo) => [repo.slot, repo.key])])
  return createHash('sha256').update(text).digest('hex').slice(0, 12)
}

/**
 * What a pool pod is made of, hashed: runtime, image, cache root and per slot the mounted keys.
 * A pod of another fingerprint (the image changed, a submodule appeared) is never claimed.
 */
export function poolFingerprint(spec: Pick<SandboxSpec, 'runtime' | 'image' | 'cacheRoot' | 'repos'>): string {
  const text = JSON.stringify([
    spec.runtime,
    spec.image,
    spec.cacheRoot,
    spec.repos.map((repo) => [repo.slot, repo.key, (repo.submodules ?? []).map((submodule) => submodule.key)]),
  ])
  return createHash('sha256').update(text).digest('hex').slice(0, 12)
}

export const poolOwner = (pool: PoolDefinition): PoolOwner => ({id: pool.id, prefix: pool.prefix, owner: pool.owner})

/**
 * The pool of that id: its definition, `{corrupt: file}` when the file is there but no pool
 * definition (truncated, edited), or undefined when there is none.
 */
async function loadPool(env: NodeJS.ProcessEnv, id: string): Promise<PoolDefinition | {corrupt: string} | undefined> {
  const file = poolFile(env, id)
  const text = await fs.readFile(file, 'utf8').catch(() => undefined)
  if (text === undefined) return undefined
  try {
    const pool = JSON.parse(text) as PoolDefinition | null
    if (typeof pool?.id === 'string' && Array.isArray(pool.repos) && typeof pool.owner === 'string') return pool
  } catch {
    // Reported below, as for a file of another shape.
  }

  return {corrupt: file}
}

/**
 * The pool of that id, or undefined: none, or a file that holds no pool definition, which `warn`
 * is told about (naming the file and the fix) and is otherwise skipped.
 */
export async function readPool(
  env: NodeJS.ProcessEnv,
  id: string,
  warn?: (message: string) => void,
): Promise<PoolDefinition | undefined> {
  const pool = await loadPool(env, id)
  if (pool && 'corrupt' in pool) {
    warn?.(
      `warning: ${pool.corrupt} is no pool definition (truncated or edited); skipped. Remove it with yard sandbox pool rm ${id}, then run yard sandbox pool set again`,
    )
    return undefined
  }

  return pool
}

/** Every pool of the workspace's project (owner); a file that holds no definition is skipped, told to `warn`. */
export async function readPools(
  env: NodeJS.ProcessEnv,
  owner: string,
  warn?: (message: string) => void,
): Promise<PoolDefinition[]> {
  const entries = existsSync(poolsDir(env)) ? await fs.readdir(poolsDir(env)) : []
  const pools = await Promise.all(
    entries
      .filter((entry) => /^[0-9a-f]{12}\.json$/.test(entry))
      .map(async (entry) => readPool(env, entry.slice(0, -'.json'.length), warn)),
  )
  return pools
    .filter((pool): pool is PoolDefinition => pool !== undefined && pool.owner === owner)
    .sort((a, b) => a.id.localeCompare(b.id))
}

/**
 * A pool id as given (`pool fill ID`, `pool rm ID`): 12 lowercase hex, as poolId makes them; it
 * becomes a file name in the state directory, so nothing else passes.
 * @throws InputError (exit 2) otherwise, before any path is built from it.
 */
export function parsePoolId(text: string): string {
  if (!/^[0-9a-f]{12}$/.test(text))
    throw new InputError(`invalid pool id ${JSON.stringify(text)}`, {
      why: 'a pool id is 12 hex digits (the first of sha256 over owner, runtime and repositories)',
      fix: 'yard sandbox pool list shows the ids',
    })
  return text
}

/**
 * The pool size from `--size`: an integer in 1..POOL_MAX.
 * @throws InputError (exit 2) otherwise.
 */
export function parsePoolSize(text: string): number {
  const size = /^[0-9]+$/.test(text.trim()) ? Number(text.trim()) : NaN
  if (!Number.isInteger(size) || size < 1 || size > POOL_MAX) {
    throw new InputError(`invalid --size "${text}": a pool keeps a whole number of pods from 1 to ${POOL_MAX}`, {
      fix: `give --size 2 (or yard sandbox pool rm to have no pool)`,
    })
  }

  return size
}

/**
 * The pool session: the sandbox backend, which must support pools on the runtime. @throws
 * InputError (exit 2) when it does not.
 */
export async function openPools(
  context: YardContext,
  backends: Backends,
  runtimeFlag?: string,
): Promise<SandboxSession & {pool: NonNullable<SandboxSession['backend']['pool']>}> {
  const session = await openSandboxes(context, backends, runtimeFlag)
  const {pool} = session.backend
  if (!pool || !pool.runtimes.includes(session.runtime)) {
    throw new InputError(`warm pools are not supported on the ${session.runtime} runtime yet`, {
      why: `the ${session.backend.id} backend keeps pool pods on ${pool?.runtimes.join(', ') || 'no runtime'} (docs/sandboxes.md, "Warm pool")`,
      fix:
        pool && pool.runtimes.length > 0
          ? `use --runtime ${pool.runtimes[0]}, or create sandboxes cold`
          : 'create sandboxes cold',
    })
  }

  return {...session, pool}
}

/**
 * `yard sandbox pool set --repo [SLOT=]URL… --size N [--runtime R]`: writes the pool (a new one,
 * or the size of the pool of that set) and returns it; the caller starts the refill. On podman
 * every repository must be cached already (`yard cache add`): a pool never clones. On kubernetes
 * the nodes' agents hold the caches; each url must be one they can fetch, and the cluster
 * configured as a cold create needs it (the runtime's `check`).
 * @throws InputError (exit 2), before anything is written, for a bad size, `#REF`, an unknown or
 *   unsupported runtime, a repository not in the cache (podman) or not fetchable by the nodes
 *   (kubernetes), or a cluster not configured.
 */
export async function setPool(
  context: YardContext,
  backends: Backends,
  options: {repos: string[]; size: string; runtime?: string},
): Promise<PoolDefinition> {
  const size = parsePoolSize(options.size)
  const repos = parseRepoFlags(options.repos)
  const withRef = repos.find((repo) => repo.ref !== null)
  if (withRef) {
    throw new InputError(`a pool takes no #REF: --repo ${redactUrl(options.repos[repos.indexOf(withRef)])}`, {
      why: "a pool pod holds each repository's default branch in default/; the branch worktree and its base come with each sandbox create",
      fix: `give --repo ${withRef.url} to the pool and #${withRef.ref} to yard sandbox create`,
    })
  }

  const session = await openPools(context, backends, options.runtime)
  if (session.runtime === 'kubernetes') {
    // As for a cold create there: the nodes' agents clone and fetch, so each url must be one they reach.
    for (const repo of repos) requireClusterSource(repoIdentity(repo.url), repo.url)
  } else {
    const {cache, root} = await openSandboxCache(context, backends, session.workspace)
    const cached = new Map((await cache.list(root)).map((row) => [row.key, row]))
    for (const repo of repos) {
      if (!cached.get(repo.key)?.present) {
        throw new InputError(`${repo.url} is not in the cache ${root}`, {
          why: 'a pool never clones: its pods are made in the background from caches that are there',
          fix: `yard cache add ${repo.url}, then run yard sandbox pool set again`,
        })
      }
    }
  }

  // The refill runs detached, where nobody would see a missing kubeconfig or kubectl: checked now.
  await session.pool.check?.(session.runtime)

  const {workspace} = session
  const image = workspace.config.cluster.image ?? (await buildDefaultImage(context)).image
  const id = poolId(workspace.owner, session.runtime, repos)
  const known = await readPool(context.env, id)
  const pool: PoolDefinition = {
    id,
    prefix: workspace.prefix,
    owner: workspace.owner,
    mainPath: workspace.mainPath,
    runtime: session.runtime,
    repos: storedRepos(repos),
    size,
    image,
    created: known?.created ?? new Date().toISOString(),
  }
  await fs.mkdir(poolsDir(context.env), {recursive: true})
  await fs.writeFile(`${poolFile(context.env, id)}.tmp`, JSON.stringify(pool, null, 2) + '\n')
  await fs.rename(`${poolFile(context.env, id)}.tmp`, poolFile(context.env, id))
  return pool
}

/**
 * The `--repo` flags a pool keeps, without credentials (docs/cache.md, "Credentials": parseRepoFlag
 * strips them, as for the cache): `URL`, or `SLOT=URL` where the slot is not the url's own. The
 * id and the match of creates use slots and cache keys, which hold no credentials either.
 */
function storedRepos(repos: readonly SandboxRepo[]): string[] {
  return repos.map((repo) => (repo.slot === identitySlug(repo.identity) ? repo.url : `${repo.slot}=${repo.url}`))
}

/** `yard sandbox pool list`: every pool of the project with its pods. */
export async function listPools(context: YardContext, backends: Backends): Promise<PoolRow[]> {
  const session = await openSandboxes(context, backends)
  const pools = await readPools(context.env, session.workspace.owner, context.warn)
  return Promise.all(
    pools.map(async (pool) => poolRow(pool, await session.backend.pool!.pods(poolOwner(pool), pool.runtime))),
  )
}

function poolRow(pool: PoolDefinition, pods: PoolPod[]): PoolRow {
  const free = pods.filter((pod) => !pod.taken)
  // An orphan is listed so it can be seen: its create died before the claim; the refill removes it.
  const orphans = pods.filter((pod) => pod.orphaned).map(({name}) => ({name, phase: 'orphaned', ready: false}))
  return {
    id: pool.id,
    runtime: pool.runtime,
    repos: parseRepoFlags(pool.repos).map(({slot, url, key}) => ({slot, url, key})),
    size: pool.size,
    image: pool.image,
    ready: free.filter((pod) => pod.ready && pod.phase === 'Running').length,
    pods: [...free.map(({name, phase, ready}) => ({name, phase, ready})), ...orphans],
  }
}

/**
 * The pool `pool rm` means: `ID`, else the one of `--repo …` (and `--runtime`).
 * @throws InputError (exit 2) when neither or both are given, or no such pool exists.
 */
export async function findPool(
  context: YardContext,
  backends: Backends,
  options: {id?: string; repos?: string[]; runtime?: string},
): Promise<PoolDefinition> {
  const session = await openSandboxes(context, backends, options.runtime)
  const given = options.repos ?? []
  if ((options.id === undefined) === (given.length === 0))
    throw new InputError('name the pool by its id or by its --repo set, one of them', {
      fix: 'yard sandbox pool rm ID (yard sandbox pool list shows the ids), or yard sandbox pool rm --repo URL…',
    })
  const id = options.id ?? poolId(session.workspace.owner, session.runtime, parseRepoFlags(given))
  const pool = /^[0-9a-f]{12}$/.test(id) ? await loadPool(context.env, id) : undefined
  // A file that holds no definition is this state directory's: `pool rm ID` deletes it (no repos, no leases known).
  if (pool && 'corrupt' in pool)
    return {
      id,
      prefix: session.workspace.prefix,
      owner: session.workspace.owner,
      mainPath: session.workspace.mainPath,
      runtime: 'podman',
      repos: [],
      size: 0,
      image: '',
      created: '',
    }
  if (!pool || pool.owner !== session.workspace.owner)
    throw new InputError(`there is no pool ${options.id ?? `of ${given.join(' ')} on ${session.runtime}`}`, {
      fix: 'yard sandbox pool list shows the pools',
    })
  return pool
}

/** Deletes the pool's definition, so its refill stops at its next step; the pods go with removePoolPods. */
export async function forgetPool(context: YardContext, pool: PoolDefinition): Promise<void> {
  await fs.rm(poolFile(context.env, pool.id), {force: true})
}
