/**
 * Refilling and emptying warm pools (docs/sandboxes.md, "Warm pool"; definitions in
 * sandbox-pool.ts); what `sandbox create` takes from one is in warm.ts.
 *
 * The refill is a detached `yard sandbox pool fill ID` (spawnRefill), started by `pool set` and
 * after every claim, so no command waits for a pod to start. It holds the pool's lock
 * (`<state dir>/pools/<id>.lock`; a second refill finds it held and leaves), removes the pool's
 * dead pods and those of an older spec, makes pods one at a time until `size` are ready, and
 * exits: nothing stays running once the pool is full. It reads the definition before and after
 * each pod, so a pool removed meanwhile gets no pod that outlives it: `pool rm` forgets the
 * definition, waits for the lock and removes what is left.
 */
import {spawn} from 'node:child_process'
import {existsSync} from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

import type {SandboxRepo, SandboxSpec} from '../../sdk/sandbox.js'
import type {YardContext} from '../kernel/context.js'
import type {Backends} from '../registry/backends.js'

import {acquireLock, type HeldLock} from '../../sdk/lock.js'
import {parseRepoFlags} from '../../sdk/sandbox-repos.js'
import {stateDir} from '../kernel/state.js'
import {
  forgetPool,
  openPools,
  parsePoolId,
  type PoolDefinition,
  poolFingerprint,
  poolId,
  poolOwner,
  readPool,
  setPool,
} from './pool.js'
import {openSandboxCache, requireSandbox, type SandboxSession} from './sandbox.js'

/** The refill's nice value (setpriority(2)): below every foreground command. */
const BACKGROUND_PRIORITY = 10

/** How long one pod may take to start and be prepared, in ms (a lock older than this is stale). */
const FILL_STEP_MS = 180_000

const lockPath = (env: NodeJS.ProcessEnv, id: string) => path.join(stateDir(env), 'pools', `${id}.lock`)

/** The lease a pool holds on each of its caches while it exists: `pool <id>`. */
export const poolBorrower = (id: string) => ({kind: 'pool', name: id})

/** The spec of the pool's pods: its repositories (with the submodules the cache knows), no branch, no port. */
async function poolSpec(
  context: YardContext,
  backends: Backends,
  session: SandboxSession,
  pool: PoolDefinition,
): Promise<SandboxSpec> {
  // On a cluster the nodes' cache agents hold the caches, as for a cold create: nothing local.
  if (pool.runtime === 'kubernetes') {
    const cacheRoot = session.workspace.config.cluster['cache-root']
    return {
      runtime: pool.runtime,
      image: pool.image,
      cacheRoot,
      repos: parseRepoFlags(pool.repos),
      branch: '',
      portBases: {},
    }
  }

  const {cache, root} = await openSandboxCache(context, backends, session.workspace)
  const repos: SandboxRepo[] = []
  for (const repo of parseRepoFlags(pool.repos)) {
    const added = await cache.add(
      root,
      repo.url,
      session.workspace.config.cache.lfs ? {lfs: session.workspace.config.cache.lfs} : {},
    )
    const usable = (added.submodules ?? []).filter((submodule) => submodule.present)
    repos.push(usable.length > 0 ? {...repo, submodules: usable.map(({url, key}) => ({url, key}))} : repo)
  }

  return {runtime: pool.runtime, image: pool.image, cacheRoot: root, repos, branch: '', portBases: {}}
}

/**
 * `yard sandbox pool fill ID` (see the module comment): refills the pool until it is full, or it
 * is gone. Resolves how many pods it made; 0 when another refill holds the lock.
 * @throws InputError (exit 2) for an id that is no pool id (parsePoolId), before anything is read;
 *   OperationError when a pod cannot be made (the pool stays as it was).
 */
