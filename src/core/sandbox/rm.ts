/**
 * `yard sandbox rm NAME [--force] [--dry-run]` (DESIGN.md §5.2): refuses while a slot holds
 * modified or untracked files, or commits the cache lacks — on a branch, a detached HEAD or in a
 * stash; `--force` first saves, under `<state dir>/sandboxes/<name>/<time>/`, per slot a bundle of
 * just those commits (sandbox-restore.ts says how they come back) and a patch per dirty worktree.
 * Then the pod goes, the leases are released and the name's pin is deleted (unless a worktree of
 * that name still uses it). A sandbox whose pod was removed outside yard has its leftovers
 * (leases, the runtime's record, the pin) cleaned instead.
 */
import {existsSync, readFileSync} from 'node:fs'
import path from 'node:path'

import type {CacheBackend} from '../../sdk/cache.js'
import type {SandboxRecord, SandboxSaved, SandboxUnsaved} from '../../sdk/sandbox.js'
import type {Target} from '../../sdk/target.js'
import type {YardContext} from '../kernel/context.js'
import type {Backends} from '../registry/backends.js'

import {InputError, RefusedError} from '../../sdk/errors.js'
import {repoIdentity} from '../../sdk/repo-identity.js'
import {releasePin} from '../identity/offset-allocator.js'
import {pinAuthor, YARD_PIN_MARK} from '../identity/pins.js'
import {stateDir} from '../kernel/state.js'
import {worktreePath} from '../workspace/workspace.js'
import {pulledRefPrefix, restoreCommands, type SlotRestore} from './restore.js'
import {openSandboxCache, openSandboxes, type SandboxSession, sandboxTarget} from './sandbox.js'

export interface RemoveResult {
  name: string
  project: string
  runtime: string
  dryRun: boolean
  /** The pod was gone already (removed outside yard): only what it left behind is cleaned. */
  lost: boolean
  /**
   * The pod was not running, so its /work could not be looked at: nothing is known unsaved and
   * nothing can be saved (rm refuses without --force).
   */
  unchecked: boolean
  /** Unsaved work, one `path: what` line each. */
  unsaved: string[]
  /** What `--force` saves: per slot the refs its bundle holds, and the worktrees patched. */
  toSave: {bundles: Array<{slot: string; refs: string[]}>; patches: string[]}
  /** Where the bundles and patches went (null: nothing saved). */
  savedIn: string | null
  saved: string[]
  /** How each slot's saved work comes back. */
  restore: SlotRestore[]
  /** What goes (with `dryRun`: would go): `pod P`, `lease sandbox P on the cache K`, the pin… */
  goes: string[]
  removed: boolean
}

/** The borrower a sandbox is in its caches' leases (as sandbox-create.ts takes them). */
const borrowerOf = (project: string) => ({kind: 'sandbox', name: project})

/** `path: status line` per dirty file and `path: what not on origin` per unsaved ref. */
function describeUnsaved(work: SandboxUnsaved): string[] {
  return [
    ...work.worktrees.flatMap((worktree) => worktree.dirty.map((line) => `${worktree.path}: ${line.trim()}`)),
    ...work.refs.map((ref) => `${ref.what} not on origin`),
  ]
}

/**
 * Plans and, unless `dryRun`, removes the sandbox (see the module comment). With `dryRun` the
 * plan comes back even when rm would refuse, with that refusal beside it.
 * @throws InputError (exit 2) for an unknown sandbox with nothing left of it; RefusedError (exit 3)
 *   for unsaved work without `force` (not with `dryRun`), listing it, and for a pod that is not
 *   running (its /work cannot be looked at) without `force`; OperationError (exit 1)
 *   when saving or the runtime fails (nothing is removed when saving fails).
 */
