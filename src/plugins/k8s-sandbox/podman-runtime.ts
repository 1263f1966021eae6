/**
 * The `podman` runtime (DESIGN.md §5.2): the sandbox Pod played with `podman kube play`, so one
 * machine runs exactly the manifest a cluster would get. Pod labels come back through
 * `podman pod ps`; annotations sit on the workspace container.
 */
import {existsSync, promises as fs} from 'node:fs'
import os from 'node:os'
import path from 'node:path'

import type {RunResult} from '../../sdk/process.js'
import type {BackendContext} from '../../sdk/target.js'
import type {RuntimePod, SandboxRuntime} from './runtime.js'

import {confirmedExecFailure, isEngineExecFailure} from '../../sdk/engine-exec.js'
import {OperationError, RefusedError} from '../../sdk/errors.js'
import {asksRoot, podAsksPath} from '../../sdk/fetch-through.js'
import {OWNER_LABEL} from '../../sdk/labels.js'
import {claimsByPod, dropClaim, readClaim} from './claims.js'
import {PREFIX_LABEL, SPEC_ANNOTATION, WORK_VOLUME, WORKSPACE_CONTAINER} from './manifest.js'
import {POOL_LABEL, WARM_ANNOTATION} from './pool-labels.js'
import {stopRelay} from './port-relay.js'

/**
 * What play() keeps of a pod in `<state dir>/sandboxes/<pod>.annotations.json`: the annotations
 * podman could not hold, and (so yard exec needs no engine call to find the pod) its labels and
 * the annotations podman holds.
 */
interface PodRecord {
  annotations: Record<string, string>
  labels?: Record<string, string>
  podAnnotations?: Record<string, string>
}

/** podman names a played pod's container `<pod>-<container>`. */
const containerOf = (pod: string) => `${pod}-${WORKSPACE_CONTAINER}`

const PLAY_BUDGET_MS = 120_000

type Json = Record<string, unknown>

function phaseOf(status: string): string {
  const state = status.toLowerCase()
  if (state === 'running') return 'Running'
  if (state === 'created' || state === 'initialized' || state === 'configured') return 'Pending'
  if (state === 'exited' || state === 'stopped') return 'Succeeded'
  if (state === 'dead' || state === 'error' || state === 'degraded') return 'Failed'
  return 'Unknown'
}

export class PodmanRuntime implements SandboxRuntime {
  readonly id = 'podman'

  constructor(private readonly context: BackendContext) {}

  async list(prefix: string, timeoutMs: number): Promise<RuntimePod[]> {
    const result = await this.context.runner.run(
      'podman',
      ['pod', 'ps', '--filter', `label=${PREFIX_LABEL}=${prefix}`, '--format', 'json'],
      {timeoutMs, budget: 'podman pod ps'},
    )
    const pods = (JSON.parse(result.stdout.trim() || '[]') ?? []) as Json[]
    // A pool pod is no sandbox until claimed; then it is listed with the sandbox's identity (claims.ts).
    const claims = pods.some((pod) => POOL_LABEL in ((pod.Labels ?? {}) as Json))
      ? claimsByPod(this.context.stateDir)
      : new Map()
    return pods.flatMap((pod) => {
      const labels = (pod.Labels ?? {}) as Record<string, string>
      const phase = phaseOf(String(pod.Status ?? ''))
      if (!(POOL_LABEL in labels)) return [{name: String(pod.Name), phase, labels, annotations: {}}]
      const claim = claims.get(String(pod.Name))
      return claim
        ? [
            {
              name: claim.project,
              phase,
              labels: claim.record.labels,
              annotations: {[WARM_ANNOTATION]: claim.record.pool},
            },
          ]
        : []
    })
  }

  /** The pod that holds project `name`: a claimed pool pod's own name, else `name` itself. */
  podOf(name: string): string {
    return readClaim(this.context.stateDir, name)?.pod ?? name
  }

