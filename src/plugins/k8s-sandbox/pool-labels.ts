/** Labels of warm pool pods (docs/sandboxes.md, "Warm pool"). */

/** The pool a pod belongs to: a pod with it is no sandbox until claimed (claims.ts). */
export const POOL_LABEL = 'yard.dev/pool'

/** The pool spec fingerprint the pod was made from. */
export const POOL_SPEC_LABEL = 'yard.dev/pool-spec'

/**
 * The pool it came from, on a claimed sandbox: on podman set by the runtime on the RuntimePod
 * (podman cannot relabel a pod: claims.ts); on kubernetes an annotation of the pod itself.
 */
export const WARM_ANNOTATION = 'yard.dev/warm'

/** On kubernetes: `"true"` once the pool pod is prepared (kube-pool.ts), so any machine sees it is claimable. */
export const POOL_READY_LABEL = 'yard.dev/pool-ready'

/** On kubernetes: the project that took the pool pod and is claiming it (kube-pool.ts). */
export const POOL_TAKEN_LABEL = 'yard.dev/pool-taken'
