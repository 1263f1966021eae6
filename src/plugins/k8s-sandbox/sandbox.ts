import type {CacheBorrower, CacheDemand, CacheNodeStatus} from '../../sdk/cache.js'
import type {
  SandboxAttachResult,
  SandboxBackend,
  SandboxRecord,
  SandboxSaved,
  SandboxSpec,
  SandboxSummary,
  SandboxUnsaved,
  SandboxWorktree,
} from '../../sdk/sandbox.js'
// client-node itself loads only when the kubernetes runtime first talks to a cluster (kube.ts).
import type {SandboxPortForward} from '../../sdk/sandbox.js'
/**
 * The k8s-sandbox backend (DESIGN.md §5.2): sandboxes as Pods on a runtime. The Pod manifest,
 * attach, unsaved-work checks and exec are the same for every runtime; only `SandboxRuntime`
 * differs: `podman` (podman-runtime.ts) or `kubernetes` (kubernetes-runtime.ts, which loads
 * client-node only when it first talks to a cluster).
 */
import type {BackendContext, Target} from '../../sdk/target.js'
import type {RuntimePod, SandboxRuntime} from './runtime.js'

import {InputError, RefusedError} from '../../sdk/errors.js'
import {checkBranchDirectory} from '../../sdk/sandbox-repos.js'
import {KubernetesRuntime} from './kubernetes-runtime.js'
import {NAME_LABEL, OFFSET_LABEL, OWNER_LABEL, podManifest, SPEC_ANNOTATION} from './manifest.js'
import {PodmanRuntime} from './podman-runtime.js'
import {WARM_ANNOTATION} from './pool-labels.js'
import {RuntimePools} from './pools.js'

export const K8S_SANDBOX_ID = 'k8s-sandbox'

/** The runtimes this backend knows; only those with a factory here can run pods. */
export const SANDBOX_RUNTIMES = ['podman', 'kubernetes'] as const

export class K8sSandbox implements SandboxBackend {
  readonly kind = 'sandbox' as const
  readonly id = K8S_SANDBOX_ID
  readonly runtimes = SANDBOX_RUNTIMES

  private readonly made = new Map<string, SandboxRuntime>()

  /**
   * Warm pools: pool.ts on podman, kube-pool.ts on kubernetes. The code of a runtime's pools, of
   * attach and of the unsaved-work checks is loaded by the verbs that use it: `yard exec` loads
   * none of it.
   */
  readonly pool: RuntimePools

  constructor(private readonly context: BackendContext) {
    this.pool = new RuntimePools({
      podman: async () =>
        new (await import('./pool.js')).PodmanPool(context, () => this.runtime('podman') as PodmanRuntime),
      kubernetes: async () =>
        new (await import('./kube-pool.js')).KubePool(() => this.runtime('kubernetes') as KubernetesRuntime),
    })
  }

  /**
   * The runtime of that id, made once per backend: `podman`, or `kubernetes` with the `[cluster]`
   * settings core hands over (BackendContext.cluster).
   * @throws InputError (exit 2) for an unknown runtime, or `kubernetes` without those settings.
   */
  runtime(id: string): SandboxRuntime {
    const known = this.made.get(id)
    if (known) return known
    let runtime: SandboxRuntime
    if (id === 'podman') {
      runtime = new PodmanRuntime(this.context)
    } else if (id === 'kubernetes' && this.context.cluster) {
      runtime = new KubernetesRuntime(this.context, this.context.cluster)
    } else {
      throw new InputError(
        id === 'kubernetes'
          ? 'the kubernetes runtime was given no [cluster] settings'
          : `unknown sandbox runtime "${id}"`,
        {
          why:
            id === 'kubernetes'
              ? 'whoever created the k8s-sandbox backend left BackendContext.cluster out (yard sets it for every sandbox command)'
              : `the runtimes are ${SANDBOX_RUNTIMES.join(', ')}`,
          fix:
            id === 'kubernetes'
              ? 'run the sandbox commands through yard'
              : 'use --runtime podman or --runtime kubernetes',
        },
      )
    }

    this.made.set(id, runtime)
    return runtime
  }

  async list(prefix: string, options: {timeoutMs: number; runtime?: string}): Promise<SandboxSummary[]> {
    const runtime = this.runtime(options.runtime ?? 'podman')
    return (await runtime.list(prefix, options.timeoutMs)).map((pod) => summaryOf(pod, runtime.id))
  }

  async forward(
    sandbox: SandboxRecord,
    forwards: SandboxPortForward[],
    options: {dryRun: boolean},
  ): Promise<{argv: string[]; exitCode: number | null} | null> {
    return forwardPorts(this.runtime(sandbox.runtime), sandbox.project, forwards, options)
  }