export async function removeSandbox(
  context: YardContext,
  backends: Backends,
  options: {name: string; force: boolean; dryRun: boolean; runtime?: string},
): Promise<{result: RemoveResult; refusal?: RefusedError}> {
  const session = await openSandboxes(context, backends, options.runtime)
  const target = sandboxTarget(session.workspace, context, options.name)
  const sandbox = await session.backend.get(target, session.runtime)
  const caches = await openSandboxCache(context, backends, session.workspace)
  if (!sandbox) return removeLost(context, session, caches, target, options)

  // Only a running pod can be asked what its /work holds; a stopped one (a reboot, `podman pod
  // stop`) keeps the volume, and removing it unasked could delete commits that exist nowhere else.
  const unchecked = sandbox.phase !== 'Running'
  if (!unchecked) context.progress?.step(`looking for unsaved work in ${sandbox.project}`)
  const work: SandboxUnsaved = unchecked
    ? {worktrees: [], refs: []}
    : await stillPulled(context, session, sandbox, await session.backend.unsaved(sandbox), options.dryRun)
  const unsaved = describeUnsaved(work)
  const slots = [...new Set(work.refs.map((ref) => ref.slot))]
  const toSave = {
    bundles: slots.map((slot) => ({slot, refs: work.refs.filter((ref) => ref.slot === slot).map((ref) => ref.ref)})),
    patches: work.worktrees.filter((row) => row.dirty.length > 0).map((row) => row.path),
  }
  const local = sandbox.runtime !== 'kubernetes'
  const pin = pinToDelete(session, sandbox.name)
  const leases = local ? sandbox.spec.repos.flatMap((repo) => [repo, ...(repo.submodules ?? [])]) : []
  const goes = [
    `pod ${sandbox.project}`,
    ...leases.map((repo) => `lease sandbox ${sandbox.project} on the cache ${repo.key}`),
    ...(pin ? [pin] : []),
  ]
  const saveRoot = path.join(stateDir(context.env), 'sandboxes', sandbox.name)
  const refusal = options.force
    ? undefined
    : unchecked
      ? new RefusedError(
          `cannot look for unsaved work in the sandbox ${sandbox.name}: its pod is not running (phase ${sandbox.phase})`,
          {
            why: 'rm asks the running pod which commits and changes exist only in its /work; a stopped pod cannot be asked, and removing it deletes /work with whatever it holds',
            fix: `start the pod again (podman pod start POD, where podman pod ps lists it) and run yard sandbox rm ${sandbox.name} again, or pass --force to remove it and its /work unchecked`,
          },
        )
      : unsaved.length > 0
        ? new RefusedError(`the sandbox ${sandbox.name} holds unsaved work:\n  ${unsaved.join('\n  ')}`, {
            why: 'removing the pod deletes /work, and these changes and commits exist nowhere else (the cache and origin lack them)',
            fix: `${keepHint(sandbox)}, or pass --force to save bundles and patches under ${saveRoot} first (--dry-run shows what)`,
          })
        : undefined
  if (refusal && !options.dryRun) throw refusal
  const savedIn =
    options.force && unsaved.length > 0 ? path.join(saveRoot, new Date().toISOString().replaceAll(':', '-')) : null
  const base = {
    name: sandbox.name,
    project: sandbox.project,
    runtime: sandbox.runtime,
    dryRun: options.dryRun,
    lost: false,
    unchecked,
    unsaved,
    toSave,
    savedIn,
    goes,
  }
  if (options.dryRun) return {result: {...base, saved: [], restore: [], removed: false}, refusal}

  if (savedIn) context.progress?.step(`saving unsaved work under ${savedIn}`)
  const saved: SandboxSaved = savedIn
    ? await session.backend.save(sandbox, work, savedIn)
    : {files: [], bundles: [], patches: []}
  // Said before the pod goes, so that a removal cut short still tells where the work went.
  context.progress?.step(
    `removing pod ${sandbox.project}${savedIn ? ` (its unsaved work is saved under ${savedIn})` : ''}`,
  )
  await session.backend.remove(sandbox)
  // A cluster sandbox took no local lease (its node's agent sees the pod mount the cache).
  for (const repo of leases) await caches.cache.release(caches.root, repo.url, borrowerOf(sandbox.project))
  await deletePin(context, session, sandbox.name)
  const pulled = {mainPath: session.workspace.mainPath, slots: (work.pulled ?? []).map((entry) => entry.slot)}
  const restore = restoreCommands(sandbox.name, sandbox.spec.repos, saved, work.refs, sandbox.spec.branch, pulled)
  return {result: {...base, saved: saved.files, restore, removed: true}}
}

