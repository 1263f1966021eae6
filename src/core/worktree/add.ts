/**
 * `yard worktree add` (DESIGN.md §4.1, §3.4): a worktree at `<root>/<name>` on the right branch,
 * forked from the right base, with an offset that clashes with no other worktree or sandbox.
 *
 * Order: names checked → the base's remote fetched (a failure warns) → under the project's
 * offsets lock: refs and worktrees read at once, branch and base decided, then `git worktree add`
 * while the known offsets (worktrees, pins, sandboxes) are read and a clashing newcomer is
 * pinned, the base recorded → lock released → the project's machine made ready (a warning at
 * worst). When either side fails, the worktree, the branch and the pin it brought are rolled
 * back, so nothing is left behind.
 */
import {existsSync, promises as fs, realpathSync} from 'node:fs'
import path from 'node:path'

import type {OffsetSource} from '../../sdk/target.js'
import type {YardContext} from '../kernel/context.js'
import type {WorktreeBackends} from './backends.js'

import {InputError, OperationError} from '../../sdk/errors.js'
import {gitProgressListener} from '../../sdk/progress.js'
import {shellQuote} from '../../sdk/shell.js'
import {configCachePath, loadConfig} from '../config/config.js'
import {nameFromBranch, validateName} from '../identity/identity.js'
import {allocateOffset, notePin, type OffsetAllocation, undoPin, withOffsetsLock} from '../identity/offset-allocator.js'
import {checkPinFile, excludePinFile, restorePinFile} from '../identity/pins.js'
import {holdingInterrupts, type Interrupt, InterruptedError} from '../kernel/interrupt.js'
import {worktreeMachineName} from '../machine/machine.js'
import {isBareLayout} from '../workspace/bare-layout.js'
import {
  ensureFetchRefspec,
  invalidBranchName,
  listRemotes,
  readRefs,
  type RefEntry,
  validBranchName,
} from '../workspace/git.js'
import {copyIgnoredFiles, ignoredMatching} from '../workspace/ignored-files.js'
import {readRefFiles} from '../workspace/ref-files.js'
import {recordUntrustedCheckout} from '../workspace/untrusted-checkouts.js'
import {type GitWorktree, gitWorktrees, openWorkspace, type Workspace, worktreePath} from '../workspace/workspace.js'
import {
  type Base,
  baseRemote,
  type BaseSource,
  checkBranchRequest,
  checkNotOption,
  configuredBase,
  DEFAULT_BASES,
  ORIGIN_HEAD,
  resolveBase,
} from './base.js'
import {checkOutSparse, fetchMissingObjects, gitCopiesSparse, NO_MAINTENANCE, readCheckoutConfig} from './checkout.js'
import {gitFailure} from './git-failure.js'
import {addJournalPath, pinValue, recoverInterruptedAdd, removeAddJournal, writeAddJournal} from './journal.js'
import {initSubmodules, type SubmoduleOutcome} from './submodules.js'
import {type Trust, type TrustWrite, writeTrust} from './trust-record.js'

/** How long `git fetch` of the base's remote may take before yard goes on without it. */
export const FETCH_BUDGET_MS = 120_000

export interface AddOptions {
  /** NAME; derived from `branch` (DESIGN.md §3.1) when absent. */
  name?: string
  /** BRANCH; default `wt/<name>`. */
  branch?: string
  /** `--from REF`: the base of a new branch (must resolve). */
  from?: string
  /** Fetch the base's remote first (`--no-fetch` turns it off). */
  fetch: boolean
  /** Initialise the submodules main has checked out (`--no-submodules` turns it off). */
  submodules?: boolean
  /** `--untrusted`: record it so in yard.local.toml; its stack and box get a machine of their own. */
  untrusted?: boolean
  backends: WorktreeBackends
}

/** How the branch came to be: created from the base, checked out as it was, or created tracking `origin/<branch>`. */
export type BranchSource = 'new' | 'existing' | 'remote'

