/**
 * Leases (DESIGN.md §5.1, "Eviction"): whoever clones from a cache takes one, a file
 * `<key>.leases/<kind>.<name>` holding the borrower's kind, name and start time. A cache with a
 * live lease is never evicted; a lease whose holder is provably gone is cleared.
 */
import {existsSync, promises as fs} from 'node:fs'
import os from 'node:os'
import path from 'node:path'

import type {BorrowerProbe, CacheBorrower, CacheBorrowerSpec} from '../../sdk/cache.js'
import type {CachePaths} from './layout.js'

import {InputError} from '../../sdk/errors.js'
import {isAlive} from '../../sdk/lock.js'

const KIND = /^[a-z][a-z0-9-]{0,30}$/
const NAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/

function leaseFile(paths: CachePaths, borrower: {kind: string; name: string}): string {
  return path.join(paths.leases, `${borrower.kind}.${borrower.name}`)
}

/**
 * Checks a borrower's kind and name: both end up in a file name.
 * @throws InputError (exit 2) naming the rule.
 */
export function checkBorrower(borrower: {kind: string; name: string}): void {
  if (!KIND.test(borrower.kind)) {
    throw new InputError(`invalid borrower kind ${JSON.stringify(borrower.kind)}`, {
      why: 'a kind is lower-case letters, digits and dashes, starting with a letter',
      fix: 'use a kind such as sandbox or clone',
    })
  }

  if (!NAME.test(borrower.name)) {
    throw new InputError(`invalid borrower name ${JSON.stringify(borrower.name)}`, {
      why: 'a name is a DNS-1123 label: lower-case letters, digits and dashes, at most 63',
      fix: "use the sandbox's or clone's name",
    })
  }
}

/** Writes (or rewrites) a lease atomically; keeps the start time of an existing one. */
export async function writeLease(
  paths: CachePaths,
  spec: CacheBorrowerSpec,
  changes: Partial<CacheBorrower> = {},
): Promise<CacheBorrower> {
  checkBorrower(spec)
  await fs.mkdir(paths.leases, {recursive: true})
  const file = leaseFile(paths, spec)
  const existing = await readLease(file)
  const lease: CacheBorrower = {
    ...existing,
    kind: spec.kind,
    name: spec.name,
    started: existing?.started ?? new Date().toISOString(),
    ...(!(spec.path === undefined) && {path: path.resolve(spec.path)}),
    ...(!(spec.pid === undefined) && {pid: spec.pid, host: os.hostname()}),
    ...changes,
  }
  const temporary = path.join(paths.leases, `.${spec.kind}.${spec.name}.tmp-${process.pid}`)
  await fs.writeFile(temporary, JSON.stringify(lease) + '\n')
  await fs.rename(temporary, file)
  return lease
}

/** Removes a lease; resolves whether one was there. */
export async function removeLease(paths: CachePaths, borrower: {kind: string; name: string}): Promise<boolean> {
  checkBorrower(borrower)
  const file = leaseFile(paths, borrower)
  if (!existsSync(file)) return false
  await fs.rm(file, {force: true})
  return true
}

async function readLease(file: string): Promise<CacheBorrower | undefined> {
  try {
    return JSON.parse(await fs.readFile(file, 'utf8')) as CacheBorrower
  } catch {
    return undefined
  }
}

/**
 * Every lease of a cache. A lease file that cannot be parsed still counts (as its file name
 * says), so a half-written lease never lets a borrowed cache go.
 */
export async function readLeases(paths: CachePaths): Promise<CacheBorrower[]> {
  const names = await fs.readdir(paths.leases).catch(() => [] as string[])
  const leases: CacheBorrower[] = []
  for (const name of names.sort()) {
    if (name.startsWith('.')) continue
    const [kind, ...rest] = name.split('.')
    const lease = await readLease(path.join(paths.leases, name))
    leases.push(lease ?? {kind, name: rest.join('.'), started: ''})
  }

  return leases
}

/**
 * Why a borrower is provably gone, or undefined while it may still borrow: its clone directory
 * no longer exists, its process (on this host) is gone, or the probe (a sandbox backend) says
 * its sandbox no longer exists. Without proof a lease is live.
 */
export async function goneReason(lease: CacheBorrower, probe?: BorrowerProbe): Promise<string | undefined> {
  if (lease.path !== undefined && !existsSync(lease.path)) return `its clone ${lease.path} no longer exists`
  if (lease.pid !== undefined && lease.host === os.hostname() && !isAlive(lease.pid))
    return `its process ${lease.pid} is gone`
  return probe ? probe(lease) : undefined
}

/** "sandbox feat (since 2026-…)" for messages. */
export function describeBorrower(lease: CacheBorrower): string {
  return `${lease.kind} ${lease.name}${lease.started ? ` (since ${lease.started})` : ''}${lease.path ? ` at ${lease.path}` : ''}`
}

/**
 * How long a lease written (or renewed) is not put to the probe, in ms: a sandbox takes its
 * lease before its pod exists, so a missing pod proves nothing during a create.
 */
export const PROBE_GRACE_MS = 10 * 60_000

/** Whether the lease file was last written more than PROBE_GRACE_MS ago (a missing file: yes). */
async function pastGrace(file: string): Promise<boolean> {
  const stat = await fs.stat(file).catch(() => undefined)
  return stat === undefined || Date.now() - stat.mtimeMs > PROBE_GRACE_MS
}

/**
 * Splits leases into live ones and provably gone ones (with the reason), clearing the gone ones
 * unless `dryRun`. The probe is asked only about leases past PROBE_GRACE_MS.
 */
export async function sortLeases(
  paths: CachePaths,
  probe: BorrowerProbe | undefined,
  dryRun: boolean,
): Promise<{live: CacheBorrower[]; gone: Array<{lease: CacheBorrower; reason: string}>}> {
  const live: CacheBorrower[] = []
  const gone: Array<{lease: CacheBorrower; reason: string}> = []
  for (const lease of await readLeases(paths)) {
    const reason = await goneReason(lease, probe && (await pastGrace(leaseFile(paths, lease))) ? probe : undefined)
    if (reason === undefined) {
      live.push(lease)
      continue
    }

    gone.push({lease, reason})
    if (!dryRun) await fs.rm(leaseFile(paths, lease), {force: true})
  }

  return {live, gone}
}