/**
 * `work` once every branch the pod records as pulled is checked against the main checkout: one
 * whose pulled ref there (`refs/remotes/sandbox/<name>/<branch>`, pulledRefPrefix) no longer holds
 * the pulled commit (deleted, or
 * moved by hand) is kept nowhere but the pod again, so its record in the pod is dropped
 * (markPulled null) and the pod is asked again: rm refuses for it, `--force` bundles it. With
 * `dryRun` the pod is left as it is and such a branch is listed as unsaved. Untouched (no git
 * call) when nothing was pulled.
 */
async function stillPulled(
  context: YardContext,
  session: SandboxSession,
  sandbox: SandboxRecord,
  work: SandboxUnsaved,
  dryRun: boolean,
): Promise<SandboxUnsaved> {
  const {backend, workspace} = session
  if (!work.pulled?.length || !backend.markPulled) return work
  const lost: NonNullable<SandboxUnsaved['pulled']> = []
  for (const entry of work.pulled) {
    const ref = `${pulledRefPrefix(sandbox.name, sandbox.spec.repos, entry.slot)}/${entry.branch}`
    const kept = await context.runner.git(['merge-base', '--is-ancestor', entry.commit, ref], {
      cwd: workspace.mainPath,
      allowFailure: true,
    })
    if (kept.exitCode === 0) continue
    context.warn(
      `note: ${ref} in ${workspace.mainPath} no longer holds ${entry.commit.slice(0, 12)}, which yard sandbox pull brought there: ${entry.branch} counts as unsaved again`,
    )
    lost.push(entry)
  }

  if (lost.length === 0) return work
  if (dryRun) {
    // A branch with commits past the pulled one is listed already: it is not listed twice.
    const listed = new Set(work.refs.map((ref) => `${ref.slot}\t${ref.ref}`))
    const refs = lost
      .filter((entry) => !listed.has(`${entry.slot}\trefs/heads/${entry.branch}`))
      .map((entry) => ({
        slot: entry.slot,
        ref: `refs/heads/${entry.branch}`,
        commit: entry.commit,
        commits: 1,
        what: `/work/${entry.slot}: branch ${entry.branch} (pulled at ${entry.commit.slice(0, 7)}, no longer on the host)`,
      }))
    return {...work, refs: [...work.refs, ...refs]}
  }

  for (const entry of lost)
    await backend.markPulled(sandbox, {slot: entry.slot, directory: 'default'}, entry.branch, null)
  return backend.unsaved(sandbox)
}

/**
 * A sandbox whose pod is gone (`podman pod rm` outside yard): its leases, what the runtime kept
 * of it and its pin are what is left; cleaned unless `dryRun`.
 * @throws InputError (exit 2) when nothing is left either: there is no such sandbox.
 */