export interface AddResult {
  name: string
  path: string
  branch: string
  branchSource: BranchSource
  /** The branch's upstream (`origin/x` for `remote`); null for new branches, which get none. */
  upstream: string | null
  /** The base of a new branch, as recorded in `branch.<branch>.yardBase`; null otherwise. */
  base: {ref: string; commit: string; source: BaseSource} | null
  /** The remote fetched first, or null (none, `--no-fetch`, or the fetch failed). */
  fetched: string | null
  offset: number
  offsetSource: OffsetSource
  /** Set when yard pinned the offset: the names (worktrees, sandboxes) the hash offset clashed with. */
  pinned: {hashOffset: number; clashedWith: string[]} | null
  /** Gitignored files of the main checkout copied in (`[worktrees] copy`), relative. */
  copied: string[]
  /** Submodule paths checked out in the worktree (nested ones as `lib/nested`), and those that failed (warned). */
  submodules: {initialised: string[]; failed: string[]}
  /** As recorded in yard.local.toml (`[worktrees.NAME] trust`); untrusted runs on `machine`. */
  trust: Trust
  /** The machine its stack and box run on (an untrusted worktree's own is created on its first `up`). */
  machine: string
  /** `[machine] backend`: `native` runs everything on the host's podman, with no machine of its own. */
  machineBackend: string
}

/** The name and branch of a request: NAME [BRANCH], or `--branch BRANCH` alone (DESIGN.md §3.1, §4.1). */
function nameAndBranch(options: AddOptions): {name: string; branch: string} {
  if (options.name === undefined && options.branch === undefined) {
    throw new InputError('worktree add needs a NAME or --branch BRANCH', {
      fix: 'run `yard worktree add NAME` or `yard worktree add --branch BRANCH`',
    })
  }

  const name = validateName(options.name ?? nameFromBranch(options.branch!), 'worktree name')
  const branch = options.branch ?? `wt/${name}`
  checkNotOption(branch, 'branch', 'choose a branch name that does not start with "-"')
  if (options.from !== undefined) checkNotOption(options.from, '--from', 'name the base without a leading "-"')
  return {name, branch}
}

/**
 * Creates the worktree NAME (DESIGN.md §4.1).
 * @throws InputError (exit 2) for an invalid name or branch, an unresolvable `--from`, a name
 *   already used by a worktree, a branch checked out elsewhere, a target path that already holds
 *   something, or a pin file whose layout yard cannot edit — before anything is created.
 * @throws OperationError (exit 1) when `git worktree add` fails; what it had created is rolled back.
 */