  manifest(target: Target, spec: SandboxSpec): Record<string, unknown> {
    return podManifest(target, spec)
  }

  async get(target: Target, runtimeId: string): Promise<SandboxRecord | undefined> {
    const pod = await this.runtime(runtimeId).get(target.project)
    return pod && this.recordOf(pod, target, runtimeId)
  }

  /** On podman, the record play() or a claim kept (no engine call); undefined elsewhere. */
  async recorded(target: Target, runtimeId: string): Promise<SandboxRecord | undefined> {
    const runtime = this.runtime(runtimeId)
    const pod = runtime instanceof PodmanRuntime ? await runtime.recorded(target.project) : undefined
    return pod && this.recordOf(pod, target, runtimeId)
  }

  private recordOf(pod: RuntimePod, target: Target, runtimeId: string): SandboxRecord {
    if (pod.labels[OWNER_LABEL] !== target.owner) {
      throw new RefusedError(
        `the pod ${pod.name} belongs to another checkout (owner ${pod.labels[OWNER_LABEL] ?? 'none: made outside yard'})`,
        {
          why: `this checkout (${target.mainPath}) is owner ${target.owner}; project names clash when two clones share a prefix`,
          fix: `set a distinct [project] prefix in ${target.mainPath}/yard.toml (or YARD_PREFIX)`,
        },
      )
    }

    const spec = JSON.parse(pod.annotations[SPEC_ANNOTATION] ?? 'null') as SandboxSpec | null
    if (spec === null)
      throw new RefusedError(`the pod ${pod.name} has no ${SPEC_ANNOTATION} annotation`, {
        why: 'yard did not make it, or an older yard did',
        fix: `remove it yourself (podman pod rm ${pod.name}) if it is yours`,
      })
    return {...summaryOf(pod, runtimeId), owner: target.owner, spec}
  }

  async create(target: Target, spec: SandboxSpec): Promise<void> {
    await this.runtime(spec.runtime).play(podManifest(target, spec))
  }

  /**
   * On a cluster, the pod's node is asked for a fresh fetch of every cache first (bounded; what it
   * could not fetch comes back as `stale`); then attach inside the pod, whose `default/` fetches
   * from the cache. On podman core fetched the local caches already.
   */
  async attach(
    sandbox: SandboxRecord,
    request: {branch: string; gitIdentity: {name?: string; email?: string}; fetchThroughSeconds?: number},
  ): Promise<SandboxAttachResult> {
    const runtime = this.runtime(sandbox.runtime)
    const stale = runtime instanceof KubernetesRuntime ? await runtime.freshen(sandbox.project, sandbox.spec.repos) : {}
    const {attachInPod} = await import('./attach.js')
    const attached = await attachInPod(runtime, sandbox.project, sandbox.spec, {...request, sandbox: sandbox.name})
    return Object.keys(stale).length > 0 ? {...attached, stale} : attached
  }

  async worktrees(sandbox: SandboxRecord): Promise<SandboxWorktree[]> {
    return (await import('./unsaved.js')).podWorktrees(this.runtime(sandbox.runtime), sandbox.project, sandbox.spec)
  }

  async bundleBranch(
    sandbox: SandboxRecord,
    place: {slot: string; directory: string},
    file: string,
  ): Promise<{branch: string; commit: string}> {
    return (await import('./save.js')).bundleBranch(this.runtime(sandbox.runtime), sandbox, place, file)
  }

  async markPulled(
    sandbox: SandboxRecord,
    place: {slot: string; directory: string},
    branch: string,
    commit: string | null,
  ): Promise<void> {
    return (await import('./save.js')).markPulled(this.runtime(sandbox.runtime), sandbox, place, branch, commit)
  }

  async unsaved(sandbox: SandboxRecord): Promise<SandboxUnsaved> {
    return (await import('./unsaved.js')).podUnsaved(this.runtime(sandbox.runtime), sandbox.project, sandbox.spec)
  }

  async save(sandbox: SandboxRecord, work: SandboxUnsaved, dir: string): Promise<SandboxSaved> {
    return (await import('./save.js')).saveUnsaved(
      this.runtime(sandbox.runtime),
      sandbox.project,
      sandbox.spec,
      work,
      dir,
    )
  }

  async remove(sandbox: SandboxRecord): Promise<void> {
    return this.runtime(sandbox.runtime).remove(sandbox.project)
  }

  /**
   * On podman, a sandbox `get` found no workspace container of: its pod when that is left (and
   * carries the owner yard recorded), its kept annotations and work volume. On a cluster nothing
   * of a pod stays on this machine (and Repos stay by design), and where podman cannot tell
   * whether the pod exists: undefined.
   */
  async clearLost(
    project: string,
    runtimeId: string,
    options: {dryRun: boolean; owner?: string},
  ): Promise<string[] | undefined> {
    const runtime = this.runtime(runtimeId)
    if (!(runtime instanceof PodmanRuntime) || (await runtime.exists(project)) === undefined) return undefined
    return runtime.leftovers(project, options)
  }

