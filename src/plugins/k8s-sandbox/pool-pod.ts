/**
 * The Pod of a warm pool (docs/sandboxes.md, "Warm pool"), the same for every runtime: the sandbox
 * Pod of manifest.ts without a name, offset or published port, labelled with its pool instead of
 * an identity.
 */
import {randomBytes} from 'node:crypto'

import type {PoolOwner} from '../../sdk/sandbox-pool.js'
import type {SandboxSpec} from '../../sdk/sandbox.js'
import type {Target} from '../../sdk/target.js'

import {MANAGED_BY_LABEL, OWNER_LABEL, podManifest, PREFIX_LABEL} from './manifest.js'
import {POOL_LABEL, POOL_SPEC_LABEL} from './pool-labels.js'

/**
 * A new pool pod's name: `<prefix>.pool-<pool id>-<6 hex>`, a `.` no sandbox name can hold, so it
 * never clashes with a project name (and it is a DNS subdomain, as a Kubernetes Pod name must be).
 */
export const poolPodName = (pool: PoolOwner): string =>
  `${pool.prefix}.pool-${pool.id}-${randomBytes(3).toString('hex')}`

/**
 * The pool pod `name` of `pool` made from `spec` (its branch empty): every cache mounted
 * read-only, no port, labelled managed-by, prefix, owner, pool and the spec's fingerprint.
 */
export function poolPodManifest(
  pool: PoolOwner,
  name: string,
  spec: SandboxSpec,
  fingerprint: string,
): Record<string, unknown> {
  const manifest = podManifest(
    {project: name, name, owner: pool.owner, offset: 0, prefix: pool.prefix, ports: {}} as unknown as Target,
    {...spec, portBases: {}},
  )
  const metadata = manifest.metadata as {labels: Record<string, string>}
  metadata.labels = {
    [MANAGED_BY_LABEL]: 'yard',
    [PREFIX_LABEL]: pool.prefix,
    [OWNER_LABEL]: pool.owner,
    [POOL_LABEL]: pool.id,
    [POOL_SPEC_LABEL]: fingerprint,
  }
  return manifest
}