export async function addWorktree(context: YardContext, options: AddOptions): Promise<AddResult> {
  const {name, branch} = nameAndBranch(options)
  const workspace = await openWorkspace(context)
  const {mainPath} = workspace
  const target = worktreePath(workspace, name)
  const configured = configuredBase(workspace.config)

  // What a fetch cannot change is refused before its network round trip (and again under the lock),
  // unless an earlier add of this name left a journal: what it made is rolled back first, below.
  if (options.fetch && !existsSync(addJournalPath(workspace.commonDir, name)))
    await refuseBeforeFetch(context, workspace, {name, branch, target})
  const fetched = options.fetch ? await fetchBaseRemote(context, mainPath, options.from, configured?.ref) : null
  // Ctrl-C or kill during the add (DESIGN.md §4.1): once the journal is written the signal is held,
  // git's checkout is ended, and the add undoes what it made (as for a failed checkout), exit 130;
  // the handlers stay until the offsets lock is released.
  const placed = await holdingInterrupts(`yard worktree add ${name}`, context.warn, async (interrupt) =>
    withOffsetsLock(context, workspace, `worktree add ${name}`, async () => {
      // An add of this name killed half-way is undone first (its journal says what it made).
      const undone = await recoverInterruptedAdd(context, workspace, name)
      if (undone.length > 0)
        context.warn(
          `note: an earlier \`yard worktree add ${name}\` was stopped half-way; rolled back: ${undone.join('; ')}`,
        )
      // Everything is read under the lock (another add may have written a pin meanwhile): the refs
      // the branch and base depend on, the worktrees, then the sandboxes and pins.
      const fresh: Workspace = {
        ...workspace,
        config: await loadConfig({
          mainPath,
          env: context.env,
          cache: configCachePath(context.env, workspace.commonDir),
        }),
      }
      const localRef = `refs/heads/${branch}`
      const remoteRef = `refs/remotes/origin/${branch}`
      const validBranch = validBranchName(branch)
      const wantedRefs = [localRef, remoteRef, `refs/remotes/${branch}`, ORIGIN_HEAD, ...DEFAULT_BASES]
      const [refs, worktrees, gitConfig] = await Promise.all([
        refsOf(context, workspace, wantedRefs),
        gitWorktrees(fresh, context),
        readCheckoutConfig(context, mainPath),
      ])
      const {remotes} = gitConfig
      // `<remote>/HEAD` is the remote's default-branch symref even before `git remote set-head` made it.
      const remoteTracking = refs.has(`refs/remotes/${branch}`) || remotes.some((remote) => branch === `${remote}/HEAD`)
      checkBranchRequest(branch, name, {valid: validBranch, local: refs.has(localRef), remoteTracking})
      const branchSource: BranchSource = refs.has(localRef) ? 'existing' : refs.has(remoteRef) ? 'remote' : 'new'
      const base = await decideBase(context, fresh, {branch, branchSource, validBranch, from: options.from, refs})
      checkConflicts(worktrees, {name, branch, target, branchSource})
      await checkTargetFree(target, name)
      await checkPinFile(fresh.config.files.local, name)
      // The checkout (the slow part) runs while the offset is decided (sandbox backends asked, pin
      // written): both end before the lock is released, so no other add decides in between.
      const pinFile = fresh.config.files.local
      // Recorded before the checkout, and before the pin (the same file): an untrusted worktree never
      // exists as a trusted one.
      const trustWrite = options.untrusted ? await writeTrust(pinFile, name, 'untrusted') : undefined
      // A partial clone's missing blobs are fetched (or their absence reported) before anything is made.
      const startCommit = base?.commit ?? refs.get(branchSource === 'remote' ? remoteRef : localRef)?.oid
      if (startCommit !== undefined) await fetchMissingObjects(context, mainPath, startCommit, gitConfig)
      // The journal and the base go before the checkout: a kill during it leaves both (DESIGN.md §4.1).
      interrupt.arm()
      await writeAddJournal(workspace.commonDir, {
        name,
        target,
        branch,
        branchSource,
        commit: base?.commit ?? refs.get(remoteRef)?.oid,
        pinBefore: pinValue(fresh.config.pins[name]),
      }).catch(async (error: NodeJS.ErrnoException) => {
        // Nothing is made yet but the trust record: it goes too.
        if (trustWrite) await restorePinFile(pinFile, trustWrite.text).catch(() => undefined)
        const journal = addJournalPath(workspace.commonDir, name)
        throw new OperationError(`could not write ${journal}: ${error.code ?? error.message}`, {
          why: 'yard records what an add is about to make before it makes anything, so that a killed add can be rolled back; nothing was made',
          fix: `make ${shellQuote(path.dirname(journal))} writable by you (ls -ld it), then run the add again`,
        })
      })
      if (base)
        await context.runner
          .git(['config', `branch.${branch}.yardBase`, base.recorded], {cwd: mainPath})
          .catch(async (error: unknown) => {
            // Still nothing made (git config changes nothing when it fails): the record and the journal go.
            if (trustWrite) await restorePinFile(pinFile, trustWrite.text).catch(() => undefined)
            await removeAddJournal(workspace.commonDir, name)
            throw error
          })
      // The checkout (git's longest step) starts first; the rest runs beside it.
      const submodules = options.submodules !== false && existsSync(path.join(workspace.commonDir, 'modules'))
      const checkingOut = gitWorktreeAdd(context, workspace, {
        target,
        branch,
        branchSource,
        base,
        submodules,
        sparse: gitConfig.sparse,
      })
      // Main's files to copy are listed while git checks out (main's walk, ~20 ms on 20,000 files):
      // the list is read-only, and a failure of it still fails the add after the checkout, as before.
      const listing = ignoredMatching(context.runner, mainPath, workspace.config.worktrees.copy)
      listing.catch(() => undefined)
      // The sandboxes (an engine or API call, the slowest read) are asked now, beside the checkout:
      // asked beside git's reads above, loading the runtime and starting podman held those up by
      // ~35 ms of the main thread, and an add refused before here asks for nothing.
      const sandboxes = options.backends.sandboxes(fresh)
      sandboxes.catch(() => undefined)
      const deciding = allocateOffset(context, fresh, {
        name,
        kind: 'worktree',
        worktrees,
        sandboxes: async () => sandboxes,
      })
      const [added, decided] = await Promise.allSettled([checkingOut, deciding])
      // A signal during the checkout (git ended by it, or finished first) undoes it too.
      const stopped = checkpoint(interrupt)
      if (added.status === 'rejected' || decided.status === 'rejected' || stopped) {
        const allocation = decided.status === 'fulfilled' ? decided.value : undefined
        await rollBack(context, fresh, {
          target,
          branch,
          branchSource,
          base,
          pinFile,
          name,
          allocation,
          trustedOver: trustWrite,
        })
        await removeAddJournal(workspace.commonDir, name)
        if (stopped) throw stopped
        // eslint-disable-next-line @typescript-eslint/only-throw-error -- rethrows the rejection as it came
        throw added.status === 'rejected' ? added.reason : (decided as PromiseRejectedResult).reason
      }

      await removeAddJournal(workspace.commonDir, name)
      return {
        allocation: decided.value,
        branchSource,
        base,
        submodules: added.value,
        listing,
        trust:
          options.untrusted || fresh.config.trust[name] === 'untrusted' ? ('untrusted' as const) : ('trusted' as const),
      }
    }),
  )

  const {allocation, branchSource, base, submodules, listing, trust} = placed
  if (workspace.config.worktrees.copy.length > 0) context.progress?.step('copying ignored files from main')
  const copied = await copyIgnoredFiles(context, mainPath, target, await listing)
  context.progress?.done()
  // An untrusted worktree's machine is its own, made on its first `up` (the shared one may have to stop for it).
  if (trust === 'untrusted') {
    await recordUntrustedCheckout(
      context.env,
      {checkout: realpathSync(target), commonDir: workspace.commonDir, mainPath},
      true,
    )
    if (!options.untrusted)
      context.warn(
        `note: ${workspace.config.files.local} records ${name} as untrusted (from before), so it stays untrusted: \`yard worktree trust ${name} --trusted\` changes that`,
      )
  } else await options.backends.machineReady(workspace)
  if (options.untrusted && allocation.pin === undefined) await excludePinFile(context, workspace)
  await notePin(context, workspace, allocation)
  return {
    name,
    path: target,
    branch,
    branchSource,
    upstream: branchSource === 'remote' ? `origin/${branch}` : null,
    base: base ? {ref: base.ref, commit: base.commit, source: base.source} : null,
    fetched,
    offset: allocation.offset,
    offsetSource: allocation.offsetSource,
    pinned:
      allocation.pin !== undefined && allocation.clashedWith.length > 0
        ? {hashOffset: allocation.hashOffset, clashedWith: allocation.clashedWith}
        : null,
    copied,
    submodules,
    trust,
    machine: trust === 'untrusted' ? worktreeMachineName(workspace.prefix, name) : workspace.config.machine.name,
    machineBackend: workspace.config.machine.backend,
  }
}

