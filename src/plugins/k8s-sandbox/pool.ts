/**
 * Warm pool pods of the k8s-sandbox backend on the podman runtime (docs/sandboxes.md, "Warm
 * pool"; contract in sdk/sandbox-pool.ts). A pool pod is the sandbox Pod of
 * manifest.ts without a name, offset or published port: named `<prefix>.pool-<pool>-<6 hex>` (a
 * `.` no sandbox name can hold, so it never clashes with a project name), labelled with its pool
 * instead of an identity, every cache mounted read-only, and prepared in one `podman exec`:
 * safe.directory, fetch-through, `default/` cloned per slot. Readiness is a marker beside the
 * claims (`<state dir>/sandboxes/ready/<pod>`), so finding a ready pod costs no call into a pod.
 *
 * A claim (claims.ts) records the sandbox's identity, then attaches in one more `podman exec`:
 * the host's git identity, `default/` fetched from the cache, the branch worktree, the push url.
 */
import {existsSync, promises as fs, readdirSync} from 'node:fs'
import path from 'node:path'

import type {PoolOwner, PoolPod, SandboxPoolSupport} from '../../sdk/sandbox-pool.js'
import type {SandboxAttachResult, SandboxRecord, SandboxSpec} from '../../sdk/sandbox.js'
import type {BackendContext, Target} from '../../sdk/target.js'
import type {PodmanRuntime} from './podman-runtime.js'

import {InputError, OperationError} from '../../sdk/errors.js'
import {asksRoot, FETCH_THROUGH_PATH, fetchThroughScript} from '../../sdk/fetch-through.js'
import {liveOwner} from '../../sdk/lock.js'
import {initPodSubmodules, rewriteSubmoduleUrls} from './attach-submodules.js'
import {defaultCheckout} from './attach.js'
import {claimsByPod, dropClaim, isTaken, readClaim, takenBy, takePod, writeClaim} from './claims.js'
import {OWNER_LABEL, podManifest, sandboxLabels} from './manifest.js'
import {POOL_LABEL, POOL_SPEC_LABEL} from './pool-labels.js'
import {claimedRecord, claimedSlots, poolPodManifest, poolPodName, PREPARE_SCRIPT, runClaimScript} from './pool-pod.js'
import {awaitRelay, podAddress, relayPorts} from './port-relay.js'

const readyDir = (stateDir: string) => path.join(stateDir, 'sandboxes', 'ready')

/**
 * The create lock of `project` (core/sandbox/create.ts withSandboxLock: `<state dir>/locks/
 * sandbox-<project>.lock`, a 30 min budget): held while that create may still claim its pod.
 */
const createLock = (stateDir: string, project: string) => path.join(stateDir, 'locks', `sandbox-${project}.lock`)
const CREATE_LOCK_BUDGET_MS = 30 * 60_000

type Json = Record<string, unknown>

export class PodmanPool implements SandboxPoolSupport {
  readonly runtimes = ['podman'] as const

  constructor(
    private readonly context: BackendContext,
    private readonly runtime: () => PodmanRuntime,
  ) {}

