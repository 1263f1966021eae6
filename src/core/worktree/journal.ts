/**
 * The journal of a `worktree add` in flight (DESIGN.md §4.1): `<git common dir>/yard/adding/<name>.json`,
 * written under the offsets lock before `git worktree add` and removed when the add is complete
 * or rolled back. A journal found by the next add of that name (which holds the same lock, so its
 * writer is gone) means the process was killed half-way — git's checkout of thousands of files
 * cut short, an empty index, the `initializing` lock left in `.git/worktrees/<id>` — and what it
 * made is rolled back before the add starts again, so the rerun leaves the state a clean run leaves.
 */
import {existsSync, promises as fs} from 'node:fs'
import path from 'node:path'
import {setTimeout as delay} from 'node:timers/promises'

import type {YardContext} from '../kernel/context.js'
import type {Workspace} from '../workspace/workspace.js'

import {OperationError, RefusedError, YardError} from '../../sdk/errors.js'
import {groupRuns, ownGroup} from '../../sdk/process-group.js'
import {shellQuote} from '../../sdk/shell.js'
import {configCachePath, loadConfig} from '../config/config.js'
import {OFFSET_SLOTS} from '../identity/identity.js'
import {writePin} from '../identity/pins.js'
import {atomicWrite} from '../kernel/atomic-write.js'
import {readRegularFile} from '../kernel/kept-file.js'
import {readRefs} from '../workspace/git.js'
import {gitWorktrees, worktreePath} from '../workspace/workspace.js'

/** What an add is about to make, enough to undo it. */
export interface AddJournal {
  name: string
  /** The worktree's absolute path (absent or an empty directory when the journal was written). */
  target: string
  branch: string
  /** `new` and `remote`: the add creates the branch, at `commit`; `existing`: it only checks it out. */
  branchSource: 'new' | 'existing' | 'remote'
  /** The commit a created branch starts at (the base, or `origin/<branch>`). */
  commit?: string
  /** The name's pin before the add (null: none), put back on rollback. */
  pinBefore: number | null
  pid: number
  /** yard's process group, which its git shares (its pid where the system does not say). */
  group?: number
  started: string
}

/** `<common dir>/yard/adding/<name>.json`. */
export function addJournalPath(commonDir: string, name: string): string {
  return path.join(commonDir, 'yard', 'adding', `${name}.json`)
}

/** Writes the journal (atomically) before anything of the add is made. */
export async function writeAddJournal(
  commonDir: string,
  journal: Omit<AddJournal, 'group' | 'pid' | 'started'>,
): Promise<void> {
  const file = addJournalPath(commonDir, journal.name)
  await fs.mkdir(path.dirname(file), {recursive: true})
  // Never through a link planted at its name: the record replaces whatever is there.
  await atomicWrite(
    file,
    JSON.stringify({...journal, pid: process.pid, group: ownGroup(), started: new Date().toISOString()}, null, 2) +
      '\n',
    {followLinks: false},
  )
}

/** Removes the journal: the add is complete, or undone. */
export async function removeAddJournal(commonDir: string, name: string): Promise<void> {
  await fs.rm(addJournalPath(commonDir, name), {force: true})
}

/** A journal yard would have written for an add of `name` at `target`, else why it is not one. */
function checkJournal(value: unknown, name: string, target: string): AddJournal | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'it is no JSON object'
  const journal = value as Partial<Record<keyof AddJournal, unknown>>
  if (journal.name !== name) return `it names the worktree ${JSON.stringify(journal.name)}`
  // Byte for byte: a path that only resolves to the target (`…/x/..` through a link) is not one.
  if (journal.target !== target) return `it names ${JSON.stringify(journal.target)}, not ${target}`
  if (typeof journal.branch !== 'string' || journal.branch === '' || journal.branch.startsWith('-'))
    return `its branch ${JSON.stringify(journal.branch)} is no branch name`
  if (journal.branchSource !== 'new' && journal.branchSource !== 'existing' && journal.branchSource !== 'remote')
    return `its branchSource ${JSON.stringify(journal.branchSource)} is not new, existing or remote`
  if (journal.commit !== undefined && (typeof journal.commit !== 'string' || !OBJECT_ID.test(journal.commit)))
    return `its commit ${JSON.stringify(journal.commit)} is no object id`
  const pin = journal.pinBefore
  if (pin !== null && !(Number.isInteger(pin) && (pin as number) >= 1 && (pin as number) <= OFFSET_SLOTS))
    return `its pinBefore ${typeof pin === 'number' ? String(pin) : JSON.stringify(pin)} is neither null nor an offset (1 to ${OFFSET_SLOTS})`
  return journal as AddJournal
}