/** The InterruptedError a checkpoint throws once a signal came, else undefined. */
function checkpoint(interrupt: Interrupt): InterruptedError | undefined {
  try {
    interrupt.check()
    return undefined
  } catch (error) {
    if (error instanceof InterruptedError) return error
    throw error
  }
}

/**
 * The base of a new branch (DESIGN.md §4.1), undefined for an existing or remote-tracking one
 * (with a note when `--from` is thereby ignored).
 * @throws InputError (exit 2) for an invalid new branch name or an unresolvable `--from`.
 */
async function decideBase(
  context: YardContext,
  workspace: Workspace,
  request: {
    branch: string
    branchSource: BranchSource
    validBranch: boolean
    from?: string
    refs: Map<string, RefEntry>
  },
): Promise<Base | undefined> {
  const {branch, branchSource, from} = request
  if (branchSource !== 'new') {
    if (from !== undefined)
      context.warn(
        `note: --from ${from} was ignored: ${branchSource === 'existing' ? `branch ${branch} exists and is checked out as it is` : `origin/${branch} exists, so ${branch} is created tracking it`}`,
      )
    return undefined
  }

  if (!request.validBranch) throw invalidBranchName(branch)
  const base = await resolveBase(context, {
    mainPath: workspace.mainPath,
    from,
    config: workspace.config,
    refs: request.refs,
  })
  if (base.source === 'default-branch' && !base.recorded.startsWith('refs/remotes/'))
    context.warn(`note: no origin/HEAD or origin/main: forking from the local ${base.ref}`)
  return base
}

/**
 * Fetches the base's remote (DESIGN.md §4.1). A failure warns and goes on.
 * @returns the remote fetched, or null.
 */
