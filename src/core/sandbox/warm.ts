/**
 * What `sandbox create` takes from a warm pool (docs/sandboxes.md, "Warm pool"), in two steps so
 * the pool's listing overlaps the create's other reads: `warmCandidate` finds the pool of the
 * create's repository set and starts listing its pods (a read: nothing is taken), and `takeWarm`
 * takes a ready pod of that listing once the spec is complete (its submodules come from the
 * caches, and with them the fingerprint a pod must have).
 */
import type {PoolPod} from '../../sdk/sandbox-pool.js'
import type {SandboxSpec} from '../../sdk/sandbox.js'
import type {YardContext} from '../kernel/context.js'

import {spawnRefill} from './pool-fill.js'
import {type PoolDefinition, poolFingerprint, poolId, poolOwner, readPool} from './pool.js'
import {type SandboxSession} from './sandbox.js'

/** A pool a create may claim from, and its pods as being listed. */
export interface WarmCandidate {
  pool: PoolDefinition
  /** Absent on kubernetes, whose take lists the pods itself. */
  listed?: Promise<PoolPod[]>
}

/**
 * The pool of the create's repository set, runtime and image, its pods' listing started; undefined
 * (create cold) when there is none or it cannot serve this create (a note says why).
 */
export async function warmCandidate(
  context: YardContext,
  session: SandboxSession,
  spec: Pick<SandboxSpec, 'runtime' | 'image' | 'repos' | 'portBases'>,
): Promise<WarmCandidate | undefined> {
  const support = session.backend.pool
  if (!support || !support.runtimes.includes(spec.runtime)) return undefined
  const id = poolId(session.workspace.owner, spec.runtime, spec.repos)
  const pool = await readPool(context.env, id)
  if (!pool || pool.owner !== session.workspace.owner || pool.image !== spec.image) return undefined
  // A claimed pod's [ports] are relayed from the host (port-relay.ts), which needs a pod address the host reaches.
  if (Object.keys(spec.portBases).length > 0 && !(await support.relaysPorts(spec.runtime))) {
    context.warn(
      `note: pool ${id} is not used: the sandbox publishes [ports], and rootless podman gives a running pod no address this host can relay them to; creating cold`,
    )
    return undefined
  }

  // A cluster's take lists the pods itself (it patches against each one's resource version).
  if (spec.runtime === 'kubernetes') return {pool}
  const listed = support.pods(poolOwner(pool), spec.runtime)
  // Awaited by takeWarm, or never when the create stops before it: a failed listing is no unhandled rejection.
  listed.catch(() => undefined)
  return {pool, listed}
}

/**
 * A ready pod of the candidate's listing whose fingerprint is the complete `spec`'s, taken for
 * `project` (exclusively, as the runtime's take is). Undefined: create cold; with no ready pod
 * the pool is brought back in the background.
 */
export async function takeWarm(
  context: YardContext,
  session: SandboxSession,
  candidate: WarmCandidate,
  spec: SandboxSpec,
  project: string,
): Promise<{pool: PoolDefinition; pod: string} | undefined> {
  const {pool} = candidate
  let pod: string | undefined
  try {
    const listed = candidate.listed && (await candidate.listed)
    pod = await session.backend.pool!.take(poolOwner(pool), spec.runtime, poolFingerprint(spec), project, listed)
  } catch (error) {
    // A pool that cannot be read is no reason to fail a create that can be made cold.
    context.warn(
      `note: pool ${pool.id} could not be read (${(error as Error).message.split('\n', 1)[0]}); creating cold`,
    )
    return undefined
  }

  if (pod) return {pool, pod}
  // Its pods died or are still starting: this create is cold, and the pool is brought back.
  context.warn(`note: pool ${pool.id} has no ready pod; creating cold`)
  spawnRefill(context, pool)
  return undefined
}
