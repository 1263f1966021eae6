import type {V1Pod} from '@kubernetes/client-node'

/**
 * The `kubernetes` runtime (DESIGN.md §5.2, "Runtimes"): the sandbox Pod through
 * `@kubernetes/client-node` (loaded on first use through kube.ts) in `[cluster] namespace` of
 * `[cluster] context`, with a `Repo` per cache key for the cache agents; terminals, in-pod
 * commands, copies and port-forwards through `kubectl` (argv in kubectl.ts).
 *
 * `play`: upsert the Repos → create the Pod with a soft affinity toward nodes holding the caches
 * → wait for Ready (budget `[cluster] ready-timeout-seconds`) → wait until the pod's node reports
 * every cache present (budget `[cluster] cache-timeout-seconds`; the agent's `lastError` fails
 * at once). Any failure deletes the Pod and the Repos this call created that no other pod
 * mounts; so does `remove` of a pod this object played (core undoing a create whose attach
 * failed), so a failed create leaves nothing behind.
 *
 * A sandbox claimed from a warm pool (kube-pool.ts) is a pool pod relabelled: it keeps the pool
 * pod's name, so every call for a project first finds its pod — the pod of that name, else the
 * one labelled `yard.dev/project=<project>` — and remembers it; listings show it under its project.
 */
import {promises as fs, constants as fsConstants} from 'node:fs'
import path from 'node:path'

import type {CacheNodeStatus} from '../../sdk/cache.js'
import type {SandboxRepo} from '../../sdk/sandbox.js'
import type {BackendContext, ClusterSettings} from '../../sdk/target.js'
import type {RuntimePod, SandboxRuntime} from './runtime.js'

import {InputError, OperationError} from '../../sdk/errors.js'
import {PROJECT_LABEL} from '../../sdk/labels.js'
import {formatDuration, type RunResult} from '../../sdk/process.js'
import {withClusterAsks} from './cluster-asks.js'
import {abortOn, isNotFound, type Kube, kubeCall, kubeError, kubeGet, openKube} from './kube.js'
import {copyOutArgv, execArgv, type KubectlTarget, type PortForward, portForwardArgv} from './kubectl.js'
import {describePodState, isReady, recentEvents, runtimePodOf, specOf, withCacheAffinity} from './kubernetes-pod.js'
import {askForFetch, dropUnusedRepos, repoNodeStates, upsertRepos, waitForCaches} from './kubernetes-repos.js'
import {MANAGED_BY_LABEL, PREFIX_LABEL} from './manifest.js'
import {watchPodUntil} from './pod-watch.js'
import {POOL_LABEL} from './pool-labels.js'

/** How often a waiting create asks again, in ms (a tenth of a short budget). */
const pollEvery = (budgetMs: number) => Math.max(100, Math.min(1000, Math.floor(budgetMs / 10)))
/** How long a failed create waits for the pod's events to explain it, in ms. */
const EVENTS_BUDGET_MS = 5000

export class KubernetesRuntime implements SandboxRuntime {
  readonly id = 'kubernetes'
  private connection?: Promise<Kube>
  private kubectlChecked = false
  /** Per pod a `play` of this object made: the Repos it created, for `remove` to undo. */
  private readonly reposMade = new Map<string, {keys: string[]; cacheRoot: string}>()
  /** Per project, the name of the pod that holds it (podOf). */
  private readonly podNames = new Map<string, string>()

  constructor(
    private readonly context: BackendContext,
    private readonly settings: ClusterSettings,
  ) {}

  /** The API clients, connected once (client-node is loaded here, on first use). */
  private async kube(): Promise<Kube> {
    this.connection ??= openKube(
      {context: this.settings.context, namespace: this.settings.namespace, otherwise: 'use --runtime podman'},
      this.context.env,
    )
    return this.connection
  }

  /** The API clients for kube-pool.ts, which makes, takes and claims pool pods through them. */
  async api(): Promise<Kube> {
    return this.kube()
  }

  /**
   * Checks what a pod of this runtime needs before anything is made: the kubeconfig and its
   * context, and kubectl. @throws InputError (exit 2) when one is missing.
   */
  async check(): Promise<void> {
    await this.kubectlTarget()
  }

  /** From now on, project `project` is the claimed pool pod `pod` (kube-pool.ts). */
  adopt(project: string, pod: string): void {
    this.podNames.set(project, pod)
  }