const OBJECT_ID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/
/** A journal is a few hundred bytes; a larger file is not one. */
const MAX_JOURNAL_BYTES = 64 * 1024

/**
 * The journal of an add of `name` at `target`, undefined when there is none.
 * @throws RefusedError (exit 3) when the file is there but is not a journal yard wrote for that
 *   add (unreadable, not JSON, another name or path, a value out of its range): nothing is undone.
 */
function readJournal(commonDir: string, name: string, target: string): AddJournal | undefined {
  const file = addJournalPath(commonDir, name)
  // Without blocking: a FIFO at its name must not hang the add, which holds the offsets lock.
  const read = readRegularFile(file, MAX_JOURNAL_BYTES)
  if (!('text' in read)) return read.problem === 'absent' ? undefined : refuseJournal(file, name, read.problem)
  const {text} = read

  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return refuseJournal(file, name, 'it is not JSON')
  }

  const checked = checkJournal(parsed, name, target)
  return typeof checked === 'string' ? refuseJournal(file, name, checked) : checked
}

function refuseJournal(file: string, name: string, problem: string): never {
  throw new RefusedError(
    `the record of an interrupted \`yard worktree add ${name}\` is not one yard wrote: ${problem}`,
    {
      why: 'yard rolls back only what an add of that name made, as its own record says; it undoes nothing from this one',
      fix: `look at ${shellQuote(file)}, then delete it and run the add again`,
    },
  )
}

/**
 * git's administrative directories of worktrees at `target`: `<common dir>/worktrees/<id>` whose
 * `gitdir` names `<target>/.git`, or — killed before git wrote it — whose id is the target's
 * basename (git's choice, with a number appended when taken) and whose `gitdir` is absent or
 * empty. git's `write_file` creates the file and then writes it (builtin/worktree.c
 * `add_worktree`), so a kill between the two leaves it empty.
 */
async function adminDirs(commonDir: string, target: string): Promise<string[]> {
  const root = path.join(commonDir, 'worktrees')
  const ids = await fs.readdir(root).catch(() => [] as string[])
  const base = path.basename(target)
  const found: string[] = []
  for (const id of ids) {
    const read = readRegularFile(path.join(root, id, 'gitdir'), 4096)
    const gitdir = 'text' in read ? read.text : undefined
    // Names are [a-z0-9-] (DESIGN.md §3.1), so the basename needs no escaping in a pattern.
    const ours =
      gitdir === undefined || gitdir.trim() === ''
        ? new RegExp(String.raw`^${base}\d*$`).test(id)
        : path.resolve(gitdir.trim()) === path.join(target, '.git')
    if (ours) found.push(path.join(root, id))
  }

  return found
}

/**
 * Rolls back what an interrupted `worktree add NAME` made, when its journal is there: the half
 * worktree (directory and git's administrative entry), the branch it created while the branch
 * still points where it was created (no new commits), that branch's config
 * (`yardBase`, or the upstream of a tracking branch) and the pin it wrote. Each step is safe to
 * repeat; the journal goes last, so a rollback killed in turn is finished by the next run.
 * Must be called under the project's offsets lock (every journal is written under it).
 * @returns what was undone, for a note; empty when there was no journal.
 * @throws RefusedError (exit 3) when the worktree is complete and holds changes: work done in it
 *   since (ignored files included) is not thrown away; or when the journal is not one yard wrote
 *   for an add of NAME — unreadable, another path than the worktree such an add makes (byte for
 *   byte), a value out of its range — (nothing is undone). A branch that a worktree has checked
 *   out is never deleted.
 */
