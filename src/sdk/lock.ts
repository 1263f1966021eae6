/**
 * Lock files (DESIGN.md §3.4, "Locks"): a file holding pid, host and start time, created
 * exclusively. A lock whose process is gone (same host), or older than its operation's budget,
 * is taken over with a warning. A holder may record the process group of a child it runs
 * (recordGroup): while that group outlives the holder, the lock is not free — a taker ends
 * the orphaned group first when it can prove the group is the one recorded, and waits otherwise.
 */
import {promises as fs, renameSync, rmSync, writeFileSync} from 'node:fs'
import os from 'node:os'
import path from 'node:path'

import {OperationError, RefusedError} from './errors.js'
import {endGroup, groupState, processStart} from './process-group.js'

export interface LockOwner {
  pid: number
  host: string
  /** ISO-8601 start time. */
  started: string
  /** What holds it, for messages ("worktree add feat"). */
  purpose?: string
  /** The process group of the child the holder runs (its own group: it survives the holder). */
  group?: number
  /** The group leader's start time (process-group.ts processStart), to tell a recycled id. */
  groupStarted?: string
}

export interface LockOptions {
  /** The operation's budget in ms: a lock older than this is stale. */
  budgetMs: number
  /** How long to wait for a live lock before refusing, in ms (default: budgetMs). */
  waitMs?: number
  purpose?: string
  /** Told about a takeover of a stale lock. */
  warn?: (message: string) => void
}

export interface HeldLock {
  path: string
  release(): Promise<void>
  /**
   * Records (a pid) or clears (undefined) the process group of the child now running, in place
   * and synchronously: called right after the spawn, it leaves no turn of the event loop in
   * which a kill of this process would orphan an unrecorded group.
   */
  recordGroup(pgid: number | undefined): void
}

/** Whether a process of this host with `pid` exists (EPERM: it exists but is another user's). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

async function readOwner(lockPath: string): Promise<{owner?: LockOwner; text: string} | undefined> {
  try {
    const text = await fs.readFile(lockPath, 'utf8')
    try {
      return {owner: JSON.parse(text) as LockOwner, text}
    } catch {
      return {text}
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
}

/** Why a lock's owner no longer counts (and the orphaned group to end first), or undefined while it is live. */
function staleReason(
  owner: LockOwner | undefined,
  mtimeMs: number,
  budgetMs: number,
): {reason: string; endGroup?: number} | undefined {
  const started = owner ? Date.parse(owner.started) : NaN
  const age = Date.now() - (Number.isNaN(started) ? mtimeMs : started)
  if (!owner || typeof owner.pid !== 'number') return {reason: 'it is unreadable'}
  const here = owner.host === os.hostname()
  const groupNow = () =>
    typeof owner.group === 'number' && here ? groupState(owner.group, owner.groupStarted) : 'gone'
  if (age > budgetMs) {
    const group = groupNow()
    return {
      reason: `it is older than its ${Math.round(budgetMs / 1000)} s budget`,
      ...(group === 'orphan' && {endGroup: owner.group}),
    }
  }

  if (here && !isAlive(owner.pid)) {
    // Its child may still work in what the lock guards: wait while that group cannot be told
    // from a recycled id, else end it before anybody cleans up under it.
    const group = groupNow()
    if (group === 'unknown') return undefined
    return {
      reason: `process ${owner.pid} is gone${group === 'orphan' ? ` (its process group ${owner.group} was ended)` : ''}`,
      ...(group === 'orphan' && {endGroup: owner.group}),
    }
  }

  return undefined
}

/**
 * The live owner of the lock at `lockPath`, or undefined when nobody holds it: no file, or an
 * owner that no longer counts (its process gone on this host, older than `budgetMs`, unreadable)
 * — the same rule acquireLock takes a lock over by. Reads only; never takes or changes the lock.
 */
export async function liveOwner(lockPath: string, budgetMs: number): Promise<LockOwner | undefined> {
  const found = await readOwner(lockPath)
  if (!found) return undefined
  const mtimeMs = await fs
    .stat(lockPath)
    .then((stat) => stat.mtimeMs)
    .catch(() => Date.now())
  return staleReason(found.owner, mtimeMs, budgetMs) === undefined ? found.owner : undefined
}

const sleep = async (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Takes the lock at `lockPath`, waiting while a live owner holds it.
 * @throws RefusedError (exit 3) when a live owner still holds it after `waitMs`, naming it.
 * @throws OperationError (exit 1) when the lock's directory cannot be made or written (EROFS,
 *   EACCES, ENOSPC, ENOTDIR …): nothing was taken or changed.
 */
export async function acquireLock(lockPath: string, options: LockOptions): Promise<HeldLock> {
  try {
    return await takeLock(lockPath, options)
  } catch (error) {
    const {code} = error as NodeJS.ErrnoException
    if (typeof code !== 'string' || !/^E[A-Z]+$/.test(code)) throw error
    const dir = path.dirname(lockPath)
    throw new OperationError(`cannot take the lock ${lockPath}: ${code}`, {
      cause: error,
      why: `yard takes this lock before it changes what the lock guards${options.purpose ? ` (${options.purpose})` : ''}, and ${dir} cannot be written${code === 'EROFS' ? ": it is on a read-only file system (inside a yard box, the repository's .git/yard is mounted read-only)" : ''}; nothing was changed`,
      fix:
        code === 'EROFS'
          ? `run the command where ${dir} can be written: on the host, not inside a box`
          : `make ${dir} writable by you (ls -ld it; df for a full disk), then run the command again`,
    })
  }
}

