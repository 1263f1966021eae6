/**
 * Waiting on one pod through a watch (Kubernetes docs, "Efficient detection of changes"): from
 * the resourceVersion of a read, a watch of the namespace's pods with the field selector
 * `metadata.name=<name>` and a server-side timeout within the budget. A create sees its pod
 * turn Ready when it happens, with one request instead of one read a second.
 */
import type {V1Pod} from '@kubernetes/client-node'

import type {Kube} from './kube.js'

/**
 * How a wait ended: `changed` (an event made `done` true, or the pod was deleted), `closed` (the
 * watch or the budget ended first: read again), `refused` (403/405: this user may not watch —
 * poll instead), `failed` (another error: read again after a pause).
 */
export type PodWaitOutcome = 'changed' | 'closed' | 'refused' | 'failed'

/**
 * Watches the pod `name` from `resourceVersion` until `done(pod)` holds for an ADDED or MODIFIED
 * event, it is DELETED, the watch ends, or `budgetMs` runs out; never throws.
 */
export async function watchPodUntil(
  kube: Kube,
  name: string,
  resourceVersion: string | undefined,
  done: (pod: V1Pod) => boolean,
  budgetMs: number,
): Promise<PodWaitOutcome> {
  return new Promise((resolve) => {
    let settled = false
    let controller: AbortController | undefined
    const finish = (outcome: PodWaitOutcome) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      controller?.abort()
      resolve(outcome)
    }

    const timer = setTimeout(() => finish('closed'), budgetMs)
    const watch = new kube.lib.Watch(kube.config)
    const query = {
      fieldSelector: `metadata.name=${name}`,
      timeoutSeconds: Math.max(1, Math.ceil(budgetMs / 1000)),
      ...(resourceVersion && {resourceVersion}),
    }
    watch
      .watch(
        `/api/v1/namespaces/${encodeURIComponent(kube.namespace)}/pods`,
        query,
        (type: string, object: V1Pod) => {
          if (type === 'DELETED' || ((type === 'ADDED' || type === 'MODIFIED') && done(object))) finish('changed')
          // 410 Gone and other ERROR events end the stream; the caller reads again.
          if (type === 'ERROR') finish('closed')
        },
        (error: unknown) => {
          const code = (error as {statusCode?: number} | null)?.statusCode
          finish(error ? (code === 403 || code === 405 ? 'refused' : 'failed') : 'closed')
        },
      )
      .then(
        (made) => {
          controller = made
          if (settled) made.abort()
        },
        () => finish('failed'),
      )
  })
}