  /**
   * The name of the pod that holds sandbox `project` (see the module comment): remembered, else
   * the pod labelled with the project (one list), else `project` itself.
   */
  private async podOf(project: string): Promise<string> {
    const known = this.podNames.get(project)
    if (known) return known
    const pod = await this.labelledPod(project)
    const name = pod?.metadata?.name ?? project
    if (pod) this.podNames.set(project, name)
    return name
  }

  /** The sandbox pod labelled `yard.dev/project=<project>` (a cold one, or a claimed pool pod), or undefined. */
  private async labelledPod(project: string): Promise<V1Pod | undefined> {
    const kube = await this.kube()
    const labelSelector = `${MANAGED_BY_LABEL}=yard,${PROJECT_LABEL}=${project}`
    const pods = await kubeCall(kube, `list the pods of sandbox ${project} in namespace ${kube.namespace}`, async () =>
      kube.core.listNamespacedPod({namespace: kube.namespace, labelSelector}),
    )
    return pods.items[0]
  }

  /** Context and namespace for kubectl: the context the API clients resolved, so both agree. */
  private async kubectlTarget(): Promise<KubectlTarget> {
    const kube = await this.kube()
    await this.requireKubectl()
    return {context: kube.context, namespace: kube.namespace}
  }

  /** @throws InputError (exit 2) when kubectl is on no PATH entry (checked once). */
  private async requireKubectl(): Promise<void> {
    if (this.kubectlChecked) return
    await requireOnPath('kubectl', this.context.env.PATH ?? '')
    this.kubectlChecked = true
  }

  async list(prefix: string, timeoutMs: number): Promise<RuntimePod[]> {
    // The budget is the cluster's to answer: loading client-node (about 1 s) and the kubeconfig comes first.
    const kube = await this.kube()
    const labelSelector = `${MANAGED_BY_LABEL}=yard,${PREFIX_LABEL}=${prefix}`
    const pods = await withinBudget(timeoutMs, `listing the sandbox pods of ${prefix}`, async (signal) =>
      kubeCall(kube, `list the sandbox pods of ${prefix} in namespace ${kube.namespace}`, async () =>
        kube.core.listNamespacedPod({namespace: kube.namespace, labelSelector}, abortOn(kube, signal)),
      ),
    )
    // An unclaimed pool pod is no sandbox; a claimed one is listed under its project (runtimePodOf).
    const sandboxes = pods.items.filter((pod) => !(POOL_LABEL in (pod.metadata?.labels ?? {})))
    return sandboxes.map((pod) => {
      const listed = runtimePodOf(pod)
      this.podNames.set(listed.name, String(pod.metadata?.name))
      return listed
    })
  }

  async get(name: string): Promise<RuntimePod | undefined> {
    const pod = (await this.readPod(name)) ?? (await this.labelledPod(name))
    if (!pod) return undefined
    this.podNames.set(name, String(pod.metadata?.name))
    return runtimePodOf(pod)
  }

  /** The Pod, or undefined; with `signal`, the request is aborted when it fires. */
  private async readPod(name: string, signal?: AbortSignal): Promise<V1Pod | undefined> {
    const kube = await this.kube()
    return kubeGet(kube, `read the pod ${name} in namespace ${kube.namespace}`, async () =>
      kube.core.readNamespacedPod({name, namespace: kube.namespace}, signal && abortOn(kube, signal)),
    )
  }

  /**
   * Asks the node the pod runs on for a fresh fetch of each cache and waits for its answer,
   * within `[cluster] cache-timeout-seconds` (kubernetes-repos.ts askForFetch).
   * @returns per slot whose cache stays stale, why and since when.
   * @throws OperationError (exit 1) when the pod is gone or the API refuses.
   */
  async freshen(name: string, repos: SandboxRepo[]): Promise<Record<string, string>> {
    const kube = await this.kube()
    const pod = await this.readPod(await this.podOf(name))
    const node = pod?.spec?.nodeName
    if (!node)
      throw new OperationError(`the sandbox pod ${name} runs on no node`, {
        why: pod ? `it is ${pod.status?.phase ?? 'in an unknown phase'} and not scheduled` : 'it is gone',
        fix: 'yard sandbox list shows its phase; remove it (yard sandbox rm) and create it again',
      })
    return askForFetch(kube, {
      node,
      repos,
      budgetMs: this.settings.cacheTimeoutMs,
      pollMs: pollEvery(this.settings.cacheTimeoutMs),
      refreshInterval: this.settings.refreshInterval,
    })
  }

