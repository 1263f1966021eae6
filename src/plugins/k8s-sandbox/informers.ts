/**
 * Informers: client-node's ListWatch (list, then watch from the list's resourceVersion; on a
 * `410 Gone` it lists again) with what a long-running watcher also needs (Kubernetes docs,
 * "Efficient detection of changes"):
 * - a server-side `timeoutSeconds` drawn per watch from a range (default 300–600 s), so that the
 *   watches of many nodes do not end and reconnect together, and `allowWatchBookmarks`, so that a
 *   quiet watch resumes from a recent resourceVersion instead of relisting;
 * - client-node's own cut of a watch silent for 30 s moved past the server's timeout: an idle
 *   watch would otherwise reconnect twice a minute;
 * - a failed list or watch (the API server restarting, a network cut) retried with exponential
 *   backoff (1 s doubling to 30 s, ±20 % jitter) from the last resourceVersion; ListWatch itself
 *   gives up on such an error.
 */
import type {KubernetesObject, ListPromise, Watch} from '@kubernetes/client-node'

import type {Kube} from './kube.js'

/**
 * How long watches last; `timeScale` > 1 runs every timer that much faster (benches against a fake
 * server with the same scale).
 */
export interface WatchTiming {
  /** The range each watch's `timeoutSeconds` is drawn from. */
  timeoutSeconds: readonly [number, number]
  timeScale?: number
}

export const DEFAULT_WATCH_TIMING: WatchTiming = {timeoutSeconds: [300, 600]}

const RETRY_BASE_MS = 1000
const RETRY_MAX_MS = 30_000

export interface Informer<T> {
  /** The objects seen so far (the watch's cache). */
  list(): readonly T[]
  /** Resolves once the first list is in and the watch is open. */
  readonly synced: Promise<void>
}

export interface InformerOptions<T extends KubernetesObject> {
  /** The collection's API path, e.g. `/api/v1/namespaces/NS/pods`. */
  path: string
  list: ListPromise<T>
  fieldSelector?: string
  signal: AbortSignal
  onChange: () => void
  /** The first failure of an outage (the retries after it are silent until one succeeds). */
  onError: (error: unknown) => void
  timing?: WatchTiming
}

/** Starts an informer on `options.path` until `options.signal` aborts (see the module comment). */
export function startInformer<T extends KubernetesObject>(kube: Kube, options: InformerOptions<T>): Informer<T> {
  const {signal, timing = DEFAULT_WATCH_TIMING} = options
  const scale = timing.timeScale ?? 1
  const [shortest, longest] = timing.timeoutSeconds
  const inner = new kube.lib.Watch(kube.config)
  // A private field of client-node 2.0.1 (watch.js): its inactivity cut, 30 s by default.
  ;(inner as unknown as {requestTimeoutMs: number}).requestTimeoutMs = ((longest + 60) * 1000) / scale
  const watch = {
    watch: async (
      path: string,
      query: Record<string, string | number | boolean | undefined>,
      callback: Parameters<Watch['watch']>[2],
      done: Parameters<Watch['watch']>[3],
    ) =>
      inner.watch(
        path,
        {
          ...query,
          allowWatchBookmarks: true,
          timeoutSeconds: Math.round(shortest + Math.random() * (longest - shortest)),
        },
        callback,
        done,
      ),
  } as unknown as Watch
  const delay = async (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms / scale))
  const informer = new kube.lib.ListWatch<T>(
    options.path,
    watch,
    options.list,
    false,
    undefined,
    options.fieldSelector,
    {delayFn: delay},
  )

  let resolveSynced!: () => void
  const synced = new Promise<void>((resolve) => (resolveSynced = resolve))
  let failures = 0
  let retry: NodeJS.Timeout | undefined
  let failedDuring = false
  const start = async () => {
    failedDuring = false
    await informer.start()
    if (!failedDuring && informer.latestResourceVersion() !== '') {
      // Back after a failure: a change to look at (the watcher re-reads, and knows it recovered).
      if (failures > 0) options.onChange()
      failures = 0
      resolveSynced()
    }
  }

  for (const verb of ['add', 'update', 'delete'] as const) informer.on(verb, () => options.onChange())
  informer.on('error', (error) => {
    failedDuring = true
    if (signal.aborted) return
    // Once per outage: the retries that follow say nothing until one succeeds.
    if (failures === 0) options.onError(error)
    const wait = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** failures) * (0.8 + 0.4 * Math.random())
    failures++
    clearTimeout(retry)
    retry = setTimeout(() => void start().catch(options.onError), wait / scale)
  })
  signal.addEventListener(
    'abort',
    () => {
      clearTimeout(retry)
      void informer.stop()
      resolveSynced()
    },
    {once: true},
  )
  void start().catch(options.onError)
  return {list: () => informer.list(), synced}
}
