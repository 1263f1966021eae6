/**
 * `yard worktree remove` (DESIGN.md §4.1): plan first, so every refusal happens before anything is
 * torn down; then, in order: transcripts and agent stores archived → uncommitted work (and a HEAD
 * on no branch) snapshotted to `refs/yard/removed/<name>-<UTC stamp>` → submodules, nested
 * repositories and kept ignored files archived (removal-archive.ts) → box down and stack nuke
 * through the stack backend → `git worktree remove` of that one path (never a bare `git worktree
 * prune`) → the pin deleted when yard wrote it.
 * The branch is kept. Every step checks whether it is still needed, so a remove that was
 * interrupted, or a worktree whose directory was deleted by hand, finishes on the next call.
 */
import {existsSync, promises as fs} from 'node:fs'
import path from 'node:path'

import type {Target} from '../../sdk/target.js'
import type {YardContext} from '../kernel/context.js'
import type {StackTeardown, WorktreeBackends, WorktreeMachine} from './backends.js'

import {ExitCode, InputError, RefusedError, YardError} from '../../sdk/errors.js'
import {formatArgv} from '../../sdk/process.js'
import {shellQuote} from '../../sdk/shell.js'
import {validateName} from '../identity/identity.js'
import {releasePin, withOffsetsLock} from '../identity/offset-allocator.js'
import {pinAuthor} from '../identity/pins.js'
import {checkGitLink, untrustedGit} from '../workspace/git-link.js'
import {branchConfig, dirtyCounts, listRemotes} from '../workspace/git.js'
import {recordUntrustedCheckout} from '../workspace/untrusted-checkouts.js'
import {
  buildTarget,
  type GitWorktree,
  openWorkspace,
  type Workspace,
  worktreePath,
  worktreesUnderRoot,
} from '../workspace/workspace.js'
import {BASE_KEY} from './list.js'
import {
  agentHomePart,
  type ArchivedPart,
  describeOutside,
  findOutsideWork,
  hasOutsideWork,
  type OutsideWork,
  removalArchiveDir,
  restoreSequence,
  saveOutsideWork,
} from './removal-archive.js'
import {REMOVED_REFS, restoreHint, snapshotWorktree, utcStamp} from './snapshot.js'
import {
  type AgentStoreArchive,
  agentStoresOf,
  archiveTranscripts,
  listFiles,
  TRANSCRIPTS_DIR,
  transcriptsArchive,
  transcriptsDir,
} from './transcripts.js'
import {type Trust, writeTrust} from './trust-record.js'

/** Work that removing the checkout would lose (DESIGN.md §4.1). */
export interface UnsavedWork {
  modified: number
  untracked: number
  /**
   * Commits reachable from no remote-tracking branch (no remote: from neither the recorded base nor
   * another branch).
   */
  unpushed: number
  /** What `unpushed` was counted against, for messages: "on no remote branch", "on no other branch", … */
  against: string
  /**
   * Commits of a HEAD on no branch (detached, or a rebase stopped at `edit`) that no branch or
   * remote-tracking branch holds: lost with the worktree unless the snapshot ref keeps them.
   */
  detached: number
}

/** What `remove` will do (and, with `--dry-run`, all it does). Also the `--json` shape of the plan. */
export interface RemovalSummary {
  name: string
  path: string
  branch: string | null
  /** git has the worktree registered. */
  registered: boolean
  /** The directory exists. */
  present: boolean
  locked: boolean
  /** Null when the directory is gone (nothing left to check). */
  unsaved: UnsavedWork | null
  /** Submodules, nested repositories and ignored files (null when the directory is gone). */
  outside: OutsideWork | null
  /** Transcripts to archive, or null when the checkout has none. */
  transcripts: {source: string; archive: string; files: number} | null
  /**
   * The box's agent home and the host-side per-path stores of agent CLIs that hold files, archived
   * with the transcripts.
   */
  agentStores: AgentStoreArchive[]
  /** Uncommitted work will be saved to a `refs/yard/removed/…` ref. */
  snapshot: boolean
  /**
   * The stack teardown: the backend and what its dry run says would go (absent when the removal
   * is refused, or the dry run failed without `--dry-run`), or why it is skipped.
   */
  stack: {backend: string; wouldRemove?: string[]} | {skipped: string}
  /** The name's pin in yard.local.toml, deleted at the end when yard wrote it. */
  pin: number | null
  /** Whether yard wrote that pin (its `# yard:` mark); a hand-written one is kept. */
  pinByYard: boolean
  /** `untrusted`: its record in yard.local.toml is deleted at the end. */
  trust: Trust
  /** An untrusted worktree's own machine, removed with its disk after the worktree; null when there is none. */
  machine: string | null
}