async function fetchBaseRemote(
  context: YardContext,
  mainPath: string,
  from: string | undefined,
  configured: string | undefined,
): Promise<string | null> {
  const remote = baseRemote(from, configured, await listRemotes(context.runner, mainPath))
  if (remote === undefined) return null
  const refspec = isBareLayout(mainPath) ? await ensureFetchRefspec(context.runner, mainPath, remote) : undefined
  if (refspec !== undefined)
    context.warn(
      `note: remote ${remote} had no fetch refspec (a bare clone has none); added ${refspec} so that git fetch updates ${remote}/*`,
    )
  context.progress?.step(`fetching ${remote}`)
  const progress = context.progress
    ? {args: ['--progress'], options: {onStderr: gitProgressListener(context.progress)}}
    : {args: [], options: {}}
  const result = await context.runner.git(['fetch', '--quiet', ...progress.args, remote], {
    cwd: mainPath,
    allowFailure: true,
    timeoutMs: FETCH_BUDGET_MS,
    budget: 'fetch',
    ...progress.options,
  })
  if (result.exitCode === 0) return remote
  const why = result.timedOut
    ? `it took longer than ${FETCH_BUDGET_MS / 1000} s`
    : gitFailure(result.stderr) || `exit code ${result.exitCode}`
  context.warn(`warning: git fetch ${remote} failed (${why}); going on with the refs fetched before`)
  return null
}

/**
 * Refuses a target path that already holds something (a file, a symlink, a non-empty
 * directory): `git worktree add` would fail there half-way. An empty directory is fine.
 * @throws InputError (exit 2) naming the path, before anything is created.
 */
async function checkTargetFree(target: string, name: string): Promise<void> {
  const stats = await fs.lstat(target).catch(() => undefined)
  if (stats === undefined) return
  const kind = stats.isDirectory()
    ? (await fs.readdir(target)).length === 0
      ? undefined
      : 'a non-empty directory'
    : stats.isSymbolicLink()
      ? 'a symlink'
      : stats.isFile()
        ? 'a file'
        : 'a special file'
  if (kind === undefined) return
  throw new InputError(`cannot create worktree ${name}: ${target} already exists and is ${kind}`, {
    why: 'git creates a worktree in a new or empty directory, and yard does not move what is there',
    fix: `move ${target} out of the way (or remove it), or choose another name`,
  })
}

/** `refs` of the main checkout: from the files where they answer as git would (no process), else one for-each-ref. */
async function refsOf(context: YardContext, workspace: Workspace, refs: string[]) {
  return readRefFiles(workspace.commonDir, refs) ?? readRefs(context.runner, workspace.mainPath, refs)
}

/**
 * The refusals of an add that no fetch can change, made before it fetches: a worktree of that
 * name (or a non-empty directory at its path), and a local branch checked out in another
 * worktree. The add checks them again under the offsets lock, where another add may have run.
 * @throws InputError (exit 2) as checkConflicts and checkTargetFree do.
 */
async function refuseBeforeFetch(
  context: YardContext,
  workspace: Workspace,
  request: {name: string; branch: string; target: string},
): Promise<void> {
  const localRef = `refs/heads/${request.branch}`
  const [refs, worktrees] = await Promise.all([
    refsOf(context, workspace, [localRef]),
    gitWorktrees(workspace, context),
  ])
  checkConflicts(worktrees, {...request, branchSource: refs.has(localRef) ? 'existing' : 'new'})
  await checkTargetFree(request.target, request.name)
}

function checkConflicts(
  worktrees: GitWorktree[],
  request: {name: string; branch: string; target: string; branchSource: BranchSource},
): void {
  const same = worktrees.find((worktree) => path.resolve(worktree.path) === request.target)
  if (same) {
    throw new InputError(`worktree ${request.name} already exists at ${request.target}`, {
      why: 'each name has one worktree',
      fix: `use it (cd ${shellQuote(request.target)}), choose another name, or remove it first with \`yard worktree remove ${request.name}\``,
    })
  }

  const holder =
    request.branchSource === 'existing' ? worktrees.find((worktree) => worktree.branch === request.branch) : undefined
  if (holder) {
    throw new InputError(`branch ${request.branch} is already checked out at ${holder.path}`, {
      why: 'git checks a branch out in one worktree at a time',
      fix: `use that checkout, or pass another branch: \`yard worktree add ${request.name} OTHER-BRANCH\``,
    })
  }
}

/**
 * `git worktree add`, then what the checkout needs on real repositories (worktree-checkout.ts,
 * worktree-submodules.ts): main's sparse patterns before the files are written, and the
 * submodules main has checked out. While those run the worktree stays locked, as git keeps it
 * during its own checkout, so an add killed meanwhile is rolled back by the next one (its journal
 * takes a locked worktree for one still being made).
 */
