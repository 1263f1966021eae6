/**
 * Sandbox use cases (DESIGN.md §5.2): which backend and runtime apply, a sandbox's Target (the
 * same identity rules as worktrees, §3), `list` and `manifest`. Create and attach are in
 * sandbox-create.ts, rm in sandbox-rm.ts, exec in sandbox-exec.ts.
 */
import pLimit from 'p-limit'

import type {CacheBackend} from '../../sdk/cache.js'
import type {SandboxBackend, SandboxRecord, SandboxWorktree} from '../../sdk/sandbox.js'
import type {OffsetSource, Target} from '../../sdk/target.js'
import type {YardContext} from '../kernel/context.js'
import type {Backends} from '../registry/backends.js'

import {InputError, RefusedError, YardError} from '../../sdk/errors.js'
import {portsFor, validateName} from '../identity/identity.js'
import {openWorkspace, targetIdentity, type Workspace} from '../workspace/workspace.js'
import {clusterSettings} from './cluster-settings.js'

/** Everything a sandbox command works with. */
export interface SandboxSession {
  workspace: Workspace
  backend: SandboxBackend
  /** `--runtime`, else `[cluster] runtime`. */
  runtime: string
}

/**
 * Opens the workspace and the `[cluster] backend` through the registry.
 * @throws InputError (exit 2) for invalid config, an unknown backend or runtime.
 */
export async function openSandboxes(
  context: YardContext,
  backends: Backends,
  runtimeFlag?: string,
): Promise<SandboxSession> {
  const workspace = await openWorkspace(context)
  const backend = await backends.sandbox(context, workspace.config.cluster.backend, {
    cluster: clusterSettings(workspace),
  })
  const runtime = runtimeFlag ?? workspace.config.cluster.runtime
  if (!backend.runtimes.includes(runtime)) {
    throw new InputError(`unknown sandbox runtime "${runtime}"`, {
      why: `the ${backend.id} backend runs ${backend.runtimes.join(', ')}`,
      fix: `use --runtime ${backend.runtimes[0]}`,
    })
  }

  return {workspace, backend, runtime}
}

/** The `[cache] backend` through the registry, and `[cache] root`. */
export async function openSandboxCache(
  context: YardContext,
  backends: Backends,
  workspace: Workspace,
): Promise<{cache: CacheBackend; root: string}> {
  return {cache: await backends.cache(context, workspace.config.cache.backend), root: workspace.config.cache.root}
}

/**
 * The Target of sandbox `name` (DESIGN.md §2, §3): project `<prefix>-<name>`, checkout = the main
 * checkout, `[ports]` from main's config; the offset given (an existing sandbox's label), else
 * the pin or hash as for a worktree. `WT_OFFSET` plays no part: the offset is decided under the
 * project lock.
 */
export function sandboxTarget(
  workspace: Workspace,
  context: YardContext,
  name: string,
  offset?: {offset: number; offsetSource: OffsetSource},
): Target {
  const base = targetIdentity(workspace, context, validateName(name, 'sandbox name'), false, {useEnvOffset: false})
  const chosen = offset ?? {offset: base.offset, offsetSource: base.offsetSource}
  return {...base, ...chosen, checkoutPath: workspace.mainPath, ports: portsFor(workspace.config.ports, chosen.offset)}
}

/** The error for sandbox `name` (pod `project`) that `runtime` does not have (exit 2). */
export function noSandbox(name: string, project: string, runtime: string): InputError {
  return new InputError(`there is no sandbox ${name} (pod ${project}) on the ${runtime} runtime`, {
    fix: `create it with \`yard sandbox create ${name} --repo URL\`; yard sandbox list shows the sandboxes`,
  })
}

/**
 * The existing sandbox `name` and its Target (offset from its label).
 * @throws InputError (exit 2) when there is none; RefusedError (exit 3) when another checkout owns the pod.
 */
export async function requireSandbox(
  context: YardContext,
  session: SandboxSession,
  name: string,
): Promise<{target: Target; sandbox: SandboxRecord}> {
  const probe = sandboxTarget(session.workspace, context, name)
  const sandbox = await session.backend.get(probe, session.runtime)
  if (!sandbox) throw noSandbox(name, probe.project, session.runtime)

  return {
    target: sandboxTarget(session.workspace, context, name, {offset: sandbox.offset, offsetSource: 'label'}),
    sandbox,
  }
}