export interface RemovalPlan {
  summary: RemovalSummary
  /** Set when the removal must not go ahead (unsaved work or a lock, without `--force`). */
  refusal?: RefusedError
  workspace: Workspace
  target: Target
  teardown?: StackTeardown
  machine?: WorktreeMachine
}

export interface RemovalResult {
  name: string
  path: string
  branch: string | null
  archived: {archive: string; copied: number; kept: number} | null
  /** The agent stores archived (a store that could not be, with `--force`, is left out with a warning). */
  archivedStores: Array<AgentStoreArchive & {copied: number; kept: number}>
  /** Where submodules, nested repositories and kept ignored files were saved, part by part. */
  saved: {dir: string; parts: ArchivedPart[]} | null
  /** One command that brings the saved work back (null when nothing was saved). */
  restore: string | null
  /**
   * The ref holding the uncommitted work and/or a HEAD on no branch, what it holds in words, and
   * the commands that restore it.
   */
  snapshot: {ref: string; holds: string; restore: string} | null
  /** What the stack teardown removed, or why it was skipped. */
  stack: {backend: string; removed: string[]; failed?: string} | {skipped: string}
  unregistered: boolean
  pinRemoved: boolean
  /** A hand-written pin (no `# yard:` mark) that was left in place: the offset a person chose outlives the worktree. */
  pinKept: boolean
  /** The untrusted worktree's own machine, removed; null when there was none. */
  machineRemoved: string | null
  /** The untrusted record deleted from yard.local.toml. */
  trustRemoved: boolean
}

export interface RemoveOptions {
  name: string
  force: boolean
  dryRun: boolean
  backends: WorktreeBackends
  /** `--delete-branch`: a refusal says the branch goes too (the command checks it is merged). */
  deleteBranch?: boolean
}

/**
 * Plans the removal of worktree NAME (DESIGN.md §4.1); changes nothing. Unsaved work and a
 * locked worktree become `refusal` unless `force`.
 * @throws InputError (exit 2) for an invalid name, a name with nothing to remove, or a directory
 *   under the root that git does not know as a worktree.
 * @throws RefusedError (exit 3) when the worktree's directory is a symbolic link (even with `force`).
 */
