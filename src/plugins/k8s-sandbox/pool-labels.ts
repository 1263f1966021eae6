/** Labels of warm pool pods (docs/sandboxes.md, "Warm pool"). */

/** The pool a pod belongs to: a pod with it is no sandbox until claimed (claims.ts). */
export const POOL_LABEL = 'yard.dev/pool'

/** The pool spec fingerprint the pod was made from. */
export const POOL_SPEC_LABEL = 'yard.dev/pool-spec'

/** Set by the podman runtime on a claimed pod's RuntimePod (never on a pod): the pool it came from. */
export const WARM_ANNOTATION = 'yard.dev/warm'