async function gitWorktreeAdd(
  context: YardContext,
  workspace: Workspace,
  request: {
    target: string
    branch: string
    branchSource: BranchSource
    base?: Base
    submodules: boolean
    sparse?: {cone: boolean}
  },
): Promise<SubmoduleOutcome> {
  const {target, branch, branchSource, base, sparse} = request
  const {mainPath} = workspace
  // A sparse main: only the sparse set is written. git ≥ 2.36 gives the worktree main's patterns
  // before its own checkout (one step, as a full add); older gits check out after yard gave them.
  const deferred = sparse !== undefined && !(await gitCopiesSparse(context)) ? sparse : undefined
  const more = deferred !== undefined || request.submodules
  const add = ['worktree', 'add', '--quiet', ...(deferred ? ['--no-checkout'] : []), ...(more ? ['--lock'] : [])]
  // `worktree add` takes no `--`: branch and base were checked not to start with `-`; target is absolute.
  const args =
    branchSource === 'existing'
      ? [...add, target, branch]
      : branchSource === 'remote'
        ? [...add, '--track', '-b', branch, target, `origin/${branch}`]
        : [...add, '--no-track', '-b', branch, target, base!.commit]
  // git worktree add has no --progress: its checkout reports only to a terminal of its own.
  context.progress?.step(`checking out ${branch} in ${target}`)
  // A lazy fetch of a partial clone during the checkout must not start a gc.
  await context.runner.git([...NO_MAINTENANCE, ...args], {cwd: mainPath})
  if (deferred) await checkOutSparse(context, mainPath, target, deferred)
  const outcome = request.submodules
    ? await initSubmodules(context, target, path.join(workspace.commonDir, 'modules'))
    : {initialised: [], failed: []}
  if (more) await context.runner.git(['worktree', 'unlock', target], {cwd: mainPath})
  return outcome
}

/**
 * Undoes what a failed `git worktree add` left: the branch it created (only while it still points
 * where it was created), git's registration of the path, and the pin this call wrote.
 */
async function rollBack(
  context: YardContext,
  workspace: Workspace,
  state: {
    target: string
    branch: string
    branchSource: BranchSource
    base?: Base
    pinFile: string
    name: string
    allocation?: OffsetAllocation
    trustedOver?: TrustWrite
  },
): Promise<void> {
  const {mainPath} = workspace
  const undone: string[] = []
  // The worktree first: a branch checked out in a worktree is not deleted from under it.
  const registered = (await gitWorktrees(workspace, context)).some(
    (worktree) => path.resolve(worktree.path) === state.target,
  )
  if (registered) {
    // Twice: the worktree may still be locked for its sparse checkout or its submodules.
    await context.runner.git(['worktree', 'remove', '--force', '--force', state.target], {
      cwd: mainPath,
      allowFailure: true,
    })
    undone.push(`removed ${state.target}`)
  }

  if (state.branchSource !== 'existing') {
    const ref = `refs/heads/${state.branch}`
    const created = await readRefs(context.runner, mainPath, [ref, `refs/remotes/origin/${state.branch}`])
    const expected =
      state.branchSource === 'new' ? state.base!.commit : created.get(`refs/remotes/origin/${state.branch}`)?.oid
    let gone = !created.has(ref)
    if (created.has(ref) && expected !== undefined) {
      const deleted = await context.runner.git(['update-ref', '-d', ref, expected], {cwd: mainPath, allowFailure: true})
      if (deleted.exitCode === 0) undone.push(`deleted branch ${state.branch}`)
      gone = deleted.exitCode === 0
      if (state.branchSource === 'remote')
        await context.runner.git(['config', '--remove-section', `branch.${state.branch}`], {
          cwd: mainPath,
          allowFailure: true,
        })
    }

    // The base was recorded before the checkout; it goes with the branch.
    if (state.branchSource === 'new' && gone)
      await context.runner.git(['config', '--unset', `branch.${state.branch}.yardBase`], {
        cwd: mainPath,
        allowFailure: true,
      })
  }

  await undoPin(workspace, state.allocation).then(
    (what) => what && undone.push(what),
    (error: Error) =>
      context.warn(`warning: could not undo the pin of ${state.name} in ${state.pinFile}: ${error.message}`),
  )
  if (state.trustedOver) {
    // After the pin's: the trust record was written first, so its text is the older one.
    await restorePinFile(state.pinFile, state.trustedOver.text).then(
      () => undone.push(`deleted the untrusted record of ${state.name}`),
      (error: Error) =>
        context.warn(
          `warning: could not undo the untrusted record of ${state.name} in ${state.pinFile}: ${error.message}`,
        ),
    )
  }

  if (undone.length > 0) context.warn(`rolled back: ${undone.join('; ')}`)
}