export async function planRemoval(context: YardContext, options: RemoveOptions): Promise<RemovalPlan> {
  const name = validateName(options.name, 'worktree name')
  const workspace = await openWorkspace(context)
  const checkout = worktreePath(workspace, name)
  const worktree = (await worktreesUnderRoot(workspace, context)).find((entry) => entry.name === name)?.worktree
  const present = existsSync(checkout)
  const pin = workspace.config.pins[name]
  const trust = workspace.config.trust[name] ?? 'trusted'
  if (!worktree) {
    if (present) {
      throw new InputError(`${checkout} is not a worktree git knows`, {
        why: 'yard removes only worktrees registered with git, so it never deletes a directory it did not make',
        fix: `check it with \`git -C ${shellQuote(checkout)} status\`; remove it yourself if it is not needed`,
      })
    }

    if (pin === undefined && trust === 'trusted') {
      throw new InputError(`there is no worktree named ${name}`, {
        why: `git has no worktree at ${checkout} and yard.local.toml has no pin for ${name}: nothing is left to remove`,
        fix: 'see `yard worktree list`; a stack left behind goes with `yard nuke --worktree ' + name + '`',
      })
    }
  }

  // The plan runs git in the checkout: not where untrusted code re-pointed its .git (git-link.ts).
  if (trust === 'untrusted' && present) checkGitLink(workspace.commonDir, checkout, name)
  const link = worktree && present ? await fs.readlink(checkout).catch(() => undefined) : undefined
  if (link !== undefined) {
    // `git worktree remove` would delete the files of the directory the link points at, then fail
    // on the link itself ("Not a directory"), leaving the worktree half-removed and unregistered.
    throw new RefusedError(`the directory of worktree ${name} is a symbolic link to ${link}`, {
      why: `git worktree remove would empty ${link} and then fail on the link, leaving half a worktree`,
      fix: `put the directory back in place (\`${formatArgv(['rm', checkout])} && ${formatArgv(['mv', path.resolve(path.dirname(checkout), link), checkout])}\`), then run the command again`,
    })
  }

  const target = await buildTarget(workspace, {...context, warn() {}}, name, false, {useEnvOffset: false})
  const [unsaved, outside, transcriptFiles, teardown, machine] = await Promise.all([
    worktree && present ? unsavedWork(context, workspace, checkout, worktree, trust === 'untrusted') : null,
    worktree && present
      ? findOutsideWork(context.runner, checkout, workspace.config.worktrees['keep-ignored'], workspace.mainPath, {
          untrusted: trust === 'untrusted' ? {commonDir: workspace.commonDir} : undefined,
        })
      : null,
    present ? transcriptFilesOf(context, checkout, name) : [],
    options.backends.stackTeardown(workspace, target),
    options.backends.worktreeMachine?.(workspace, name),
  ])
  const archive = transcriptsArchive({
    configured: workspace.config.worktrees['transcripts-archive'],
    mainPath: workspace.mainPath,
    env: context.env,
    prefix: workspace.prefix,
    name,
  })
  const agentStores = await agentStoresOf(checkout, present, archive, context.env)
  const summary: RemovalSummary = {
    name,
    path: checkout,
    branch: worktree?.branch ?? null,
    registered: worktree !== undefined,
    present,
    locked: worktree?.locked ?? false,
    unsaved,
    outside,
    transcripts:
      transcriptFiles.length > 0
        ? {source: path.join(checkout, TRANSCRIPTS_DIR), archive, files: transcriptFiles.length}
        : null,
    agentStores,
    // A nested repository counts as one untracked path; it is archived on its own, not snapshotted.
    snapshot:
      unsaved !== null && unsaved.modified + unsaved.untracked - (outside?.nested.length ?? 0) + unsaved.detached > 0,
    stack: 'skipped' in teardown ? teardown : {backend: teardown.backend},
    pin: typeof pin === 'bigint' ? Number(pin) : null,
    pinByYard: pinAuthor(await fs.readFile(workspace.config.files.local, 'utf8').catch(() => ''), name) === 'yard',
    trust,
    machine: machine?.name ?? null,
  }
  // What would go, volumes included, is part of the plan shown before the confirmation, and of a
  // refusal: what --force would also delete.
  if (!('skipped' in teardown)) {
    try {
      summary.stack = {backend: teardown.backend, wouldRemove: await teardown.teardown(target, {dryRun: true})}
    } catch (error) {
      // The teardown itself reports (and --force goes past) a backend that fails; only --dry-run stops here.
      if (options.dryRun) throw error
    }
  }

  const refusal = options.force ? undefined : refusalOf(summary, options.deleteBranch ?? false)
  return {
    summary,
    refusal,
    workspace,
    target,
    teardown: 'skipped' in teardown ? undefined : teardown,
    ...(machine && {machine}),
  }
}

/**
 * The plan's stack step in one line (the CLI's plan and the dashboard's confirmation): the
 * backend, and the volumes its dry run says the nuke deletes, with their data. Volumes are shown,
 * never counted as unsaved work.
 */
export function describeStackStep(stack: RemovalSummary['stack']): string {
  if ('skipped' in stack) return `stack: skipped (${stack.skipped})`
  const step = `stack: box down, then nuke through ${stack.backend}`
  if (stack.wouldRemove === undefined) return step
  if (stack.wouldRemove.length === 0) return `${step}: nothing to remove`
  const volumes = stack.wouldRemove
    .filter((item) => item.startsWith('volume '))
    .map((item) => item.slice('volume '.length))
  return volumes.length === 0
    ? `${step}: no volumes`
    : `${step}: ${volumes.length === 1 ? 'volume' : 'volumes'} ${volumes.join(', ')} (data in them is lost)`
}