/** One row of `yard sandbox list` (DESIGN.md Appendix A). */
export interface SandboxListRow {
  name: string
  project: string
  runtime: string
  phase: string
  offset: number
  offsetSource: OffsetSource
  ports: Record<string, number>
  /** The node the pod runs on (kubernetes), or null. */
  node: string | null
  /**
   * Why the pod's worktrees could not be read (a running pod whose container is gone, git failing
   * in it): its `repos` then list no worktrees. Absent when they were read.
   */
  worktreesError?: string
  /** `warm`: claimed from a warm pool; `cold`: its pod was made for it (docs/sandboxes.md, "Warm pool"). */
  start?: 'warm' | 'cold'
  /**
   * Per slot its cache's freshness where the pod runs: podman, the local cache's record; a
   * cluster, the Repo status entry of the pod's node — stale when that node's latest clone or
   * fetch failed, or when it does not hold the cache. Per worktree: `dirty` (modified or
   * untracked files), `unpushed` (its branches' commits the cache lacks, `branch (n commits)`)
   * and `unsaved`, either of them: what `sandbox rm` refuses on (both always set by
   * `listSandboxes`); `lfsPointers` only in a worktree that uses LFS.
   */
  repos: Array<{
    slot: string
    identity: string
    key: string
    stale: boolean
    lastFetched: string | null
    lastError: string | null
    worktrees: Array<{
      branch: string | null
      path: string
      dirty: boolean
      unpushed?: string[]
      unsaved?: boolean
      lfsPointers?: number
    }>
  }>
}

/** A cache's freshness as `yard sandbox list` shows it. */
interface Freshness {
  stale: boolean
  lastFetched: string | null
  lastError: string | null
}

/** Pods `yard sandbox list` reads at once (one engine or kubectl exec each). */
const LIST_READS_AT_ONCE = 4

/**
 * `yard sandbox list`: every sandbox of the project with its slots, worktrees and cache
 * freshness, by name. The running pods' worktrees are read a few at a time; a pod whose worktrees
 * cannot be read is listed with `worktreesError` instead of failing the list.
 * @throws what opening the project or listing the pods throws (no engine, no cluster).
 */