export async function fillPool(
  context: YardContext,
  backends: Backends,
  id: string,
): Promise<{made: string[]; removed: string[]}> {
  parsePoolId(id)
  const made: string[] = []
  const removed: string[] = []
  for (;;) {
    let lock: HeldLock
    try {
      lock = await acquireLock(lockPath(context.env, id), {
        budgetMs: FILL_STEP_MS,
        waitMs: 0,
        purpose: `sandbox pool fill ${id}`,
        warn: context.warn,
      })
    } catch {
      return {made, removed}
    }

    try {
      for (;;) {
        const pool = await readPool(context.env, id)
        if (!pool) return {made, removed: [...removed, ...(await removeFree(context, backends, id))]}
        const session = await openPools(context, backends, pool.runtime)
        const spec = await poolSpec(context, backends, session, pool)
        const fingerprint = poolFingerprint(spec)
        const pods = await session.pool.pods(poolOwner(pool), pool.runtime)
        const free = pods.filter((pod) => !pod.taken)
        // Dead, or made from another spec: never claimable. Unready ones of this process's past are
        // gone with it (a pod is marked ready before fill returns), so an unready pod is a dead refill's.
        // An orphan (taken by a create that died before its claim) is nobody's: it goes too.
        for (const pod of [
          ...free.filter((pod) => pod.phase !== 'Running' || pod.fingerprint !== fingerprint || !pod.ready),
          ...pods.filter((pod) => pod.orphaned),
        ]) {
          await session.pool.remove(pod.name, pool.runtime)
          removed.push(pod.name)
        }

        const ready = free.filter((pod) => pod.phase === 'Running' && pod.fingerprint === fingerprint && pod.ready)
        for (const pod of ready.slice(pool.size)) {
          await session.pool.remove(pod.name, pool.runtime)
          removed.push(pod.name)
        }

        if (ready.length >= pool.size) break
        const pod = await session.pool.fill(poolOwner(pool), spec, fingerprint, {
          fetchThroughSeconds: session.workspace.config.cache['fetch-through-seconds'],
        })
        made.push(pod)
        if (!(await readPool(context.env, id))) {
          await session.pool.remove(pod, pool.runtime)
          removed.push(pod)
        }
      }
    } finally {
      await lock.release()
    }

    // A claim between the last count and the release found the lock held: look once more.
    const pool = await readPool(context.env, id)
    if (!pool) return {made, removed}
    const session = await openPools(context, backends, pool.runtime)
    const free = (await session.pool.pods(poolOwner(pool), pool.runtime)).filter(
      (pod) => !pod.taken && pod.phase === 'Running' && pod.ready,
    )
    if (free.length >= pool.size) return {made, removed}
  }
}

/** Removes every unclaimed pod of pool `id` (its definition already gone); resolves their names. */
async function removeFree(context: YardContext, backends: Backends, id: string, runtime = 'podman'): Promise<string[]> {
  const session = await openPools(context, backends, runtime)
  const owner = {id, prefix: session.workspace.prefix, owner: session.workspace.owner}
  // Claimed pods are sandboxes and stay; an orphan (its create died before the claim) is nobody's.
  const free = (await session.pool.pods(owner, runtime)).filter((pod) => !pod.taken || pod.orphaned)
  await Promise.all(free.map(async (pod) => session.pool.remove(pod.name, runtime)))
  return free.map((pod) => pod.name)
}

/**
 * `yard sandbox pool rm`: forgets the pool (a running refill stops at its next step), waits for
 * its lock, removes its unclaimed pods (orphans of a create that died before its claim too) and
 * releases its leases. Claimed pods are sandboxes now and stay. With `dryRun`, only says which pods would go.
 */
export async function removePool(
  context: YardContext,
  backends: Backends,
  pool: PoolDefinition,
  options: {dryRun: boolean},
): Promise<{id: string; pods: string[]}> {
  const session = await openPools(context, backends, pool.runtime)
  if (options.dryRun)
    return {
      id: pool.id,
      pods: (await session.pool.pods(poolOwner(pool), pool.runtime))
        .filter((pod) => !pod.taken || pod.orphaned)
        .map((pod) => pod.name),
    }
  await forgetPool(context, pool)
  const lock = await acquireLock(lockPath(context.env, pool.id), {
    budgetMs: FILL_STEP_MS,
    purpose: `sandbox pool rm ${pool.id}`,
    warn: context.warn,
  })
  try {
    const pods = await removeFree(context, backends, pool.id, pool.runtime)
    const {cache, root} = await openSandboxCache(context, backends, session.workspace)
    // A definition that was unreadable knows no repositories: no lease of it can be named.
    for (const repo of pool.repos.length > 0 ? parseRepoFlags(pool.repos) : [])
      await cache.release(root, repo.url, poolBorrower(pool.id)).catch(() => undefined)
    return {id: pool.id, pods}
  } finally {
    await lock.release()
  }
}