/** `; --force also deletes the volumes app-feat_data (their data is lost)`, when the teardown would delete volumes. */
function forceDeletes(stack: RemovalSummary['stack']): string {
  const volumes =
    'wouldRemove' in stack
      ? (stack.wouldRemove ?? [])
          .filter((item) => item.startsWith('volume '))
          .map((item) => item.slice('volume '.length))
      : []
  return volumes.length === 0
    ? ''
    : `; --force also deletes the ${volumes.length === 1 ? 'volume' : 'volumes'} ${volumes.join(', ')} (their data is lost)`
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`
}

/** The refusal for unsaved work or a lock (DESIGN.md §4.1), or undefined. */
function refusalOf(summary: RemovalSummary, deleteBranch: boolean): RefusedError | undefined {
  const {unsaved, outside, name} = summary
  const outsideWork = outside !== null && hasOutsideWork(outside)
  if (unsaved && (unsaved.modified + unsaved.untracked + unsaved.unpushed + unsaved.detached > 0 || outsideWork)) {
    const detached =
      unsaved.detached > 0 ? `, ${plural(unsaved.detached, 'commit')} on a detached HEAD that no branch holds` : ''
    const counts = `${plural(unsaved.modified, 'modified file')}, ${plural(unsaved.untracked, 'untracked file')}, ${plural(unsaved.unpushed, 'commit')} ${unsaved.against}${detached}${outside ? describeOutside(outside) : ''}`
    const kept = summary.branch
      ? ` and the branch ${summary.branch} is ${deleteBranch ? 'deleted (--delete-branch: it is merged into its base)' : 'kept'}`
      : unsaved.detached > 0
        ? ', the detached HEAD with them'
        : ''
    const archived = outsideWork
      ? '; submodules, nested repositories and kept ignored files are archived under <state dir>/removed/'
      : ''
    return new RefusedError(`worktree ${name} has unsaved work: ${counts}`, {
      why: 'removing the worktree would lose it',
      fix: `${summary.branch ? 'commit and push it' : 'put it on a branch (`git switch -c BRANCH`) and push it'}, or pass --force: uncommitted files are saved to refs/yard/removed/${name}-<stamp>${kept}${archived}${forceDeletes(summary.stack)}`,
    })
  }

  if (summary.locked) {
    return new RefusedError(`worktree ${name} is locked`, {
      why: 'someone locked it with `git worktree lock` (for example while its volume is unmounted)',
      fix: `\`git worktree unlock ${shellQuote(summary.path)}\`, or pass --force`,
    })
  }

  return undefined
}

/**
 * The transcripts of the checkout to archive (transcripts.ts listFiles); none, with a warning, when
 * `.yard` or `.yard/transcripts` is a symbolic link (transcriptsDir).
 */
async function transcriptFilesOf(context: YardContext, checkout: string, name: string): Promise<string[]> {
  const dir = await transcriptsDir(checkout)
  if (dir !== undefined) return listFiles(dir)
  context.warn(
    `warning: ${path.join(checkout, TRANSCRIPTS_DIR)} of worktree ${name} is reached through a symbolic link: its transcripts are not archived (the link goes with the worktree)`,
  )
  return []
}