async function takeLock(lockPath: string, options: LockOptions): Promise<HeldLock> {
  await fs.mkdir(path.dirname(lockPath), {recursive: true})
  const me: LockOwner = {
    pid: process.pid,
    host: os.hostname(),
    started: new Date().toISOString(),
    purpose: options.purpose,
  }
  let body = JSON.stringify(me) + '\n'
  const deadline = Date.now() + (options.waitMs ?? options.budgetMs)
  let delay = 10
  for (;;) {
    if (await createWithContent(lockPath, body)) {
      await removeLeftovers(lockPath)
      return {
        path: lockPath,
        async release() {
          const current = await readOwner(lockPath)
          if (current?.text === body) await fs.rm(lockPath, {force: true})
        },
        recordGroup(pgid) {
          const owner: LockOwner = {
            ...me,
            ...(!(pgid === undefined) && {group: pgid, groupStarted: processStart(pgid)}),
          }
          const next = JSON.stringify(owner) + '\n'
          const draft = draftPath(lockPath)
          try {
            writeFileSync(draft, next, {flag: 'wx'})
            renameSync(draft, lockPath)
            body = next
          } catch {
            rmSync(draft, {force: true})
          }
        },
      }
    }

    const current = await readOwner(lockPath)
    if (current === undefined) continue
    const stat = await fs.stat(lockPath).catch(() => undefined)
    if (stat === undefined) continue
    const stale = staleReason(current.owner, stat.mtimeMs, options.budgetMs)
    // A group that does not die at once (a process stuck in the kernel) is waited for, not cleaned up under.
    const ended = stale?.endGroup === undefined || (await endGroup(stale.endGroup))
    if (stale !== undefined && ended && (await takeOver(lockPath, current.text))) {
      const who = current.owner ? `pid ${current.owner.pid} on ${current.owner.host}` : 'an unknown owner'
      options.warn?.(`warning: took over the stale lock ${lockPath} held by ${who}: ${stale.reason}`)
      continue
    }

    if (Date.now() >= deadline) {
      const o = current.owner
      const orphan = o && o.host === os.hostname() && !isAlive(o.pid) && o.group !== undefined
      throw new RefusedError(
        `${lockPath} is held by ${o ? `pid ${o.pid} on ${o.host} since ${o.started}${o.purpose ? ` (${o.purpose})` : ''}` : 'another process'}`,
        {
          why: orphan
            ? `that process is gone, but its process group ${o.group} still runs (a git command it started)`
            : 'another yard process is working on the same thing',
          fix: orphan
            ? `wait for it to finish, or end it (kill -- -${o.group}), and try again`
            : 'wait for it to finish and try again',
        },
      )
    }

    await sleep(delay)
    delay = Math.min(delay * 2, 200)
  }
}

/** A private file name beside the lock: `<lock>.draft-<pid>-<random>`. */
function draftPath(lockPath: string): string {
  return `${lockPath}.draft-${process.pid}-${Math.random().toString(16).slice(2)}`
}

/** Removes drafts and set-aside copies of the lock left by processes killed midway. */
async function removeLeftovers(lockPath: string): Promise<void> {
  const base = path.basename(lockPath)
  const pattern = new RegExp(
    String.raw`^${base.replaceAll(/[.*+?^${}()|[\]\\]/g, String.raw`\$&`)}\.(?:draft|stale)-(\d+)-`,
  )
  for (const name of await fs.readdir(path.dirname(lockPath)).catch(() => [] as string[])) {
    const pid = pattern.exec(name)?.[1]
    if (pid !== undefined && !isAlive(Number(pid))) await fs.rm(path.join(path.dirname(lockPath), name), {force: true})
  }
}

/**
 * Creates `lockPath` holding `body` in one step: the content is written to a private file that is
 * then hard-linked into place (link fails when the lock exists), so no other process ever sees
 * an empty lock. Returns false when the lock already exists.
 */
async function createWithContent(lockPath: string, body: string): Promise<boolean> {
  const draft = draftPath(lockPath)
  await fs.writeFile(draft, body, {flag: 'wx'})
  try {
    await fs.link(draft, lockPath)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  } finally {
    await fs.rm(draft, {force: true})
  }
}

/**
 * Moves a stale lock aside atomically. When the moved file is not the one judged stale (another
 * process took it over in between), it is put back and the takeover is abandoned.
 */
async function takeOver(lockPath: string, staleText: string): Promise<boolean> {
  const aside = `${lockPath}.stale-${process.pid}-${Math.random().toString(16).slice(2)}`
  try {
    await fs.rename(lockPath, aside)
  } catch {
    return false
  }

  const moved = await fs.readFile(aside, 'utf8').catch(() => '')
  if (moved !== staleText) {
    await fs.link(aside, lockPath).catch(() => undefined)
    await fs.rm(aside, {force: true})
    return false
  }

  await fs.rm(aside, {force: true})
  return true
}

/** Runs `work` while holding the lock (handed to it, for recordGroup); always releases it. */
export async function withLock<T>(
  lockPath: string,
  options: LockOptions,
  work: (lock: HeldLock) => Promise<T>,
): Promise<T> {
  const lock = await acquireLock(lockPath, options)
  try {
    return await work(lock)
  } finally {
    await lock.release()
  }
}
