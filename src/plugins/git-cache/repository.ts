/**
 * What git does to a cache (DESIGN.md §5.1): clone, pin, fetch, maintain. No locking and no
 * records here (cache.ts holds the lock around these). Every call goes through the
 * ProcessRunner (`GIT_TERMINAL_PROMPT=0`), with `--` before every url and a time budget after
 * which the whole process group is killed.
 */
import type {ProcessRunner, RunOptions} from '../../sdk/process.js'

import {gitProgressListener, type ProgressPort} from '../../sdk/progress.js'
import {objectCounts} from './layout.js'

/** Time budgets in ms (DESIGN.md §5.1; git-cache-notes §2.12). */
export interface CacheBudgets {
  cloneMs: number
  fetchMs: number
  /** A fetch somebody waits for (an agent serving an ask). */
  onDemandMs: number
  /** The three maintenance commands together. */
  maintainMs: number
}

export const DEFAULT_BUDGETS: CacheBudgets = {
  cloneMs: 20 * 60_000,
  fetchMs: 5 * 60_000,
  onDemandMs: 60_000,
  maintainMs: 20 * 60_000,
}

/**
 * Config that keeps every object a `--shared` clone borrows (DESIGN.md §5.1): no auto-gc from
 * fetch, no pruning even by an explicit `git gc`, no background maintenance; protocol v2 so a
 * fetch asks only for the refs it wants. And no bitmaps (bare repositories write them by
 * default): git 2.39's `repack -a -d -k` that writes a bitmap leaves unreachable loose objects
 * loose, so a cache whose force-pushed objects were loose would stay above the loose-object
 * threshold and be maintained after every fetch; without a bitmap they go into the one pack.
 */
export const PINS: ReadonlyArray<readonly [string, string]> = [
  ['gc.auto', '0'],
  ['gc.pruneExpire', 'never'],
  ['maintenance.auto', 'false'],
  ['protocol.version', '2'],
  ['repack.writeBitmaps', 'false'],
]

/** A bare clone has no fetch refspec; these mirror branches and tags (forced: force-pushes move them). */
export const REFSPECS = ['+refs/heads/*:refs/heads/*', '+refs/tags/*:refs/tags/*'] as const

/** Maintenance thresholds (DESIGN.md §5.1): small fetches land as loose objects, or one pack each. */
export const MAINTAIN_LOOSE_OBJECTS = 500
export const MAINTAIN_PACKS = 50

/**
 * The maintenance commands, in order (DESIGN.md §5.1): everything into one pack keeping
 * unreachable objects (`-k`: force-pushed commits that clones borrow survive), a commit-graph,
 * packed refs. Never `gc`, never `prune`, never a `--prune*` flag.
 */
export const MAINTENANCE_COMMANDS: ReadonlyArray<readonly string[]> = [
  ['repack', '-a', '-d', '-k'],
  ['commit-graph', 'write', '--reachable'],
  ['pack-refs', '--all'],
]

/**
 * `git clone --bare -- <url> <repo>` within the clone budget. `--no-local` makes a local path
 * clone like any other (a pack, no hard links into the upstream's object files): `repack -k`
 * packs unreachable loose objects only when a pack already exists (git 2.39 builtin/repack.c).
 * With a progress port, git's `--progress` (which `--quiet` does not silence, git-clone(1)) is
 * read from stderr and reported.
 * @throws OperationError with git's words.
 */
export async function cloneBare(
  runner: ProcessRunner,
  url: string,
  repo: string,
  budgets: CacheBudgets,
  progress?: ProgressPort,
): Promise<void> {
  await runner.git(['clone', '--bare', '--no-local', '--quiet', ...progressArgs(progress), '--', url, repo], {
    timeoutMs: budgets.cloneMs,
    budget: 'clone',
    ...progressOptions(progress),
  })
}

/** `--progress` when somebody watches: git prints progress off a terminal only when asked. */
const progressArgs = (progress?: ProgressPort) => (progress ? ['--progress'] : [])
const progressOptions = (progress?: ProgressPort): RunOptions =>
  progress ? {onStderr: gitProgressListener(progress)} : {}

/** A repository's own config: lower-cased key → its values in file order. */
export type LocalConfig = Map<string, string[]>

/** `git config --local --null --list` output as a LocalConfig. */
function parseConfigList(stdout: string): LocalConfig {
  const values: LocalConfig = new Map()
  for (const entry of stdout.split('\0')) {
    const newline = entry.indexOf('\n')
    if (newline === -1) continue
    const key = entry.slice(0, newline).toLowerCase()
    values.set(key, [...(values.get(key) ?? []), entry.slice(newline + 1)])
  }

  return values
}