async function removeLost(
  context: YardContext,
  session: SandboxSession,
  caches: {cache: CacheBackend; root: string},
  target: Target,
  options: {name: string; dryRun: boolean; force: boolean},
): Promise<{result: RemoveResult; refusal?: RefusedError}> {
  const {name} = options
  const {project} = target
  const noSandbox = new InputError(`there is no sandbox ${name} (pod ${project}) on the ${session.runtime} runtime`, {
    why: 'nothing of it is left to remove: no pod, no record, no lease on a cache',
    fix: `yard sandbox list shows the sandboxes there are${session.runtime === 'kubernetes' ? '' : ' (--runtime kubernetes for a cluster)'}`,
  })
  const kept = await session.backend.clearLost?.(project, session.runtime, {dryRun: true, owner: target.owner})
  if (kept === undefined) throw noSandbox
  const leased =
    session.runtime === 'kubernetes'
      ? []
      : (await caches.cache.list(caches.root)).filter((row) =>
          row.borrowers.some((lease) => lease.kind === 'sandbox' && lease.name === project),
        )
  if (kept.length === 0 && leased.length === 0) throw noSandbox
  const pin = pinToDelete(session, name)
  const goes = [
    ...kept,
    ...leased.map((row) => `lease sandbox ${project} on the cache ${row.key}`),
    ...(pin ? [pin] : []),
  ]
  // The work volume outlives its pod: it is the sandbox's /work, which no running pod can be
  // asked about any more, so it goes only with --force (as for a stopped pod).
  const volume = kept.find((what) => what.startsWith('volume '))?.slice('volume '.length)
  const refusal =
    volume && !options.force
      ? new RefusedError(`cannot look for unsaved work in the sandbox ${name}: its workspace container is gone`, {
          why: `its /work is the volume ${volume}, which may hold commits and changes that exist nowhere else, and only a running sandbox can be asked what it holds`,
          fix: `copy out what you need (podman run --rm -v ${volume}:/work:ro IMAGE ls /work), then yard sandbox rm ${name} --force (--dry-run shows what goes)`,
        })
      : undefined
  if (refusal && !options.dryRun) throw refusal
  if (!options.dryRun) {
    await session.backend.clearLost!(project, session.runtime, {dryRun: false, owner: target.owner})
    for (const row of leased) {
      if (row.url) await caches.cache.release(caches.root, row.url, borrowerOf(project))
      else
        context.warn(
          `warning: the cache ${row.key} has no url recorded, so the lease of sandbox ${project} stays: delete ${path.join(caches.root, `${row.key}.leases`, `sandbox.${project}`)}`,
        )
    }

    await deletePin(context, session, name)
  }

  const result: RemoveResult = {
    name,
    project,
    runtime: session.runtime,
    dryRun: options.dryRun,
    lost: true,
    unchecked: volume !== undefined,
    unsaved: [],
    toSave: {bundles: [], patches: []},
    savedIn: null,
    saved: [],
    restore: [],
    goes,
    removed: !options.dryRun,
  }
  return {result, ...(refusal && {refusal})}
}

/**
 * `pin NAME = N in FILE` when rm deletes it: there is one, yard wrote it (marked, item 6 of the
 * reliability rules: a hand-written pin stays), and no worktree of that name uses it.
 */
function pinToDelete(session: SandboxSession, name: string): string | undefined {
  const pin = session.workspace.config.pins[name]
  if (pin === undefined || existsSync(worktreePath(session.workspace, name))) return undefined
  const file = session.workspace.config.files.local
  if (pinAuthor(readText(file), name) !== 'yard') return undefined
  return `pin ${name} = ${String(pin)} in ${file}`
}

/** Deletes the pin when yard wrote it; says so when a hand-written one of that name stays. */
async function deletePin(context: YardContext, session: SandboxSession, name: string): Promise<void> {
  const file = session.workspace.config.files.local
  if (existsSync(worktreePath(session.workspace, name))) return
  const pin = await releasePin(context, session.workspace, name, `sandbox rm ${name}`)
  if (pin === 'kept')
    context.warn(
      `note: kept the hand-written pin of ${name} in ${file} (yard deletes only the pins it wrote, marked "${YARD_PIN_MARK}")`,
    )
}

const readText = (file: string): string => {
  try {
    return readFileSync(file, 'utf8')
  } catch {
    return ''
  }
}

/**
 * How to keep a sandbox's commits: push them, unless an origin is a path on this host (the pod
 * cannot push there): then `yard sandbox pull`.
 */
function keepHint(sandbox: SandboxRecord): string {
  const local = sandbox.spec.repos.some((repo) => repoIdentity(repo.url).scheme === 'local')
  return local
    ? `commit them and bring them here (yard sandbox pull ${sandbox.name}/BRANCH [--slot SLOT]: the pod cannot push to an origin that is a path on this host)`
    : `commit and push them (yard exec ${sandbox.name}/BRANCH -- git push origin BRANCH)`
}