export async function recoverInterruptedAdd(
  context: YardContext,
  workspace: Workspace,
  name: string,
): Promise<string[]> {
  const {commonDir, mainPath} = workspace
  // A journal names what its rollback removes: only the worktree an add of this name makes.
  const journal = readJournal(commonDir, name, worktreePath(workspace, name))
  if (journal === undefined) return []

  const git = async (args: string[]) => context.runner.git(args, {cwd: mainPath, allowFailure: true})
  const undone: string[] = []
  const admin = await adminDirs(commonDir, journal.target)
  await untilGitLeaves(context, journal.target, admin, journal.group ?? journal.pid)
  // An admin dir git finished (a checkout done) holds someone's work when anything changed since,
  // whatever the others are: another id of that basename may be a half-made one of its own.
  const checked = admin.flatMap((dir) => {
    const state = addState(dir)
    return state === 'making' ? [] : [{dir, state}]
  })
  if (checked.length > 0) {
    const changed = await changesSince(context, journal, checked)
    if (changed !== undefined) {
      throw new RefusedError(
        `worktree ${name} was being added when yard was stopped, and ${journal.target} ${changed}`,
        {
          why: 'yard rolls an interrupted add back before adding again, which would throw that work away',
          fix: `keep the worktree: commit or move the changes, then remove it with \`yard worktree remove ${name}\` (or delete ${shellQuote(addJournalPath(commonDir, name))} to leave it as it is)`,
        },
      )
    }
  }

  // The journal stays until all is undone: a rollback that fails is taken up again by the next add.
  await undo(name, async () => {
    if (admin.length > 0) {
      // `-f -f` removes a worktree git still holds locked ("initializing"): the one yard was creating.
      await git(['worktree', 'remove', '--force', '--force', journal.target])
      for (const dir of admin) await fs.rm(dir, {recursive: true, force: true})
    }

    const present = await fs.lstat(journal.target).then(
      () => true,
      () => false,
    )
    if (present) await fs.rm(journal.target, {recursive: true, force: true})
    if (admin.length > 0 || present) undone.push(`removed the half-made worktree ${journal.target}`)

    // A branch another worktree has checked out (main's, say) was not made by this add.
    if (
      journal.branchSource !== 'existing' &&
      journal.commit !== undefined &&
      !(await checkedOut(context, workspace, journal.branch))
    ) {
      const ref = `refs/heads/${journal.branch}`
      const at = (await readRefs(context.runner, mainPath, [ref])).get(ref)?.oid
      // A branch that moved and came back holds commits in its reflog alone, which update-ref -d deletes.
      const log = reflogMessages(path.join(commonDir, 'logs', 'refs', 'heads', journal.branch))
      const moved = log === undefined || log.length > 1
      const deleted =
        at === journal.commit && !moved && (await git(['update-ref', '-d', ref, journal.commit])).exitCode === 0
      if (deleted) undone.push(`deleted branch ${journal.branch}`)
      if (deleted || at === undefined) {
        if (journal.branchSource === 'new') await git(['config', '--unset', `branch.${journal.branch}.yardBase`])
        else await git(['config', '--remove-section', `branch.${journal.branch}`])
      }
    }

    const {files, pins} = await loadConfig({mainPath, env: context.env, cache: configCachePath(context.env, commonDir)})
    if (pinValue(pins[name]) !== journal.pinBefore) {
      await writePin(files.local, name, journal.pinBefore ?? undefined)
      undone.push(journal.pinBefore === null ? `deleted the pin of ${name}` : `restored the pin of ${name}`)
    }
  })
  await removeAddJournal(commonDir, name)
  return undone
}

/**
 * Runs the undoing steps of the rollback of `name`; a file-system error (a path that cannot be
 * removed: permissions, an immutable attribute) becomes an OperationError (exit 1) saying what
 * and how to go on. yard's own errors pass.
 */
async function undo(name: string, steps: () => Promise<void>): Promise<void> {
  try {
    await steps()
  } catch (error) {
    if (error instanceof YardError) throw error
    const {code, path: where, message} = error as NodeJS.ErrnoException
    throw new OperationError(
      `could not roll back the interrupted \`yard worktree add ${name}\`: ${code ? `${code} on ${where ?? '?'}` : message}`,
      {
        why: 'yard removes what the stopped add made before adding again; its record is kept, so the next add takes the rollback up again',
        fix: `make that path removable by you (ls -ld it; lsattr for an immutable attribute), then run yard worktree add ${name} again`,
      },
    )
  }
}