/**
 * The cache's own config, read once for checkOrigin and pin (one `git config --list`).
 * @returns undefined when git cannot read it: each of them then reads it itself and fails with
 *   git's words where it did before.
 */
export async function readLocalConfig(
  runner: ProcessRunner,
  repo: string,
  budgets: CacheBudgets,
): Promise<LocalConfig | undefined> {
  const listed = await runner.git(['config', '--local', '--null', '--list'], {
    cwd: repo,
    timeoutMs: budgets.fetchMs,
    budget: 'fetch',
    allowFailure: true,
  })
  return listed.exitCode === 0 ? parseConfigList(listed.stdout) : undefined
}

/**
 * Applies the pins, the refspecs and (when given) `remote.origin.url`, writing only what differs:
 * one `git config --list` when everything is in place, none when `config` (readLocalConfig, read
 * under the same lock) is given.
 * @throws OperationError when git cannot read or write the config.
 */
export async function pin(
  runner: ProcessRunner,
  repo: string,
  url: string | null,
  budgets: CacheBudgets,
  config?: LocalConfig,
): Promise<void> {
  const budget = {cwd: repo, timeoutMs: budgets.fetchMs, budget: 'fetch'}
  const values = config ?? parseConfigList((await runner.git(['config', '--local', '--null', '--list'], budget)).stdout)

  const has = (key: string, value: string) => {
    const current = values.get(key.toLowerCase())
    return current?.length === 1 && current[0] === value
  }

  for (const [key, value] of PINS) {
    if (!has(key, value)) await runner.git(['config', '--replace-all', key, value], budget)
  }

  const refspecs = values.get('remote.origin.fetch') ?? []
  if (refspecs.length !== REFSPECS.length || refspecs.some((value, index) => value !== REFSPECS[index])) {
    await runner.git(['config', '--replace-all', 'remote.origin.fetch', REFSPECS[0]], budget)
    await runner.git(['config', '--add', 'remote.origin.fetch', REFSPECS[1]], budget)
  }

  if (url !== null && !has('remote.origin.url', url))
    await runner.git(['config', '--replace-all', '--', 'remote.origin.url', url], budget)
}

/**
 * `git fetch origin` in place: never `--prune` (refs deleted upstream stay, and with them what
 * clones borrow), no automatic maintenance.
 * @throws OperationError with git's words, or naming the budget when it ran out.
 */
export async function fetchOrigin(
  runner: ProcessRunner,
  repo: string,
  onDemand: boolean,
  budgets: CacheBudgets,
  progress?: ProgressPort,
): Promise<void> {
  await runner.git(['fetch', '--quiet', ...progressArgs(progress), '--no-auto-maintenance', 'origin'], {
    cwd: repo,
    timeoutMs: onDemand ? budgets.onDemandMs : budgets.fetchMs,
    budget: onDemand ? 'on-demand fetch' : 'fetch',
    ...progressOptions(progress),
  })
}

/** Whether maintenance is due, and why (for messages). */
export async function maintenanceDue(
  repo: string,
): Promise<{due: boolean; reason: string; counts: {packs: number; looseObjects: number}}> {
  const counts = await objectCounts(repo)
  if (counts.packs >= MAINTAIN_PACKS) return {due: true, reason: `${counts.packs} packs ≥ ${MAINTAIN_PACKS}`, counts}
  if (counts.looseObjects >= MAINTAIN_LOOSE_OBJECTS)
    return {due: true, reason: `${counts.looseObjects} loose objects ≥ ${MAINTAIN_LOOSE_OBJECTS}`, counts}
  return {
    due: false,
    reason: `${counts.packs} packs and ${counts.looseObjects} loose objects: below the thresholds (${MAINTAIN_PACKS} packs, ${MAINTAIN_LOOSE_OBJECTS} loose)`,
    counts,
  }
}

/**
 * Runs MAINTENANCE_COMMANDS in order within one shared budget, stopping at the first failure
 * (a repack killed midway deletes nothing: old packs go only once the new one is in place).
 * @throws OperationError naming the command that failed, or the budget.
 */
export async function runMaintenance(runner: ProcessRunner, repo: string, budgets: CacheBudgets): Promise<void> {
  const deadline = Date.now() + budgets.maintainMs
  for (const args of MAINTENANCE_COMMANDS) {
    await runner.git(args, {cwd: repo, timeoutMs: Math.max(1, deadline - Date.now()), budget: 'maintenance'})
  }
}
