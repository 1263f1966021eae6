import type {V1Pod} from '@kubernetes/client-node'

/**
 * Warm pool pods of the k8s-sandbox backend on the kubernetes runtime (docs/sandboxes.md, "Warm
 * pool"; contract in sdk/sandbox-pool.ts). A pool pod is an ordinary Pod in `[cluster] namespace`
 * (pool-pod.ts), made like a cold sandbox pod (kubernetes-runtime.ts `play`: its Repos, Ready, the
 * node's caches) and prepared through `kubectl exec` with the podman pool's script (pool.ts).
 * Everything about it is on the pod itself, so every machine sees the same pool:
 *
 * - prepared: the label `yard.dev/pool-ready=true`, patched on once the script succeeded;
 * - taken: a merge patch adding `yard.dev/pool-taken=<project>` that carries the resourceVersion
 *   the pod was read at. The API server applies it only to that version (409 Conflict otherwise;
 *   Kubernetes API concepts, "Resource versions"), so of two creates racing for one pod exactly
 *   one gets it and the other goes on to the next pod;
 * - claimed: a JSON patch (RFC 6902) that tests the taken label and replaces the labels and
 *   annotations with exactly those of a cold create (manifest.ts) plus `yard.dev/warm=<pool>`.
 *   The pod keeps its name (no object can be renamed); the runtime finds the sandbox by its
 *   `yard.dev/project` label and lists it under its project.
 */
import type {PoolOwner, PoolPod, SandboxPoolSupport} from '../../sdk/sandbox-pool.js'
import type {SandboxAttachResult, SandboxRecord, SandboxSpec} from '../../sdk/sandbox.js'
import type {Target} from '../../sdk/target.js'
import type {KubernetesRuntime} from './kubernetes-runtime.js'

import {InputError, OperationError} from '../../sdk/errors.js'
import {FETCH_THROUGH_PATH, fetchThroughScript} from '../../sdk/fetch-through.js'
import {abortOn, isConflict, isNotFound, type Kube, kubeCall, kubeError, kubeGet} from './kube.js'
import {isReady} from './kubernetes-pod.js'
import {MANAGED_BY_LABEL, OWNER_LABEL, podManifest} from './manifest.js'
import {POOL_LABEL, POOL_READY_LABEL, POOL_SPEC_LABEL, POOL_TAKEN_LABEL, WARM_ANNOTATION} from './pool-labels.js'
import {claimedRecord, claimedSlots, poolPodManifest, poolPodName, PREPARE_SCRIPT, runClaimScript} from './pool-pod.js'

/** How long listing a pool's pods may take, in ms. */
const LIST_BUDGET_MS = 30_000

/** How often a take reads a free pod again after a 409 that another writer (not a take) caused. */
const TAKE_RETRIES = 2

/** A label key as a JSON pointer token (RFC 6901: `~` → `~0`, `/` → `~1`). */
const pointerToken = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1')

/**
 * A pool pod's phase for the pool: `Terminating` once deleted, `NotReady` when Running without
 * its Ready condition (a container that crashed), else the API's phase; only `Running` is claimable.
 */
function phaseOf(pod: V1Pod): string {
  if (pod.metadata?.deletionTimestamp) return 'Terminating'
  const phase = pod.status?.phase ?? 'Unknown'
  return phase === 'Running' && !isReady(pod) ? 'NotReady' : phase
}

function poolPodOf(pod: V1Pod): PoolPod {
  const labels = pod.metadata?.labels ?? {}
  return {
    name: String(pod.metadata?.name),
    phase: phaseOf(pod),
    ready: labels[POOL_READY_LABEL] === 'true',
    taken: POOL_TAKEN_LABEL in labels,
    fingerprint: labels[POOL_SPEC_LABEL] ?? '',
  }
}

const claimable = (pod: PoolPod, fingerprint: string) =>
  pod.phase === 'Running' && pod.ready && !pod.taken && pod.fingerprint === fingerprint

export class KubePool implements SandboxPoolSupport {
  readonly runtimes = ['kubernetes'] as const

