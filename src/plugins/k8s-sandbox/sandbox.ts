/**
 * The k8s-sandbox backend (DESIGN.md §5.2): sandboxes as Pods on a runtime. The Pod manifest,
 * attach, unsaved-work checks and exec are the same for every runtime; only `SandboxRuntime`
 * differs (`podman` here; `kubernetes` is added as another runtime).
 */
import type {BackendContext, SandboxAttachResult, SandboxBackend, SandboxRecord, SandboxSpec, SandboxSummary, SandboxWorktree, Target} from '../../core/backend.js'
import {InputError, RefusedError} from '../../core/errors.js'
import {attachInPod} from './attach.js'
import {NAME_LABEL, OFFSET_LABEL, OWNER_LABEL, podManifest, SPEC_ANNOTATION} from './manifest.js'
import {PodmanRuntime} from './podman-runtime.js'
import type {RuntimePod, SandboxRuntime} from './runtime.js'
import {podWorktrees, saveUnsaved} from './unsaved.js'

export const K8S_SANDBOX_ID = 'k8s-sandbox'

/** The runtimes this backend knows; only those with a factory here can run pods. */
export const SANDBOX_RUNTIMES = ['podman', 'kubernetes'] as const

export class K8sSandbox implements SandboxBackend {
  readonly kind = 'sandbox' as const
  readonly id = K8S_SANDBOX_ID
  readonly runtimes = SANDBOX_RUNTIMES

  private readonly made = new Map<string, SandboxRuntime>()

  constructor(private readonly context: BackendContext) {}

  /**
   * The runtime of that id.
   * @throws InputError (exit 2) for an unknown runtime, and for `kubernetes`, which this version
   *   does not run yet.
   */
  runtime(id: string): SandboxRuntime {
    const known = this.made.get(id)
    if (known) return known
    if (id !== 'podman') {
      throw new InputError(`the sandbox runtime "${id}" is not available in this version of yard`, {
        why: SANDBOX_RUNTIMES.includes(id as 'podman') ? 'only the podman runtime (podman kube play on this machine) is built so far' : `the runtimes are ${SANDBOX_RUNTIMES.join(', ')}`,
        fix: 'use --runtime podman, or set [cluster] runtime = "podman" in yard.toml',
      })
    }
    const runtime = new PodmanRuntime(this.context)
    this.made.set(id, runtime)
    return runtime
  }

  async list(prefix: string, options: {timeoutMs: number; runtime?: string}): Promise<SandboxSummary[]> {
    const runtime = this.runtime(options.runtime ?? 'podman')
    return (await runtime.list(prefix, options.timeoutMs)).map((pod) => summaryOf(pod, runtime.id))
  }

  manifest(target: Target, spec: SandboxSpec): Record<string, unknown> {
    return podManifest(target, spec)
  }

  async get(target: Target, runtimeId: string): Promise<SandboxRecord | undefined> {
    const pod = await this.runtime(runtimeId).get(target.project)
    if (!pod) return undefined
    if (pod.labels[OWNER_LABEL] !== target.owner) {
      throw new RefusedError(`the pod ${pod.name} belongs to another checkout (owner ${pod.labels[OWNER_LABEL] ?? 'none: made outside yard'})`, {
        why: `this checkout (${target.mainPath}) is owner ${target.owner}; project names clash when two clones share a prefix`,
        fix: `set a distinct [project] prefix in ${target.mainPath}/yard.toml (or YARD_PREFIX)`,
      })
    }
    const spec = JSON.parse(pod.annotations[SPEC_ANNOTATION] ?? 'null') as SandboxSpec | null
    if (spec === null) throw new RefusedError(`the pod ${pod.name} has no ${SPEC_ANNOTATION} annotation`, {why: 'yard did not make it, or an older yard did', fix: `remove it yourself (podman pod rm ${pod.name}) if it is yours`})
    return {...summaryOf(pod, runtimeId), owner: target.owner, spec}
  }

  async create(target: Target, spec: SandboxSpec): Promise<void> {
    await this.runtime(spec.runtime).play(podManifest(target, spec))
  }

  attach(sandbox: SandboxRecord, request: {branch: string; gitIdentity: {name?: string; email?: string}}): Promise<SandboxAttachResult> {
    return attachInPod(this.runtime(sandbox.runtime), sandbox.project, sandbox.spec, request)
  }

  worktrees(sandbox: SandboxRecord): Promise<SandboxWorktree[]> {
    return podWorktrees(this.runtime(sandbox.runtime), sandbox.project, sandbox.spec)
  }

  save(sandbox: SandboxRecord, dir: string): Promise<string[]> {
    return saveUnsaved(this.runtime(sandbox.runtime), sandbox.project, sandbox.spec, dir)
  }

  remove(sandbox: SandboxRecord): Promise<void> {
    return this.runtime(sandbox.runtime).remove(sandbox.project)
  }

  async exec(sandbox: SandboxRecord, place: {slot: string; directory: string}, argv: string[], options: {tty: boolean}): Promise<number> {
    const runtime = this.runtime(sandbox.runtime)
    const workdir = `/work/${place.slot}/${place.directory}`
    if ((await runtime.run(sandbox.project, ['test', '-d', workdir])).exitCode !== 0) {
      throw new InputError(`the sandbox ${sandbox.name} has no ${workdir}`, {
        why: 'yard exec NAME/BRANCH runs in the branch worktree /work/<slot>/<branch with "/" → "-">',
        fix: `attach the branch first (yard sandbox attach ${sandbox.name} --branch BRANCH), or name one yard sandbox list shows`,
      })
    }
    return runtime.exec(sandbox.project, argv, {workdir, tty: options.tty})
  }
}

function summaryOf(pod: RuntimePod, runtime: string): SandboxSummary {
  return {name: pod.labels[NAME_LABEL] ?? pod.name, project: pod.name, runtime, phase: pod.phase, offset: Number(pod.labels[OFFSET_LABEL])}
}