  /** Per cache key, each node's state of the cache from its Repo's status (kubernetes-repos.ts). */
  async cacheStates(keys: string[]): Promise<Record<string, Record<string, CacheNodeStatus>>> {
    return repoNodeStates(await this.kube(), keys)
  }

  /**
   * Declares the Repos, creates the Pod and waits for it and its caches (see the module comment).
   * The kubeconfig, its context and kubectl (which attach needs next) are checked first.
   * @throws InputError (exit 2) before anything is made when one of them is missing.
   * @throws OperationError (exit 1) when the cluster refuses or a wait runs out; what this call
   *   made is deleted again.
   */
  async play(manifest: Record<string, unknown>): Promise<void> {
    const kube = await this.kube()
    await this.requireKubectl()
    const {name} = manifest.metadata as {name: string}
    const spec = specOf(manifest)
    const made = {pod: false, repos: [] as string[]}
    try {
      const presentNodes = await upsertRepos(kube, spec.repos, made.repos, this.settings.refreshInterval)
      // Fetch-through: the pod's asks directories on its node (cluster-asks.ts).
      const body = withCacheAffinity(
        withClusterAsks(
          manifest,
          spec.cacheRoot,
          spec.repos.map((repo) => repo.key),
        ),
        presentNodes,
      ) as V1Pod
      await kubeCall(kube, `create the pod ${name} in namespace ${kube.namespace}`, async () =>
        kube.core.createNamespacedPod({namespace: kube.namespace, body}),
      )
      made.pod = true
      this.podNames.set(name, name)
      const pod = await this.waitReady(kube, name)
      await waitForCaches(kube, {
        pod: name,
        node: pod.spec?.nodeName ?? '',
        repos: spec.repos,
        budgetMs: this.settings.cacheTimeoutMs,
        pollMs: pollEvery(this.settings.cacheTimeoutMs),
      })
      this.reposMade.set(name, {keys: made.repos, cacheRoot: spec.cacheRoot})
    } catch (error) {
      if (made.pod) await this.remove(name).catch(() => undefined)
      await dropUnusedRepos(kube, made.repos, {except: name, cacheRoot: spec.cacheRoot}).catch(() => undefined)
      throw error
    }
  }

  /**
   * Waits until the Pod's Ready condition is True: a read, then a watch from its resourceVersion
   * (pod-watch.ts) until it changes that way, read again to decide. A user who may not watch pods
   * (403) is served by polling, a read a second at most.
   * @throws OperationError (exit 1) when the budget runs out or the pod ends, with its
   *   conditions, container states and recent events.
   */
  private async waitReady(kube: Kube, name: string): Promise<V1Pod> {
    const budgetMs = this.settings.readyTimeoutMs
    const deadline = Date.now() + budgetMs
    let pod: V1Pod | undefined
    let watchable = true
    const settled = (next: V1Pod) =>
      isReady(next) || next.status?.phase === 'Failed' || next.status?.phase === 'Succeeded'
    for (;;) {
      // A read that hangs is cut at the deadline (at least one poll's worth), never left pending.
      pod = await this.readPod(name, AbortSignal.timeout(Math.max(pollEvery(budgetMs), deadline - Date.now())))
      if (pod && isReady(pod)) return pod
      const ended = pod?.status?.phase === 'Failed' || pod?.status?.phase === 'Succeeded'
      if (ended || Date.now() >= deadline) {
        const events = await kube.core
          .listNamespacedEvent(
            {namespace: kube.namespace, fieldSelector: `involvedObject.name=${name}`},
            abortOn(kube, AbortSignal.timeout(EVENTS_BUDGET_MS)),
          )
          .then((list) => recentEvents(list.items))
          .catch(() => [])
        throw new OperationError(
          ended
            ? `the sandbox pod ${name} ended (${pod!.status!.phase}) before it became Ready`
            : `the sandbox pod ${name} did not become Ready within ${formatDuration(budgetMs)}`,
          {
            why: describePodState(pod, events),
            fix: `the pod was deleted; check that the nodes can pull or have the image and that namespace ${kube.namespace} has room (kubectl describe pod shows the same), raise [cluster] ready-timeout-seconds for slow nodes, then run yard sandbox create again`,
          },
        )
      }

      const left = Math.max(0, deadline - Date.now())
      // No pod to watch from (not found yet): a poll's pause, then read again.
      const outcome =
        watchable && pod ? await watchPodUntil(kube, name, pod.metadata?.resourceVersion, settled, left) : 'failed'
      if (outcome === 'refused') watchable = false
      if (outcome !== 'changed' && outcome !== 'closed')
        await sleep(Math.min(pollEvery(budgetMs), Math.max(0, deadline - Date.now())))
    }
  }