  async pods(pool: PoolOwner, runtime: string): Promise<PoolPod[]> {
    requirePodman(runtime)
    const result = await this.context.runner.run(
      'podman',
      ['pod', 'ps', '--filter', `label=${POOL_LABEL}=${pool.id}`, '--format', 'json'],
      {timeoutMs: 30_000, budget: 'podman pod ps'},
    )
    const listed = (JSON.parse(result.stdout.trim() || '[]') ?? []) as Json[]
    const {stateDir} = this.context
    const claims = claimsByPod(stateDir)
    const pods: PoolPod[] = await Promise.all(
      listed
        .filter((pod) => ((pod.Labels ?? {}) as Json)[OWNER_LABEL] === pool.owner)
        .map(async (pod) => {
          const name = String(pod.Name)
          const status = String(pod.Status ?? '').toLowerCase()
          const taken = isTaken(stateDir, name)
          const project = taken && !claims.has(name) ? takenBy(stateDir, name) : undefined
          // Taken, never claimed, and nobody creating that project any more: the create died between.
          const orphaned =
            project !== undefined &&
            readClaim(stateDir, project)?.pod !== name &&
            (await liveOwner(createLock(stateDir, project), CREATE_LOCK_BUDGET_MS)) === undefined
          return {
            name,
            phase:
              status === 'running'
                ? 'Running'
                : status === 'created'
                  ? 'Pending'
                  : status === 'exited' || status === 'stopped'
                    ? 'Succeeded'
                    : 'Failed',
            ready: existsSync(path.join(readyDir(stateDir), name)),
            taken,
            fingerprint: String(((pod.Labels ?? {}) as Json)[POOL_SPEC_LABEL] ?? ''),
            ...(orphaned && {orphaned}),
          }
        }),
    )
    // A ready marker of a pod that is gone (removed outside yard): never claimable, and the
    // refill's removal of it (phase Gone) deletes the marker.
    const own = `${pool.prefix}.pool-${pool.id}-`
    const names = new Set(pods.map((pod) => pod.name))
    const markers = existsSync(readyDir(stateDir)) ? readdirSync(readyDir(stateDir)) : []
    for (const name of markers.filter((marker) => marker.startsWith(own) && !names.has(marker)))
      pods.push({name, phase: 'Gone', ready: false, taken: false, fingerprint: ''})
    return pods.sort((a, b) => a.name.localeCompare(b.name))
  }

  async fill(
    pool: PoolOwner,
    spec: SandboxSpec,
    fingerprint: string,
    options: {fetchThroughSeconds: number},
  ): Promise<string> {
    requirePodman(spec.runtime)
    const name = poolPodName(pool)
    const runtime = this.runtime()
    await runtime.play(poolPodManifest(pool, name, spec, fingerprint))
    try {
      const pairs = spec.repos.flatMap((repo) => [repo.slot, repo.key])
      const env = {
        YARD_FT_PATH: FETCH_THROUGH_PATH,
        YARD_FETCH_THROUGH: fetchThroughScript(options.fetchThroughSeconds),
      }
      const prepared = await runtime.run(name, ['sh', '-c', PREPARE_SCRIPT, 'sh', ...pairs], {env})
      if (prepared.exitCode !== 0)
        throw new OperationError(`preparing the pool pod ${name} failed (exit ${prepared.exitCode})`, {
          why: prepared.stderr.trim() || undefined,
          fix: 'check the image (yard image build) and the caches (yard cache list), then run yard sandbox pool set again',
        })
      if (spec.repos.some((repo) => (repo.submodules ?? []).length > 0)) {
        await rewriteSubmoduleUrls(runtime, name, spec.repos)
        for (const repo of spec.repos) await initPodSubmodules(runtime, name, defaultCheckout(repo.slot), repo)
      }

      await fs.mkdir(readyDir(this.context.stateDir), {recursive: true})
      await fs.writeFile(path.join(readyDir(this.context.stateDir), name), '')
      return name
    } catch (error) {
      await this.remove(name, 'podman')
      throw error
    }
  }

  async take(
    pool: PoolOwner,
    runtime: string,
    fingerprint: string,
    project: string,
    listed?: readonly PoolPod[],
  ): Promise<string | undefined> {
    for (const pod of listed ?? (await this.pods(pool, runtime))) {
      if (pod.phase !== 'Running' || !pod.ready || pod.taken || pod.fingerprint !== fingerprint) continue
      if (!(await takePod(this.context.stateDir, pod.name, project))) continue
      // The marker is the take; the ready marker, read again after it, proves the pod was not removed since the listing.
      if (existsSync(path.join(readyDir(this.context.stateDir), pod.name))) return pod.name
      await fs.rm(path.join(this.context.stateDir, 'sandboxes', 'claimed', pod.name), {force: true})
    }

    return undefined
  }