/** Modified and untracked files, and commits that exist nowhere else (DESIGN.md §4.1). */
async function unsavedWork(
  context: YardContext,
  workspace: Workspace,
  checkout: string,
  worktree: GitWorktree,
  untrusted: boolean,
): Promise<UnsavedWork> {
  const [dirty, remotes, bases] = await Promise.all([
    dirtyCounts(context.runner, checkout, {untrusted: untrusted ? {commonDir: workspace.commonDir} : undefined}),
    listRemotes(context.runner, workspace.mainPath),
    worktree.branch === undefined
      ? new Map<string, string>()
      : branchConfig(context.runner, workspace.mainPath, BASE_KEY.toLowerCase()),
  ])
  let exclude: string[]
  let against: string
  if (remotes.length > 0) {
    exclude = ['--remotes']
    against = 'on no remote branch'
  } else {
    const base = worktree.branch === undefined ? undefined : bases.get(worktree.branch)
    // `--exclude` applies to the next `--branches`: every branch except the worktree's own.
    exclude = [...(base ? [base] : []), ...(worktree.branch ? [`--exclude=${worktree.branch}`] : []), '--branches']
    against = base ? 'on neither its base nor another branch' : 'on no other branch'
  }

  // An untrusted checkout's git goes through the repository's record of it (git-link.ts).
  const pinned = untrusted ? untrustedGit(workspace.commonDir, checkout) : []
  const counted = await context.runner.git([...pinned, 'rev-list', '--count', 'HEAD', '--not', ...exclude, '--'], {
    cwd: checkout,
    allowFailure: true,
  })
  // An unresolvable recorded base (deleted since) is left out rather than blocking the count.
  const fallback =
    counted.exitCode === 0
      ? counted
      : await context.runner.git(
          [...pinned, 'rev-list', '--count', 'HEAD', '--not', ...exclude.filter((arg) => arg.startsWith('--')), '--'],
          {cwd: checkout},
        )
  // On a branch HEAD is that branch's tip, which the kept branch holds.
  const detached =
    worktree.branch === undefined
      ? await context.runner.git([...pinned, 'rev-list', '--count', 'HEAD', '--not', '--branches', '--remotes', '--'], {
          cwd: checkout,
        })
      : undefined
  return {
    ...dirty,
    unpushed: Number(fallback.stdout.trim()),
    against,
    detached: detached ? Number(detached.stdout.trim()) : 0,
  }
}

/**
 * Carries out a plan (DESIGN.md §4.1 order). A step that fails stops the removal; what was done
 * stays done and the next call finishes the rest.
 * @throws the plan's refusal; RefusedError (exit 3) when the transcripts cannot be archived
 *   (without `force`: nothing has been changed then); OperationError (exit 1) when a backend or
 *   git fails, or when submodules, nested repositories or kept ignored files cannot be archived
 *   (nothing removed then).
 */
export async function executeRemoval(
  context: YardContext,
  plan: RemovalPlan,
  options: {force: boolean},
): Promise<RemovalResult> {
  if (plan.refusal) throw plan.refusal
  const {summary, workspace, target, teardown} = plan
  const {name, path: checkout} = summary
  const archiveOne = async (what: string, source: string, archive: string) => {
    try {
      // A part of the checkout is copied only while no directory on its way is a link (its box writes it).
      return await archiveTranscripts(source, archive, source.startsWith(checkout + path.sep) ? checkout : undefined)
    } catch (error) {
      const failed = `cannot archive the ${what} of ${name} to ${archive}: ${(error as Error).message}`
      if (!options.force) {
        throw new RefusedError(failed, {
          why: 'removing the worktree would lose its agent transcripts; nothing has been removed',
          fix: 'set YARD_TRANSCRIPTS_ARCHIVE or [worktrees] transcripts-archive to a writable directory, or pass --force to remove without archiving',
        })
      }

      context.warn(`warning: ${failed}; going on because of --force`)
      return undefined
    }
  }

  const copied = summary.transcripts
    ? await archiveOne('transcripts', summary.transcripts.source, summary.transcripts.archive)
    : undefined
  const archived: RemovalResult['archived'] =
    copied && summary.transcripts ? {archive: summary.transcripts.archive, ...copied} : null
  const archivedStores: RemovalResult['archivedStores'] = []
  for (const store of summary.agentStores) {
    const done = await archiveOne(
      store.agent === 'box' ? 'agent home' : `${store.agent} transcripts`,
      store.source,
      store.archive,
    )
    if (done) archivedStores.push({...store, ...done})
  }

  const nested = summary.outside?.nested ?? []
  // An untrusted worktree's submodules and nested repositories stay out of the snapshot (no git in them).
  const uninspected = summary.outside?.uninspected ?? []
  const changes = summary.unsaved !== null && summary.unsaved.modified + summary.unsaved.untracked - nested.length > 0
  const snapshot = summary.snapshot
    ? await snapshotWorktree(context, checkout, name, {
        changes,
        exclude: [...nested, ...uninspected],
        untrusted: summary.trust === 'untrusted' ? {commonDir: workspace.commonDir} : undefined,
      })
    : undefined
  const savedIn = removalArchiveDir(
    context.env,
    workspace.prefix,
    snapshot ? snapshot.slice(REMOVED_REFS.length + 1) : `${name}-${utcStamp(new Date())}`,
  )
  const saved =
    summary.outside && hasOutsideWork(summary.outside)
      ? {dir: savedIn, parts: await saveOutsideWork(context, name, checkout, summary.outside, savedIn)}
      : null
  const stack: RemovalResult['stack'] = teardown
    ? await tearDown(context, teardown, target, summary, options.force)
    : {skipped: 'skipped' in summary.stack ? summary.stack.skipped : 'no stack backend'}
  if (summary.registered) {
    const force = summary.locked ? ['--force', '--force'] : ['--force']
    await context.runner.git(['worktree', 'remove', ...force, checkout], {cwd: workspace.mainPath})
  }

  // Its own machine goes after the worktree (the teardown ran inside it), before the record that names it.
  if (plan.machine) await plan.machine.remove()
  const purpose = `worktree remove ${name}`
  const pin = summary.pin === null ? 'absent' : await releasePin(context, workspace, name, purpose)
  if (summary.trust === 'untrusted') {
    await withOffsetsLock(context, workspace, purpose, async () =>
      writeTrust(workspace.config.files.local, name, 'trusted'),
    )
    await recordUntrustedCheckout(
      context.env,
      {checkout, commonDir: workspace.commonDir, mainPath: workspace.mainPath},
      false,
    )
  }

  return {
    name,
    path: checkout,
    branch: summary.branch,
    archived,
    archivedStores,
    saved,
    restore: restoreOf(summary, snapshot, changes, [
      ...(saved?.parts ?? []),
      ...agentHomePart(archivedStores.find((store) => store.agent === 'box')?.archive, checkout),
    ]),
    snapshot: snapshot
      ? {
          ref: snapshot,
          holds: snapshotHolds(changes, summary.unsaved?.detached ?? 0),
          restore: restoreHint(snapshot, name, summary.branch, checkout, changes),
        }
      : null,
    stack,
    unregistered: summary.registered,
    pinRemoved: pin === 'removed',
    pinKept: pin === 'kept',
    machineRemoved: plan.machine?.name ?? null,
    trustRemoved: summary.trust === 'untrusted',
  }
}