export async function listSandboxes(
  context: YardContext,
  backends: Backends,
  runtimeFlag?: string,
): Promise<SandboxListRow[]> {
  const session = await openSandboxes(context, backends, runtimeFlag)
  const summaries = await session.backend.list(session.workspace.prefix, {timeoutMs: 10_000, runtime: session.runtime})
  // A pod that another checkout owns (two clones of one repository share its prefix), or that
  // yard did not make, is not this project's: left out with a note, not a failure of the list.
  // A listed pod whose workspace container is gone is one row that says so (`yard sandbox rm`
  // removes it), from the record this host kept of it where there is one.
  const found = await Promise.all(
    summaries.map(async (summary) => {
      if (!Number.isInteger(summary.offset)) {
        context.warn(
          `note: not listed: the pod ${summary.project} has the prefix's label but no offset label (yard did not make it)`,
        )
        return undefined
      }

      try {
        return await requireSandbox(context, session, summary.name)
      } catch (error) {
        if (error instanceof RefusedError) {
          context.warn(`note: not listed: ${error.message} (${error.why ?? ''})`)
          return undefined
        }

        if (!(error instanceof InputError)) throw error
        const probe = sandboxTarget(session.workspace, context, summary.name, {
          offset: summary.offset,
          offsetSource: 'label',
        })
        if (summary.owner !== undefined && summary.owner !== probe.owner) {
          context.warn(
            `note: not listed: the pod ${summary.project} belongs to another checkout (owner ${summary.owner})`,
          )
          return undefined
        }

        const kept = await session.backend.recorded?.(probe, session.runtime).catch(() => undefined)
        const sandbox: SandboxRecord = {
          ...(kept ?? {spec: {repos: []} as unknown as SandboxRecord['spec'], owner: probe.owner}),
          ...summary,
        }
        return {
          target: probe,
          sandbox,
          broken: `its workspace container is gone (\`yard sandbox rm ${summary.name}\` removes the pod)`,
        }
      }
    }),
  )
  const sandboxes = found.filter((entry) => entry !== undefined) as Array<{
    target: Target
    sandbox: SandboxRecord
    broken?: string
  }>
  const keys = [...new Set(sandboxes.flatMap(({sandbox}) => sandbox.spec.repos.map((repo) => repo.key)))]
  const nodeStates = keys.length > 0 ? await session.backend.cacheStates?.(session.runtime, keys) : undefined
  let freshness: (key: string, node: string | undefined) => Freshness
  if (nodeStates === undefined) {
    const {cache, root} = await openSandboxCache(context, backends, session.workspace)
    const local = new Map(
      (await cache.list(root)).map((row) => [
        row.key,
        {stale: row.stale, lastFetched: row.lastFetched, lastError: row.lastError},
      ]),
    )
    freshness = (key) => local.get(key) ?? {stale: false, lastFetched: null, lastError: null}
  } else {
    freshness = (key, node) => {
      const entry = node === undefined ? undefined : nodeStates[key]?.[node]
      // A pod not yet scheduled has no cache to be stale; a scheduled one whose node has nothing is.
      if (entry === undefined) return {stale: node !== undefined, lastFetched: null, lastError: null}
      return {
        stale: !entry.present || entry.lastError !== null,
        lastFetched: entry.lastFetched,
        lastError: entry.lastError,
      }
    }
  }

  // One exec per running pod, a few at a time: 50 sandboxes are not 50 engine calls in a row. A
  // pod that cannot be read (its container gone under a running pod) is one row that says so.
  const limit = pLimit(LIST_READS_AT_ONCE)
  const read = await limit.map(sandboxes, async ({sandbox, broken}) => {
    if (broken !== undefined) return {worktrees: [], error: broken}
    if (sandbox.phase !== 'Running') return {worktrees: []}
    try {
      return {worktrees: await session.backend.worktrees(sandbox)}
    } catch (error) {
      return {
        worktrees: [],
        error: error instanceof YardError ? [error.message, error.why].filter(Boolean).join(': ') : String(error),
      }
    }
  })
  const rows: SandboxListRow[] = []
  for (const [index, {target, sandbox}] of sandboxes.entries()) {
    const {worktrees, error} = read[index] as {worktrees: SandboxWorktree[]; error?: string}
    rows.push({
      ...(error !== undefined && {worktreesError: error}),
      name: sandbox.name,
      project: sandbox.project,
      runtime: sandbox.runtime,
      phase: sandbox.phase,
      offset: target.offset,
      offsetSource: 'label',
      ports: target.ports,
      node: sandbox.node ?? null,
      start: sandbox.start ?? 'cold',
      repos: sandbox.spec.repos.map((repo) => ({
        slot: repo.slot,
        identity: repo.identity,
        key: repo.key,
        ...freshness(repo.key, sandbox.node),
        // lfsPointers: only for a worktree that uses LFS (files still pointers; 0 when all are checked out).
        worktrees: worktrees
          .filter((row) => row.slot === repo.slot)
          .map((row) => ({
            branch: row.branch,
            path: row.path,
            dirty: row.dirty.length > 0,
            unpushed: row.unpushed,
            unsaved: row.dirty.length > 0 || row.unpushed.length > 0,
            ...(!(row.lfsPointers === undefined) && {lfsPointers: row.lfsPointers}),
          })),
      })),
    })
  }

  return rows.sort((a, b) => a.name.localeCompare(b.name))
}

/** `yard sandbox manifest NAME`: the Pod object the sandbox was made with. */
export async function sandboxManifest(
  context: YardContext,
  backends: Backends,
  name: string,
  runtimeFlag?: string,
): Promise<Record<string, unknown>> {
  const session = await openSandboxes(context, backends, runtimeFlag)
  const {target, sandbox} = await requireSandbox(context, session, name)
  return session.backend.manifest(target, sandbox.spec)
}

/** A manifest as YAML, as `podman kube play` and `kubectl apply -f` read it (yaml loaded here: exec never needs it). */
export async function manifestText(manifest: Record<string, unknown>): Promise<string> {
  const {stringify} = await import('../../sdk/yaml.js')
  return stringify(manifest, {lineWidth: 0})
}

/**
 * The sandboxes of the project as name and offset, for collisions and `yard ports` (DESIGN.md
 * §3.4); a runtime that fails is left out with a note.
 */
export async function knownSandboxes(
  context: YardContext,
  session: SandboxSession,
): Promise<Array<{name: string; offset: number}>> {
  try {
    return (await session.backend.list(session.workspace.prefix, {timeoutMs: 2000, runtime: session.runtime})).map(
      ({name, offset}) => ({name, offset}),
    )
  } catch (error) {
    context.warn(`note: sandboxes of the ${session.runtime} runtime are left out: ${(error as Error).message}`)
    return []
  }
}