  async untake(pod: string): Promise<void> {
    const project = (
      await fs.readFile(path.join(this.context.stateDir, 'sandboxes', 'claimed', pod), 'utf8').catch(() => '')
    ).trim()
    if (project !== '' && readClaim(this.context.stateDir, project) === undefined)
      await dropClaim(this.context.stateDir, project, pod)
  }

  async claim(pod: string, pool: string, target: Target, spec: SandboxSpec): Promise<SandboxRecord> {
    const manifest = podManifest(target, spec) as {metadata: {annotations: Record<string, string>}}
    await writeClaim(this.context.stateDir, target.project, {
      pod,
      pool,
      labels: sandboxLabels(target),
      annotations: manifest.metadata.annotations,
    })
    // Fetch-through asks come in under the pod's own asks directory; the sandbox's name points there.
    await fs.rm(asksRoot(this.context.stateDir, target.project), {recursive: true, force: true})
    await fs
      .symlink(asksRoot(this.context.stateDir, pod), asksRoot(this.context.stateDir, target.project))
      .catch(() => undefined)
    await fs.rm(path.join(readyDir(this.context.stateDir), pod), {force: true})
    return claimedRecord(target, spec)
  }

  /** The pod keeps its own name here, so the attach needs no claim: the create runs it while the claim is made. */
  async attachTaken(
    pod: string,
    spec: SandboxSpec,
    request: {branch: string; gitIdentity: {name?: string; email?: string}},
  ): Promise<SandboxAttachResult> {
    const taken: SandboxRecord = {
      name: pod,
      project: pod,
      runtime: 'podman',
      phase: 'Running',
      offset: 0,
      owner: '',
      spec,
    }
    const runtime = this.runtime()
    const directory = await runClaimScript(runtime, taken, request)
    return {branch: request.branch, slots: await claimedSlots(runtime, taken, directory)}
  }

  async attachClaimed(
    sandbox: SandboxRecord,
    request: {branch: string; gitIdentity: {name?: string; email?: string}},
  ): Promise<SandboxAttachResult> {
    return this.attachTaken(this.runtime().podOf(sandbox.project), sandbox.spec, request)
  }

  /** Rootful podman only: a rootless pod has no address the host reaches (port-relay.ts). */
  relaysPorts(): boolean {
    return process.getuid?.() === 0
  }

  async relay(sandbox: SandboxRecord): Promise<void> {
    const pod = this.runtime().podOf(sandbox.project)
    const address = await podAddress(this.context, pod)
    if (address === undefined)
      throw new OperationError(`the sandbox pod ${pod} has no address on a podman network`, {
        fix: `remove the sandbox (yard sandbox rm ${sandbox.name}) and create it again`,
      })
    const forwards = Object.values(sandbox.spec.portBases).map((base) => ({
      hostPort: base + sandbox.offset,
      containerPort: base,
    }))
    await relayPorts(this.context.stateDir, sandbox.project, address, forwards)
  }

  async awaitRelay(sandbox: SandboxRecord): Promise<void> {
    return awaitRelay(this.context.stateDir, sandbox.project)
  }

  async remove(pod: string, runtime = 'podman'): Promise<void> {
    requirePodman(runtime)
    await this.runtime().remove(pod)
    await fs.rm(path.join(readyDir(this.context.stateDir), pod), {force: true})
    await fs.rm(path.join(this.context.stateDir, 'sandboxes', 'claimed', pod), {force: true})
  }
}

/** Only podman holds pools so far (docs/sandboxes.md). @throws InputError (exit 2) otherwise. */
function requirePodman(runtime: string): void {
  if (runtime !== 'podman') {
    throw new InputError(`warm pools are not supported on the ${runtime} runtime yet`, {
      why: 'only the podman runtime keeps pool pods so far (docs/sandboxes.md, "Warm pool")',
      fix: 'use --runtime podman, or create sandboxes cold',
    })
  }
}