  /**
   * A `sandbox <project>` lease is provably gone once podman says its pod does not exist (only
   * podman sandboxes take local leases).
   */
  async borrowerGone(borrower: CacheBorrower): Promise<string | undefined> {
    if (borrower.kind !== 'sandbox') return undefined
    const runtime = this.runtime('podman') as PodmanRuntime
    return (await runtime.exists(borrower.name)) === false
      ? `its sandbox pod ${borrower.name} no longer exists (podman pod exists)`
      : undefined
  }

  async exec(
    sandbox: SandboxRecord,
    place: {slot: string; directory: string},
    argv: string[],
    options: {tty: boolean; gone?: () => Error},
  ): Promise<number> {
    const runtime = this.runtime(sandbox.runtime)
    // One path component: a directory such as ".." would leave the slot (core checks it too).
    const workdir = `/work/${place.slot}/${checkBranchDirectory(place.directory)}`
    const missingWorkdir = () =>
      new InputError(`the sandbox ${sandbox.name} has no ${workdir}`, {
        why: 'yard exec NAME/BRANCH runs in the branch worktree /work/<slot>/<branch with "/" → "-">',
        fix: `attach the branch first (yard sandbox attach ${sandbox.name} --branch BRANCH), or name one yard sandbox list shows`,
      })
    // podman's exec says itself when the directory is missing; kubectl's does not, so it is asked first.
    if (runtime instanceof PodmanRuntime)
      return runtime.exec(sandbox.project, argv, {workdir, tty: options.tty, missingWorkdir, gone: options.gone})
    if ((await runtime.run(sandbox.project, ['test', '-d', workdir])).exitCode !== 0) throw missingWorkdir()
    return runtime.exec(sandbox.project, argv, {workdir, tty: options.tty})
  }

  /** What a node's cache agent serves in cluster mode: Repos and the pods on `node` (cache-demand.ts). */
  async cacheDemand(options: {
    node: string
    cacheRoot: string
    namespace: string
    context?: string
  }): Promise<CacheDemand> {
    return (await import('./cache-demand.js')).openCacheDemand(options, this.context.env)
  }

  /**
   * On a cluster, every node's state of each cache from the Repos' status; on podman undefined (the
   * local cache is the truth).
   */
  async cacheStates(
    runtimeId: string,
    keys: string[],
  ): Promise<Record<string, Record<string, CacheNodeStatus>> | undefined> {
    const runtime = this.runtime(runtimeId)
    return runtime instanceof KubernetesRuntime ? runtime.cacheStates(keys) : undefined
  }

  /**
   * `yard cluster install|status` (DESIGN.md §5.2) against the cluster of BackendContext.cluster;
   * cluster-setup.ts and client-node load on first use.
   * @throws InputError (exit 2) when the backend was given no [cluster] settings.
   */
  async clusterSetup(): Promise<import('../../sdk/index.js').SandboxClusterSetup> {
    const {cluster} = this.context
    if (!cluster) {
      throw new InputError('the k8s-sandbox backend was given no [cluster] settings', {
        why: 'whoever created the backend left BackendContext.cluster out (yard sets it for the cluster commands)',
        fix: 'run yard cluster install or yard cluster status',
      })
    }

    return new (await import('./cluster-setup.js')).K8sClusterSetup(cluster, this.context.env)
  }
}

/**
 * `yard sandbox forward` (DESIGN.md §5.2): the podman runtime publishes the ports (null); the
 * kubernetes runtime runs `kubectl port-forward` unless `dryRun`.
 */
async function forwardPorts(
  runtime: SandboxRuntime,
  pod: string,
  forwards: SandboxPortForward[],
  options: {dryRun: boolean},
): Promise<{argv: string[]; exitCode: number | null} | null> {
  if (!(runtime instanceof KubernetesRuntime)) return null
  const argv = await runtime.forwardArgv(pod, forwards)
  return {argv, exitCode: options.dryRun ? null : await runtime.forward(pod, forwards)}
}

function summaryOf(pod: RuntimePod, runtime: string): SandboxSummary {
  const start = pod.annotations[WARM_ANNOTATION] === undefined ? 'cold' : 'warm'
  return {
    name: pod.labels[NAME_LABEL] ?? pod.name,
    project: pod.name,
    runtime,
    phase: pod.phase,
    offset: Number(pod.labels[OFFSET_LABEL]),
    ...(pod.labels[OWNER_LABEL] !== undefined && {owner: pod.labels[OWNER_LABEL]}),
    start,
    ...(pod.node && {node: pod.node}),
  }
}