  constructor(private readonly runtime: () => KubernetesRuntime) {}

  /**
   * The kubeconfig, its context and kubectl, as a cold create needs them, and an API server that
   * lists pods. @throws InputError (exit 2) for a missing one; OperationError (exit 1) when the
   * cluster does not answer or refuses.
   */
  async check(runtime: string): Promise<void> {
    requireKubernetes(runtime)
    const kubernetes = this.runtime()
    await kubernetes.check()
    const kube = await kubernetes.api()
    await kubeCall(kube, `list the pool pods in namespace ${kube.namespace}`, async () =>
      kube.core.listNamespacedPod(
        {namespace: kube.namespace, labelSelector: `${MANAGED_BY_LABEL}=yard,${POOL_LABEL}`, limit: 1},
        abortOn(kube, AbortSignal.timeout(LIST_BUDGET_MS)),
      ),
    )
  }

  /** The pool's pods as the API has them (claimed ones carry no pool label any more), by name. */
  private async list(kube: Kube, pool: PoolOwner): Promise<V1Pod[]> {
    const labelSelector = `${MANAGED_BY_LABEL}=yard,${POOL_LABEL}=${pool.id},${OWNER_LABEL}=${pool.owner}`
    const listed = await kubeCall(kube, `list the pods of pool ${pool.id} in namespace ${kube.namespace}`, async () =>
      kube.core.listNamespacedPod(
        {namespace: kube.namespace, labelSelector},
        abortOn(kube, AbortSignal.timeout(LIST_BUDGET_MS)),
      ),
    )
    return listed.items.sort((a, b) => String(a.metadata?.name).localeCompare(String(b.metadata?.name)))
  }

  async pods(pool: PoolOwner, runtime: string): Promise<PoolPod[]> {
    requireKubernetes(runtime)
    return (await this.list(await this.runtime().api(), pool)).map(poolPodOf)
  }

  async fill(
    pool: PoolOwner,
    spec: SandboxSpec,
    fingerprint: string,
    options: {fetchThroughSeconds: number},
  ): Promise<string> {
    requireKubernetes(spec.runtime)
    const runtime = this.runtime()
    const name = poolPodName(pool)
    await runtime.play(poolPodManifest(pool, name, spec, fingerprint))
    try {
      const env = {
        YARD_FT_PATH: FETCH_THROUGH_PATH,
        YARD_FETCH_THROUGH: fetchThroughScript(options.fetchThroughSeconds, "the node's cache agent"),
      }
      const pairs = spec.repos.flatMap((repo) => [repo.slot, repo.key])
      const prepared = await runtime.run(name, ['sh', '-c', PREPARE_SCRIPT, 'sh', ...pairs], {env})
      if (prepared.exitCode !== 0)
        throw new OperationError(`preparing the pool pod ${name} failed (exit ${prepared.exitCode})`, {
          why: prepared.stderr.trim() || undefined,
          fix: "check the image and the nodes' caches (yard cluster status), then run yard sandbox pool set again",
        })
      const kube = await runtime.api()
      await kubeCall(kube, `mark the pool pod ${name} ready in namespace ${kube.namespace}`, async () =>
        kube.core.patchNamespacedPod(
          {name, namespace: kube.namespace, body: {metadata: {labels: {[POOL_READY_LABEL]: 'true'}}}},
          kube.mergePatch,
        ),
      )
      return name
    } catch (error) {
      await runtime.remove(name).catch(() => undefined)
      throw error
    }
  }

