/**
 * Lock files (DESIGN.md §3.4, "Locks"): a file holding pid, host and start time, created
 * exclusively. A lock whose process is gone (same host), or older than its operation's budget,
 * is taken over with a warning.
 */
import {promises as fs} from 'node:fs'
import os from 'node:os'
import path from 'node:path'

import {RefusedError} from './errors.js'

export interface LockOwner {
  pid: number
  host: string
  /** ISO-8601 start time. */
  started: string
  /** What holds it, for messages ("worktree add feat"). */
  purpose?: string
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

/** Why a lock's owner no longer counts, or undefined while it is live. */
function staleReason(owner: LockOwner | undefined, mtimeMs: number, budgetMs: number): string | undefined {
  const started = owner ? Date.parse(owner.started) : Number.NaN
  const age = Date.now() - (Number.isNaN(started) ? mtimeMs : started)
  if (!owner || typeof owner.pid !== 'number') return 'it is unreadable'
  if (owner.host === os.hostname() && !isAlive(owner.pid)) return `process ${owner.pid} is gone`
  if (age > budgetMs) return `it is older than its ${Math.round(budgetMs / 1000)} s budget`
  return undefined
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Takes the lock at `lockPath`, waiting while a live owner holds it.
 * @throws RefusedError (exit 3) when a live owner still holds it after `waitMs`, naming it.
 */
export async function acquireLock(lockPath: string, options: LockOptions): Promise<HeldLock> {
  await fs.mkdir(path.dirname(lockPath), {recursive: true})
  const me: LockOwner = {pid: process.pid, host: os.hostname(), started: new Date().toISOString(), purpose: options.purpose}
  const body = JSON.stringify(me) + '\n'
  const deadline = Date.now() + (options.waitMs ?? options.budgetMs)
  let delay = 10
  for (;;) {
    if (await createWithContent(lockPath, body)) {
      return {
        path: lockPath,
        async release() {
          const current = await readOwner(lockPath)
          if (current?.text === body) await fs.rm(lockPath, {force: true})
        },
      }
    }
    const current = await readOwner(lockPath)
    if (current === undefined) continue
    const stat = await fs.stat(lockPath).catch(() => undefined)
    if (stat === undefined) continue
    const reason = staleReason(current.owner, stat.mtimeMs, options.budgetMs)
    if (reason !== undefined && (await takeOver(lockPath, current.text))) {
      const who = current.owner ? `pid ${current.owner.pid} on ${current.owner.host}` : 'an unknown owner'
      options.warn?.(`warning: took over the stale lock ${lockPath} held by ${who}: ${reason}`)
      continue
    }
    if (Date.now() >= deadline) {
      const o = current.owner
      throw new RefusedError(`${lockPath} is held by ${o ? `pid ${o.pid} on ${o.host} since ${o.started}${o.purpose ? ` (${o.purpose})` : ''}` : 'another process'}`, {
        why: 'another yard process is working on the same thing',
        fix: 'wait for it to finish and try again',
      })
    }
    await sleep(delay)
    delay = Math.min(delay * 2, 200)
  }
}

/**
 * Creates `lockPath` holding `body` in one step: the content is written to a private file that is
 * then hard-linked into place (link fails when the lock exists), so no other process ever sees
 * an empty lock. Returns false when the lock already exists.
 */
async function createWithContent(lockPath: string, body: string): Promise<boolean> {
  const draft = `${lockPath}.draft-${process.pid}-${Math.random().toString(16).slice(2)}`
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

/** Runs `work` while holding the lock; always releases it. */
export async function withLock<T>(lockPath: string, options: LockOptions, work: () => Promise<T>): Promise<T> {
  const lock = await acquireLock(lockPath, options)
  try {
    return await work()
  } finally {
    await lock.release()
  }
}