  async get(name: string): Promise<RuntimePod | undefined> {
    const claim = readClaim(this.context.stateDir, name)
    const result = await this.context.runner.run(
      'podman',
      ['container', 'inspect', '--format', 'json', containerOf(claim?.pod ?? name)],
      {allowFailure: true},
    )
    if (result.exitCode !== 0) {
      // A claim whose pool pod is gone (a killed `sandbox rm`, `podman pod rm`) names no sandbox:
      // it is removed with what the pod left, so a cold create of the name finds its own pod.
      if (claim && (await this.podExists(claim.pod)) === false) {
        await this.leftovers(name, {dryRun: false})
        return this.get(name)
      }

      return undefined
    }

    const [container] = JSON.parse(result.stdout) as Json[]
    const config = (container?.Config ?? {}) as Json
    const state = (container?.State ?? {}) as Json
    if (container === undefined || container.Pod === undefined) return undefined
    if (claim)
      return {
        name,
        phase: phaseOf(String(state.Status ?? '')),
        labels: claim.labels,
        annotations: {...claim.annotations, [WARM_ANNOTATION]: claim.pool},
      }
    const annotations = {
      ...(config.Annotations as Record<string, string> | undefined),
      ...(await this.keptAnnotations(name)),
    }
    return {
      name,
      phase: phaseOf(String(state.Status ?? '')),
      labels: (config.Labels ?? {}) as Record<string, string>,
      annotations,
    }
  }