/** The one restore command (`restoreSequence`), or null when nothing was saved. */
function restoreOf(
  summary: RemovalSummary,
  snapshot: string | undefined,
  changes: boolean,
  parts: ArchivedPart[],
): string | null {
  if (!snapshot && parts.length === 0) return null
  const hint = snapshot
    ? restoreHint(snapshot, summary.name, summary.branch, summary.path, changes)
    : formatArgv(['yard', 'worktree', 'add', summary.name, ...(summary.branch ? [summary.branch] : [])])
  return restoreSequence(hint, parts)
}

function snapshotHolds(changes: boolean, detached: number): string {
  const head = detached > 0 ? `the detached HEAD (${plural(detached, 'commit')} on no branch)` : ''
  return changes ? (head ? `uncommitted work and ${head}` : 'uncommitted work') : head
}

/**
 * Box down and stack nuke. A failure stops the removal with the worktree kept and says how to
 * finish; with `force` it is a warning and the stack is left for `yard nuke`.
 */
async function tearDown(
  context: YardContext,
  teardown: StackTeardown,
  target: Target,
  summary: RemovalSummary,
  force: boolean,
): Promise<{backend: string; removed: string[]; failed?: string}> {
  try {
    return {backend: teardown.backend, removed: await teardown.teardown(target, {dryRun: false})}
  } catch (error) {
    const what = `the stack teardown of worktree ${summary.name} (${teardown.backend}) failed: ${(error as Error).message}`
    if (force) {
      context.warn(
        `warning: ${what}; going on because of --force: the stack stays until \`yard nuke --worktree ${summary.name}\``,
      )
      return {backend: teardown.backend, removed: [], failed: (error as Error).message}
    }

    const yardError = error instanceof YardError ? error : undefined
    throw new YardError(yardError?.code ?? ExitCode.failed, what, {
      why: yardError?.why ?? 'the stack backend could not remove the box or the stack',
      fix: `${yardError?.fix ? `${yardError.fix}; then ` : ''}run \`yard worktree remove ${summary.name}\` again: the worktree${summary.snapshot ? ' and its snapshot are' : ' is'} kept, and the remove finishes where it stopped (--force removes it and leaves the stack)`,
      cause: error,
    })
  }
}