/** Takes the pool's lease on each of its caches (at `pool set`). */
export async function leasePool(
  context: YardContext,
  backends: Backends,
  session: SandboxSession,
  pool: PoolDefinition,
): Promise<void> {
  // A cluster's caches are its nodes' (a Repo per key): nothing of this machine's to lease.
  if (pool.runtime === 'kubernetes') return
  const {cache, root} = await openSandboxCache(context, backends, session.workspace)
  for (const repo of parseRepoFlags(pool.repos)) await cache.lease(root, repo.url, poolBorrower(pool.id))
}

/**
 * Starts `yard sandbox pool fill ID` detached from this process (its own session, no terminal,
 * output nowhere), so the command that started it returns at once and the refill outlives it.
 * Node reaps it if it ends while this process still runs; after that, init does.
 */
export function spawnRefill(context: YardContext, pool: Pick<PoolDefinition, 'id' | 'mainPath'>): void {
  spawnYard(context, pool.mainPath, ['sandbox', 'pool', 'fill', pool.id], {nice: true})
}

/** `yard ARGS…` detached in `cwd` (see spawnRefill); a failure to start is warned about. */
export function spawnYard(context: YardContext, cwd: string, args: string[], options: {nice?: boolean} = {}): void {
  const env = {...context.env, YARD_WORKTREE: undefined, WT_OFFSET: undefined}
  const child = spawn(process.execPath, [yardEntry(), ...args], {detached: true, stdio: 'ignore', env, cwd})
  child.on('error', (error) =>
    context.warn(`warning: yard ${args.join(' ')} could not start in the background: ${error.message}`),
  )
  // Background work yields the CPU to the commands someone waits for (podman and the pod's git inherit it).
  if (child.pid !== undefined && options.nice) {
    try {
      os.setPriority(child.pid, BACKGROUND_PRIORITY)
    } catch {
      // A priority is a courtesy: the refill runs as well without it.
    }
  }

  child.unref()
}

/** yard's entry script: bin/run.js of a built package, bin/dev.js when running from the sources. */
function yardEntry(): string {
  const here = fileURLToPath(import.meta.url)
  let root = path.dirname(here)
  while (!existsSync(path.join(root, 'package.json')) && path.dirname(root) !== root) root = path.dirname(root)
  return path.join(root, 'bin', here.endsWith('.ts') ? 'dev.js' : 'run.js')
}

/** `yard sandbox pool relay NAME`: the host ports of claimed sandbox NAME, until it is removed (port-relay.ts). */
export async function relaySandbox(context: YardContext, backends: Backends, name: string): Promise<void> {
  const session = await openPools(context, backends, 'podman')
  const {sandbox} = await requireSandbox(context, session, name)
  await session.pool.relay(sandbox)
}

/** Whether the project has a pool of this repository set on the session's runtime (the state directory only). */
export async function hasPool(
  context: YardContext,
  session: SandboxSession,
  repos: readonly SandboxRepo[],
): Promise<boolean> {
  if (!session.backend.pool?.runtimes.includes(session.runtime)) return false
  const id = poolId(session.workspace.owner, session.runtime, repos)
  return (await readPool(context.env, id, context.warn)) !== undefined
}

/**
 * `yard sandbox pool set` (sandbox-pool.ts setPool checks and writes the definition), then the
 * pool's leases and its refill in the background. Resolves the pool as `pool list` shows it.
 */
export async function poolSet(
  context: YardContext,
  backends: Backends,
  options: {repos: string[]; size: string; runtime?: string},
): Promise<PoolDefinition> {
  const pool = await setPool(context, backends, options)
  await leasePool(context, backends, await openPools(context, backends, pool.runtime), pool)
  spawnRefill(context, pool)
  return pool
}