/**
 * How far the add of git's administrative directory `dir` got: `making` while git has not pointed
 * its HEAD at the branch, or holds its add lock — `initializing` (builtin/worktree.c, under
 * LC_ALL=C) or `added with --lock` (the `--lock` yard adds with sparse patterns or submodules) —
 * over a checkout that has not written its index (or still holds index.lock); `finishing` under
 * that lock once the checkout wrote its index (yard clones submodules or ends a sparse checkout
 * then, long enough for someone to edit files); else `finished`. add_worktree makes the
 * directory, writes `locked`, `gitdir`, then HEAD as the null object id before `symbolic-ref`: a
 * kill inside those writes leaves a HEAD that is absent, empty or null, which holds no one's
 * work. A lock a user took (`git worktree lock`, empty or with their reason) is no add's.
 */
function addState(dir: string): 'finished' | 'finishing' | 'making' {
  const head = readRegularFile(path.join(dir, 'HEAD'), 256)
  if ('text' in head ? /^(0{40}|0{64})?$/.test(head.text.trim()) : head.problem === 'absent') return 'making'
  const locked = readRegularFile(path.join(dir, 'locked'), 256)
  if (!('text' in locked && ['added with --lock', 'initializing'].includes(locked.text.trim()))) return 'finished'
  return existsSync(path.join(dir, 'index')) && !existsSync(path.join(dir, 'index.lock')) ? 'finishing' : 'making'
}

/** How long a rollback waits for a git still checking out the half-made worktree (ms). */
const GIT_GONE_MS = 30_000

/**
 * Waits while a git still checks out the worktree: its `index.lock` in an administrative
 * directory (the checkout `git worktree add` runs holds it until the index is written) while a
 * process of the killed add's process group lives (yard's git runs in yard's group, which the
 * journal records). A kill of yard
 * alone (`kill -9 PID`, the OOM killer) leaves that git running, and removing files it is still
 * writing fails (ENOTEMPTY) or cuts its checkout short under it. A lock whose group is gone was
 * left by a git killed too: nothing is waited for.
 * @throws RefusedError (exit 3) when git still runs after GIT_GONE_MS.
 */
async function untilGitLeaves(context: YardContext, target: string, admin: string[], pid: unknown): Promise<void> {
  const locks = admin.map((dir) => path.join(dir, 'index.lock'))
  const held = () => locks.find((lock) => existsSync(lock))
  const running = () => held() !== undefined && gitRunsIn(pid)
  if (!running()) return
  context.warn(`note: a git is still checking out ${target} for the add that was stopped; waiting for it to end`)
  const deadline = Date.now() + GIT_GONE_MS
  while (running() && Date.now() < deadline) await delay(50)
  const lock = held()
  if (lock === undefined || !gitRunsIn(pid)) return
  throw new RefusedError(`a git process seems to be still checking out ${target}: ${lock} exists`, {
    why: `yard rolls back an interrupted add only once its git has ended; it still ran after ${GIT_GONE_MS / 1000} s`,
    fix: `wait for that git to end (ps -o pid,args -g ${String(pid)}); if none runs, delete ${shellQuote(lock)}; then run the add again`,
  })
}

/**
 * Whether a git runs in the killed add's process group `group` (from the journal, so checked): a
 * yard started by a script without job control shares the script's group, which outlives yard,
 * so the group alone says nothing of its git (process-group.ts groupRuns).
 */
function gitRunsIn(group: unknown): boolean {
  return Number.isInteger(group) && (group as number) > 1 && groupRuns(group as number, 'git')
}

/**
 * The messages of the reflog `file`, one per entry (`''` for an entry without one, as a ref's
 * creation), read without blocking; `[]` when there is none (logging off), undefined when it
 * cannot be read or is no regular file of at most 1 MiB (yard then keeps what it guards).
 */
function reflogMessages(file: string): string[] | undefined {
  const read = readRegularFile(file, 1 << 20)
  if (!('text' in read)) return read.problem === 'absent' ? [] : undefined
  return read.text
    .split('\n')
    .filter(Boolean)
    .map((line) => (line.includes('\t') ? line.slice(line.indexOf('\t') + 1) : ''))
}