  async play(manifest: Record<string, unknown>): Promise<void> {
    const metadata = manifest.metadata as {
      name: string
      annotations?: Record<string, string>
      labels?: Record<string, string>
    }
    const {name} = metadata
    await this.refuseInTheWay(name)
    // A pod of a project's own name is that sandbox: a claim left for the project (its pool pod
    // gone) would send exec, attach and remove to the dead pool pod instead.
    const stale = readClaim(this.context.stateDir, name)
    if (stale) await dropClaim(this.context.stateDir, name, stale.pod)

    // podman 4.3 refuses annotation values over 63 characters (a label's limit, wrongly applied):
    // those are kept beside the pod in the state directory and merged back by get().
    const long = Object.fromEntries(Object.entries(metadata.annotations ?? {}).filter(([, value]) => value.length > 63))
    const short = Object.fromEntries(Object.entries(metadata.annotations ?? {}).filter(([key]) => !(key in long)))
    const asks = asksRoot(this.context.stateDir, name)
    const played = withAsks(
      podOwnEmptyDirs({...manifest, metadata: {...metadata, annotations: short}}, name),
      asks,
      repoKeys(metadata.annotations),
    )
    await fs.rm(asks, {recursive: true, force: true})
    for (const key of repoKeys(metadata.annotations)) await fs.mkdir(path.join(asks, key), {recursive: true})
    await fs.mkdir(path.dirname(this.annotationsFile(name)), {recursive: true})
    const record: PodRecord = {annotations: long, labels: metadata.labels ?? {}, podAnnotations: short}
    await fs.writeFile(this.annotationsFile(name), JSON.stringify(record) + '\n')
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'yard-pod-'))
    const file = path.join(dir, `${name}.yaml`)
    try {
      const {stringify} = await import('../../sdk/yaml.js')
      await fs.writeFile(file, stringify(played, {lineWidth: 0}))
      const result = await this.context.runner.run('podman', ['kube', 'play', '--quiet', file], {
        allowFailure: true,
        timeoutMs: PLAY_BUDGET_MS,
        budget: 'podman kube play',
      })
      if (result.exitCode !== 0) {
        // A pod that failed to start is not left behind (DESIGN.md §5.2: nothing left running);
        // a pod of that name without this manifest's owner was made by someone else meanwhile.
        const labels = await this.podLabels(name)
        if (labels === null || labels[OWNER_LABEL] === metadata.labels?.[OWNER_LABEL]) await this.remove(name)
        throw new OperationError(`podman kube play of the sandbox pod ${name} failed (exit ${result.exitCode})`, {
          why: (result.stderr || result.stdout).trim() || undefined,
          fix: 'check the image (yard image build) and podman (yard doctor), then run yard sandbox create again',
        })
      }
    } finally {
      await fs.rm(dir, {recursive: true, force: true})
    }
  }

  /**
   * Refuses to play a pod where one of that name, or its work volume, already is: a failed play
   * removes what it made, and must never remove what it did not (a pod made by hand, or a
   * sandbox whose workspace container was removed outside yard, whose volume holds its `/work`).
   * @throws RefusedError (exit 3) naming what is in the way and how to look at it.
   */
  private async refuseInTheWay(name: string): Promise<void> {
    const volume = `${name}-${WORK_VOLUME}`
    const [pod, work] = await Promise.all([
      this.podExists(name),
      this.context.runner.run('podman', ['volume', 'exists', volume], {allowFailure: true}),
    ])
    if (pod !== true && work.exitCode !== 0) return
    const what = pod === true ? `a pod named ${name}` : `the volume ${volume}`
    throw new RefusedError(`cannot make the sandbox pod ${name}: ${what} exists`, {
      why:
        pod === true
          ? `yard finds no sandbox in it (no ${containerOf(name)} container: made outside yard, or its workspace container was removed), and it never replaces a pod it did not make: its volume may hold unsaved work`
          : `it is the /work of an earlier pod ${name} that was removed outside yard, and may hold unsaved work`,
      fix:
        pod === true
          ? `look at it (podman pod inspect ${name}; podman volume ls); remove it yourself (podman pod rm ${name}) once nothing in it is needed, or choose another sandbox name`
          : `copy out what you need (podman run --rm -v ${volume}:/work IMAGE …), then \`yard sandbox rm\` of the sandbox's name removes what it left; or choose another sandbox name`,
    })
  }

  async remove(project: string): Promise<void> {
    const name = this.podOf(project)
    // A claimed pod's host ports are its relay's: free when remove returns (port-relay.ts).
    if (name !== project) await stopRelay(this.context.stateDir, project)
    await this.removePod(name)
    // Exactly the pod's own emptyDir volume: `<pod>-` is also the start of longer pods' names.
    // podman 4.3 plays it as an anonymous volume that `pod rm` already took; `--force` succeeds
    // for a missing volume, so no `volume exists` round trip first.
    await this.context.runner.run('podman', ['volume', 'rm', '--force', `${name}-${WORK_VOLUME}`])
    await fs.rm(this.annotationsFile(name), {force: true})
    await fs.rm(asksRoot(this.context.stateDir, name), {recursive: true, force: true})
    if (name !== project) {
      await fs.rm(asksRoot(this.context.stateDir, project), {recursive: true, force: true})
      await dropClaim(this.context.stateDir, project, name)
    }
  }

  /**
   * `podman pod stop` then `pod rm` of the pod of that very name, at once; a missing pod is no
   * failure. The stop first: a `pod rm --force` of running containers (podman 4.3, cgroupfs)
   * removes the pod's cgroup while their processes are still exiting and retries for ~3 s, about
   * one removal in three; after the stop the cgroup is empty and the rm takes under a second.
   */
  private async removePod(pod: string): Promise<void> {
    await this.context.runner.run('podman', ['pod', 'stop', '--ignore', '--time', '0', pod], {
      timeoutMs: PLAY_BUDGET_MS,
      budget: 'podman pod stop',
      allowFailure: true,
    })
    await this.context.runner.run('podman', ['pod', 'rm', '--force', '--ignore', '--time', '0', pod], {
      timeoutMs: PLAY_BUDGET_MS,
      budget: 'podman pod rm',
    })
  }

  /** The labels of the pod of that very name; null when there is none or podman cannot tell. */
  private async podLabels(pod: string): Promise<Record<string, string> | null> {
    const result = await this.context.runner
      .run('podman', ['pod', 'inspect', '--format', '{{json .Labels}}', pod], {allowFailure: true})
      .catch(() => undefined)
    if (result?.exitCode !== 0) return null
    try {
      return (JSON.parse(result.stdout.trim() || 'null') as Record<string, string> | null) ?? {}
    } catch {
      return null
    }
  }

  /** Whether the pod exists (`podman pod exists`: exit 0 yes, 1 no); undefined when podman cannot tell. */
  async exists(name: string): Promise<boolean | undefined> {
    return this.podExists(this.podOf(name))
  }

  /** Whether the pod of that very name exists (no claim looked up); undefined when podman cannot tell. */
  private async podExists(pod: string): Promise<boolean | undefined> {
    const result = await this.context.runner.run('podman', ['pod', 'exists', pod], {
      allowFailure: true,
      timeoutMs: 30_000,
      budget: 'podman pod exists',
    })
    return result.exitCode === 0 ? true : result.exitCode === 1 ? false : undefined
  }

  /**
   * What a pod removed outside yard (`podman pod rm`) left behind: the pod itself when only its
   * workspace container went, the annotations kept beside it and its work volume, as `pod NAME`,
   * `record PATH` / `volume NAME`; removed unless `dryRun`.
   */
  async leftovers(project: string, options: {dryRun: boolean; owner?: string}): Promise<string[]> {
    const name = this.podOf(project)
    if (name !== project) {
      // A claimed pool pod removed outside yard: its claim goes with what the pod left.
      if (!options.dryRun) {
        await fs.rm(asksRoot(this.context.stateDir, project), {recursive: true, force: true})
        await dropClaim(this.context.stateDir, project, name)
      }

      return [
        `claim ${path.join(this.context.stateDir, 'sandboxes', `${project}.claim.json`)}`,
        ...(await this.leftovers(name, options)),
      ]
    }

    const file = this.annotationsFile(name)
    const work = `${name}-${WORK_VOLUME}`
    // The pod itself is left when only its workspace container went (`podman rm` of it, or a
    // removal cut short after the container): nothing in it runs the sandbox any more.
    // It goes only when it carries the owner yard recorded when it played it: a pod of that name
    // made by hand, or by another checkout, is not this sandbox's to remove.
    const [volume, podLabels, kept] = await Promise.all([
      this.context.runner
        .run('podman', ['volume', 'exists', work], {allowFailure: true})
        .then((result) => result.exitCode === 0),
      this.podLabels(name),
      this.record(name),
    ])
    const recordedOwner = kept.labels?.[OWNER_LABEL]
    const podOwner = podLabels?.[OWNER_LABEL]
    // Two clones of one repository share the state directory and the prefix: what names another
    // checkout (its pod's label, else the record) is that checkout's, never this one's to remove.
    const foreign =
      options.owner !== undefined &&
      (podLabels ? podOwner !== options.owner : recordedOwner !== undefined && recordedOwner !== options.owner)
    if (foreign)
      throw new RefusedError(
        `the sandbox pod ${name} belongs to another checkout (owner ${(podLabels ? podOwner : recordedOwner) ?? 'none: made outside yard'})`,
        {
          why: `this checkout is owner ${options.owner}; project names clash when two clones share a prefix`,
          fix: `run yard sandbox rm from the checkout that made it, or remove it yourself (podman pod rm ${name}) if it is yours`,
        },
      )
    const pod = podLabels !== null && podOwner !== undefined && podOwner === (options.owner ?? recordedOwner)
    const asks = asksRoot(this.context.stateDir, name)
    const found = [
      ...(pod ? [`pod ${name}`] : []),
      ...(existsSync(file) ? [`record ${file}`] : []),
      ...(existsSync(asks) ? [`asks ${asks}`] : []),
      ...(volume ? [`volume ${work}`] : []),
    ]
    if (!options.dryRun) {
      if (pod) await this.removePod(name)
      if (volume) await this.context.runner.run('podman', ['volume', 'rm', '--force', work])
      await fs.rm(file, {force: true})
      await fs.rm(asks, {recursive: true, force: true})
    }

    return found
  }

  /** `<state dir>/sandboxes/<pod>.annotations.json`: the annotations podman could not hold. */
  private annotationsFile(name: string): string {
    return path.join(this.context.stateDir, 'sandboxes', `${name}.annotations.json`)
  }

  private async keptAnnotations(name: string): Promise<Record<string, string>> {
    return (await this.record(name)).annotations
  }

  /**
   * The record play() kept of pod `name`; an older yard kept only the long annotations, as a plain
   * map (no annotation key is `annotations`, so the two shapes never mix).
   */
  private async record(name: string): Promise<PodRecord> {
    const kept = JSON.parse(await fs.readFile(this.annotationsFile(name), 'utf8').catch(() => '{}')) as
      PodRecord | Record<string, string>
    return typeof kept.annotations === 'object' ? (kept as PodRecord) : {annotations: kept as Record<string, string>}
  }

  /**
   * Project `name`'s pod as yard recorded it when it played or claimed it (claims.ts), without an
   * engine call; its phase is `Running` unconfirmed (an exec on it says otherwise). Undefined when
   * there is no whole record (a pod played by an older yard): ask get().
   */
  async recorded(name: string): Promise<RuntimePod | undefined> {
    const claim = readClaim(this.context.stateDir, name)
    if (claim)
      return {
        name,
        phase: 'Running',
        labels: claim.labels,
        annotations: {...claim.annotations, [WARM_ANNOTATION]: claim.pool},
      }
    const record = await this.record(name)
    if (record.labels === undefined || record.podAnnotations === undefined) return undefined
    return {
      name,
      phase: 'Running',
      labels: record.labels,
      annotations: {...record.podAnnotations, ...record.annotations},
    }
  }

  async run(
    name: string,
    argv: string[],
    options: {workdir?: string; env?: Record<string, string>} = {},
  ): Promise<RunResult> {
    const env = Object.entries(options.env ?? {}).flatMap(([key, value]) => ['--env', `${key}=${value}`])
    return this.context.runner.run(
      'podman',
      [
        'exec',
        ...(options.workdir ? ['--workdir', options.workdir] : []),
        ...env,
        containerOf(this.podOf(name)),
        ...argv,
      ],
      {allowFailure: true},
    )
  }

  /**
   * `podman exec` in the workspace container on this terminal, its exit code passed on. With
   * `missingWorkdir`, podman's own failure for a missing directory (read from the same call, not a
   * `test -d` first) is held back and that error thrown instead.
   */
  async exec(
    name: string,
    argv: string[],
    options: {workdir: string; tty: boolean; missingWorkdir?: () => Error; gone?: () => Error},
  ): Promise<number> {
    const args = [
      'exec',
      '--interactive',
      ...(options.tty ? ['--tty'] : []),
      '--workdir',
      options.workdir,
      containerOf(this.podOf(name)),
      ...argv,
    ]
    const result = await this.context.runner.run('podman', args, {
      stdio: 'inherit',
      allowFailure: true,
      stderrHold: options.missingWorkdir || options.gone ? isEngineExecFailure : undefined,
    })
    // Reported, never run again: the exec's own result says which failure it was (its words and code).
    const failure = options.missingWorkdir || options.gone ? await confirmedExecFailure(result) : undefined
    if (failure === 'no-directory' && options.missingWorkdir) throw options.missingWorkdir()
    if (failure === 'no-container' && options.gone) throw options.gone()
    if (failure === 'not-running') {
      const pod = this.podOf(name)
      throw new OperationError(`the sandbox pod ${pod} is not running`, {
        why: 'it was stopped (podman pod stop, a reboot); its /work is kept, but nothing runs in it',
        fix: `start it again with podman pod start ${pod}, or remove it with yard sandbox rm (--force: unchecked)`,
      })
    }

    // The command's own lines that look like the engine's (or the engine's, said as it said them).
    if (result.stderr !== '') process.stderr.write(result.stderr)
    return result.exitCode
  }

  async copyOut(name: string, podPath: string, hostPath: string): Promise<void> {
    await this.context.runner.run('podman', ['cp', `${containerOf(this.podOf(name))}:${podPath}`, hostPath])
  }
}