  /**
   * Deletes the Pod. When this object's `play` made it (a create undone because attach failed),
   * the Repos that play created go too, unless another pod mounts them: a failed create leaves
   * nothing behind. Otherwise Repos stay (`yard sandbox rm`: they are shared declarations).
   * @throws OperationError (exit 1) when the API refuses the delete.
   */
  async remove(project: string): Promise<void> {
    const kube = await this.kube()
    const name = await this.podOf(project)
    this.podNames.delete(project)
    try {
      // One second: `sleep infinity` as PID 1 ignores SIGTERM, and /work goes with the pod anyway.
      // Not 0, which the API server treats as a forced delete (the object gone before the kubelet
      // has stopped the containers; Kubernetes docs, "Pod termination").
      await kube.core.deleteNamespacedPod({name, namespace: kube.namespace, gracePeriodSeconds: 1})
    } catch (error) {
      if (!isNotFound(error)) throw kubeError(error, `delete the pod ${name} in namespace ${kube.namespace}`, kube)
    }

    const made = this.reposMade.get(name)
    if (made) {
      this.reposMade.delete(name)
      await dropUnusedRepos(kube, made.keys, {except: name, cacheRoot: made.cacheRoot})
    }
  }

  async run(
    name: string,
    argv: string[],
    options: {workdir?: string; env?: Record<string, string>} = {},
  ): Promise<RunResult> {
    return this.context.runner.run(
      'kubectl',
      execArgv(await this.kubectlTarget(), await this.podOf(name), argv, options),
      {
        allowFailure: true,
      },
    )
  }

  async exec(name: string, argv: string[], options: {workdir: string; tty: boolean}): Promise<number> {
    const args = execArgv(await this.kubectlTarget(), await this.podOf(name), argv, {
      workdir: options.workdir,
      stdin: true,
      tty: options.tty,
    })
    return (await this.context.runner.run('kubectl', args, {stdio: 'inherit', allowFailure: true})).exitCode
  }

  async copyOut(name: string, podPath: string, hostPath: string): Promise<void> {
    await this.context.runner.run(
      'kubectl',
      copyOutArgv(await this.kubectlTarget(), await this.podOf(name), podPath, hostPath),
    )
  }

  /** `kubectl port-forward` of every pair (DESIGN.md §5.2): the argv, without running it. */
  async forwardArgv(name: string, forwards: PortForward[]): Promise<string[]> {
    return ['kubectl', ...portForwardArgv(await this.kubectlTarget(), await this.podOf(name), forwards)]
  }

  /** Runs the port-forward on this terminal until it ends (Ctrl-C); resolves with kubectl's exit code. */
  async forward(name: string, forwards: PortForward[]): Promise<number> {
    const [file, ...args] = await this.forwardArgv(name, forwards)
    return (await this.context.runner.run(file, args, {stdio: 'inherit', allowFailure: true})).exitCode
  }
}

/**
 * Runs `work` within `budgetMs`; when the budget runs out, `signal` (to pass to every request
 * through `abortOn`) aborts what is still pending, so no connection outlives the budget.
 * @throws OperationError (exit 1) naming what did not answer in time (DESIGN.md §3.4: an
 *   unreachable cluster is left out of listings after 2 s).
 */
async function withinBudget<T>(budgetMs: number, doing: string, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController()
  let timer: NodeJS.Timeout | undefined
  const budget = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(
        new OperationError(`the cluster did not answer within ${formatDuration(budgetMs)} while ${doing}`, {
          fix: 'check [cluster] context (kubectl cluster-info) and the network',
        }),
      )
      controller.abort()
    }, budgetMs)
  })
  try {
    return await Promise.race([work(controller.signal), budget])
  } finally {
    clearTimeout(timer)
  }
}

/** @throws InputError (exit 2) when `file` is on no PATH entry as an executable. */
async function requireOnPath(file: string, searchPath: string): Promise<void> {
  for (const dir of searchPath.split(path.delimiter).filter(Boolean)) {
    if (
      await fs.access(path.join(dir, file), fsConstants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return
  }

  throw new InputError(`${file} is not installed or not on PATH`, {
    why: 'the kubernetes runtime runs in-pod commands, terminals and port-forwards through kubectl (TTY size, resize, auth plugins)',
    fix: 'install kubectl (https://kubernetes.io/docs/tasks/tools/) and check kubectl --context CONTEXT get pods works',
  })
}

const sleep = async (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