/**
 * What makes a finished worktree someone's work since the add, as the end of a sentence, else
 * undefined. Per admin dir (`checked`, read without blocking): a HEAD that is not the journal's
 * branch, a HEAD reflog with an entry the add does not write (a commit, a reset, a checkout even
 * when switched back: commits reset away from or made on a detached HEAD live only there),
 * initialised submodules of a finished add (not looked into; a finishing add's are its own, and
 * its status leaves them out), refs of the worktree's own
 * (`refs/worktree/…`, `refs/bisect/…`). Then in the worktree: changed, untracked or ignored files
 * (git's checkout writes none of the latter), files marked assume-unchanged or skip-worktree yet
 * present (`git ls-files -v`: a sparse checkout's skipped files are absent; `git status` does not
 * look at either), or a git that fails (yard cannot tell, so it keeps the worktree).
 */
async function changesSince(
  context: YardContext,
  journal: AddJournal,
  checked: Array<{dir: string; state: 'finished' | 'finishing'}>,
): Promise<string | undefined> {
  for (const {dir, state} of checked) {
    const head = readRegularFile(path.join(dir, 'HEAD'), 4096)
    if (!('text' in head)) return `cannot be checked for changes (its HEAD in ${dir}: ${head.problem})`
    if (head.text.trim() !== `ref: refs/heads/${journal.branch}`) return `is no longer on branch ${journal.branch}`
    const reflog = reflogMessages(path.join(dir, 'logs', 'HEAD'))
    if (reflog === undefined) return 'has a HEAD reflog yard cannot read'
    // `git worktree add` logs HEAD's creation and "reset: moving to HEAD" (its checkout); any other
    // entry (a commit, a reset, a checkout, a rebase) is someone's work, which may live only in
    // this reflog: a commit reset away from, one made on a detached HEAD or an aborted rebase.
    const since = reflog.find((message) => message !== '' && message !== 'reset: moving to HEAD')
    if (since !== undefined) return `has moved its HEAD since (its reflog: "${since}")`
    if ((await fs.readdir(path.join(dir, 'refs')).catch(() => [])).length > 0) return 'holds refs of its own'
    // The superproject's status does not list what submodules ignore, nor, under `ignore = all`,
    // their commits: yard does not look into them, so it keeps the worktree.
    // A finishing add's submodules are its own, half cloned: the status below leaves them out.
    if (state === 'finished' && (await fs.readdir(path.join(dir, 'modules')).catch(() => [])).length > 0)
      return 'has initialised submodules, whose work yard does not look into'
  }

  const finishing = checked.every((entry) => entry.state === 'finishing')

  const git = async (args: string[]) => context.runner.git(args, {cwd: journal.target, allowFailure: true})
  const failed = (what: string, result: {exitCode: number; stderr: string}) => {
    const line = result.stderr.trim().split('\n').at(-1) ?? ''
    return `cannot be checked for changes (git ${what}: ${line || `exit ${result.exitCode}`})`
  }

  const status = await git([
    'status',
    '--porcelain',
    '--untracked-files=all',
    '--ignored=matching',
    ...(finishing ? ['--ignore-submodules=all'] : []),
  ])
  if (status.exitCode !== 0) return failed('status', status)
  if (status.stdout.trim() !== '') return 'has changes since'
  const flagged = await git(['ls-files', '-v', '-z'])
  if (flagged.exitCode !== 0) return failed('ls-files', flagged)
  const hidden = flagged.stdout
    .split('\0')
    .filter(
      (entry) =>
        /^[a-z]/.test(entry) || (entry.startsWith('S ') && existsSync(path.join(journal.target, entry.slice(2)))),
    )
  return hidden.length === 0
    ? undefined
    : `has files git status does not show (assume-unchanged or skip-worktree: ${hidden[0].slice(2)})`
}

/** Whether a worktree (main included) has `branch` checked out; true when git cannot say (it is kept). */
async function checkedOut(context: YardContext, workspace: Workspace, branch: string): Promise<boolean> {
  const worktrees = await gitWorktrees(workspace, context).catch(() => undefined)
  return worktrees === undefined || worktrees.some((worktree) => worktree.branch === branch)
}

/** A pin as the journal records it: its integer value, or null when there is none (or it is no integer). */
export function pinValue(pin: unknown): number | null {
  return typeof pin === 'bigint' ? Number(pin) : null
}