/**
 * podman 4.3 plays an emptyDir as a named volume called after the pod's volume (`work`), which
 * every pod would share; renamed `<pod>-<volume>` it is the pod's own, as on a cluster, and
 * `remove` deletes it with the pod.
 */
function podOwnEmptyDirs(manifest: Record<string, unknown>, pod: string): Record<string, unknown> {
  const spec = manifest.spec as {
    volumes: Array<{name: string; emptyDir?: unknown}>
    containers: Array<{volumeMounts?: Array<{name: string}>}>
  }
  const renamed = new Set(spec.volumes.filter((volume) => volume.emptyDir !== undefined).map((volume) => volume.name))
  const rename = (volumeName: string) => (renamed.has(volumeName) ? `${pod}-${volumeName}` : volumeName)
  return {
    ...manifest,
    spec: {
      ...spec,
      volumes: spec.volumes.map((volume) => ({...volume, name: rename(volume.name)})),
      containers: spec.containers.map((container) => ({
        ...container,
        volumeMounts: container.volumeMounts?.map((mount) => ({...mount, name: rename(mount.name)})),
      })),
    },
  }
}

/** The cache keys of the pod's repositories (not their submodules'), from its spec annotation. */
function repoKeys(annotations: Record<string, string> | undefined): string[] {
  const spec = JSON.parse(annotations?.[SPEC_ANNOTATION] ?? '{}') as {repos?: Array<{key: string}>}
  return [...new Set((spec.repos ?? []).map((repo) => repo.key))]
}

/**
 * Fetch-through (sdk/fetch-through.ts): per repository's cache, the host directory
 * `<asks>/<key>` mounted writable at `/yard/asks/<key>` — the only place of this machine the pod
 * may write, and only to ask for a refresh of a cache it mounts read-only anyway.
 */
function withAsks(manifest: Record<string, unknown>, asks: string, keys: string[]): Record<string, unknown> {
  const spec = manifest.spec as {
    volumes: Array<Record<string, unknown>>
    containers: Array<{volumeMounts?: Array<Record<string, unknown>>}>
  }
  const [workspace, ...rest] = spec.containers
  return {
    ...manifest,
    spec: {
      ...spec,
      volumes: [
        ...spec.volumes,
        ...keys.map((key) => ({name: `asks-${key}`, hostPath: {path: path.join(asks, key), type: 'Directory'}})),
      ],
      containers: [
        {
          ...workspace,
          volumeMounts: [
            ...(workspace.volumeMounts ?? []),
            ...keys.map((key) => ({name: `asks-${key}`, mountPath: podAsksPath(key)})),
          ],
        },
        ...rest,
      ],
    },
  }
}