  /**
   * Takes a claimable pod (see the module comment): a 409 means the pod changed since it was
   * read — taken by another create, which the fresh read shows, else written by someone else
   * (the kubelet's status), and then it is tried again at its new version.
   */
  async take(pool: PoolOwner, runtime: string, fingerprint: string, project: string): Promise<string | undefined> {
    requireKubernetes(runtime)
    const kube = await this.runtime().api()
    for (const listed of await this.list(kube, pool)) {
      const name = String(listed.metadata?.name)
      let pod: V1Pod | undefined = listed
      for (let attempt = 0; pod && claimable(poolPodOf(pod), fingerprint) && attempt <= TAKE_RETRIES; attempt++) {
        const body = {metadata: {resourceVersion: pod.metadata?.resourceVersion, labels: {[POOL_TAKEN_LABEL]: project}}}
        try {
          await kube.core.patchNamespacedPod({name, namespace: kube.namespace, body}, kube.mergePatch)
          return name
        } catch (error) {
          if (isNotFound(error)) break
          if (!isConflict(error))
            throw kubeError(error, `take the pool pod ${name} in namespace ${kube.namespace}`, kube)
        }

        pod = await kubeGet(kube, `read the pool pod ${name} in namespace ${kube.namespace}`, async () =>
          kube.core.readNamespacedPod({name, namespace: kube.namespace}),
        )
      }
    }

    return undefined
  }

  async untake(pod: string, runtime: string): Promise<void> {
    requireKubernetes(runtime)
    const kube = await this.runtime().api()
    await kubeGet(kube, `give the pool pod ${pod} back in namespace ${kube.namespace}`, async () =>
      kube.core.patchNamespacedPod(
        {name: pod, namespace: kube.namespace, body: {metadata: {labels: {[POOL_TAKEN_LABEL]: null}}}},
        kube.mergePatch,
      ),
    )
  }

  async claim(pod: string, pool: string, target: Target, spec: SandboxSpec): Promise<SandboxRecord> {
    requireKubernetes(spec.runtime)
    const runtime = this.runtime()
    const kube = await runtime.api()
    const {metadata} = podManifest(target, spec) as {
      metadata: {labels: Record<string, string>; annotations: Record<string, string>}
    }
    // The test makes the claim this take's: a pod given back or taken by another create is refused (422).
    const body = [
      {op: 'test', path: `/metadata/labels/${pointerToken(POOL_TAKEN_LABEL)}`, value: target.project},
      {op: 'replace', path: '/metadata/labels', value: metadata.labels},
      {op: 'add', path: '/metadata/annotations', value: {...metadata.annotations, [WARM_ANNOTATION]: pool}},
    ]
    await kubeCall(
      kube,
      `claim the pool pod ${pod} for sandbox ${target.name} in namespace ${kube.namespace}`,
      async () => kube.core.patchNamespacedPod({name: pod, namespace: kube.namespace, body}),
    )
    runtime.adopt(target.project, pod)
    return claimedRecord(target, spec)
  }

  /**
   * As a cold attach on a cluster: the pod's node is asked for a fresh fetch of every cache first
   * (bounded; what it could not fetch comes back as `stale`), then the claim script of pool.ts in
   * one `kubectl exec`: `default/` fetched from the cache, the `.pool` worktree made the branch's.
   */
  async attachClaimed(
    sandbox: SandboxRecord,
    request: {branch: string; gitIdentity: {name?: string; email?: string}},
  ): Promise<SandboxAttachResult> {
    const runtime = this.runtime()
    const stale = await runtime.freshen(sandbox.project, sandbox.spec.repos)
    const directory = await runClaimScript(runtime, sandbox, request)
    const slots = await claimedSlots(runtime, sandbox, directory)
    return {branch: request.branch, slots, ...(Object.keys(stale).length > 0 && {stale})}
  }

  async remove(pod: string, runtime: string): Promise<void> {
    requireKubernetes(runtime)
    await this.runtime().remove(pod)
  }

  /** Always: a cluster publishes no host port, and `yard sandbox forward` reaches a claimed pod as a cold one. */
  relaysPorts(): boolean {
    return true
  }

  /** Nothing to relay on a cluster (see relaysPorts). */
  async relay(): Promise<void> {}

  async awaitRelay(): Promise<void> {}
}

/** @throws InputError (exit 2) for another runtime than kubernetes. */
function requireKubernetes(runtime: string): void {
  if (runtime !== 'kubernetes')
    throw new InputError(`the kubernetes pool was asked about the ${runtime} runtime`, {
      why: 'each runtime keeps its own pool pods (docs/sandboxes.md, "Warm pool")',
      fix: 'use --runtime kubernetes, or the pool of that runtime',
    })
}
