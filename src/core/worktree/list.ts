/**
 * `yard worktree list` (DESIGN.md §4.1, Appendix A): main first, then every worktree git knows
 * under the root, with identity, dirty counts and ahead/behind, the per-worktree status gathered
 * in parallel.
 */
import {existsSync} from 'node:fs'

import type {OffsetSource, Target} from '../../sdk/target.js'
import type {YardContext} from '../kernel/context.js'
import type {Trust} from './trust-record.js'

import {type GitReader, openGitReader} from '../../sdk/git-read.js'
import {gitLinkProblem} from '../workspace/git-link.js'
import {aheadBehind, branchConfig, type DirtyCounts, dirtyCountsMany} from '../workspace/git.js'
import {gitWorktrees, listIdentities, openWorkspace, worktreesUnderRoot} from '../workspace/workspace.js'
import {shortRef} from './base.js'

/** The git config key recording a branch's base (DESIGN.md §4.1): `branch.<branch>.yardBase`. */
export const BASE_KEY = 'yardBase'

/** How many checkouts are asked about ahead/behind at once. */
const STATUS_CONCURRENCY = 8

/**
 * From how many checkouts compared with an upstream or base a one-shot listing loads
 * isomorphic-git to spare the rev-list of those at it: loading costs ~50 ms, about what five or
 * six rev-list processes cost here (bench/dashboard.bench.ts).
 */
const IN_PROCESS_FROM = 8

/** One row of `yard worktree list --json` (DESIGN.md Appendix A). */
export interface WorktreeRow {
  name: string
  /** Short branch name; null when detached. */
  branch: string | null
  path: string
  /** Commit checked out; null when git does not know one (an unborn branch). */
  head: string | null
  /** The recorded base (`branch.<branch>.yardBase`, shortened), or null. */
  base: string | null
  offset: number
  offsetSource: OffsetSource
  project: string
  /** Null when the directory is missing. */
  dirty: DirtyCounts | null
  /** Commits ahead of / behind the upstream, else the recorded base; null when there is neither. */
  ahead: number | null
  behind: number | null
  /** The directory is gone (deleted by hand, or on a volume that is not mounted). */
  missing: boolean
  locked: boolean
  /** `untrusted` when yard.local.toml records it so (`[worktrees.NAME] trust`): it runs on a machine of its own. */
  trust: Trust
}

/** Runs `work` over `items` with at most `limit` running at once, keeping the order. */
async function mapLimit<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = Array.from({length: items.length})
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const index = next++
      results[index] = await work(items[index])
    }
  }

  await Promise.all(Array.from({length: Math.min(limit, items.length)}, worker))
  return results
}

/** A checkout as known before its status: a row without dirty and ahead/behind, plus its identity. */
export type ListedCheckout = Omit<WorktreeRow, 'dirty' | 'ahead' | 'behind'> & {target: Target}

/**
 * Lists main and the worktrees under the root (DESIGN.md §4.1). `WT_OFFSET` is ignored, with a
 * note, as by every listing. `onListed` gets the checkouts as soon as they are known, before
 * each one's `git status` (the dashboard shows them at once). `inProcess` (long-lived callers:
 * the dashboard, the MCP server) reads the branch config and upstreams with isomorphic-git and
 * asks `git rev-list` only about checkouts whose HEAD is not where they are compared with
 * (src/sdk/git-read.ts); without it, that last part only from `IN_PROCESS_FROM` such
 * checkouts. git answers where the repository cannot be read so.
 * @throws InputError (exit 2) outside a repository or for invalid config or pins.
 */
export async function listWorktrees(
  context: YardContext,
  options: {onListed?: (checkouts: ListedCheckout[]) => void; inProcess?: boolean} = {},
): Promise<WorktreeRow[]> {
  const workspace = await openWorkspace(context)
  const {mainPath} = workspace
  const reader = options.inProcess ? await openGitReader(workspace.commonDir) : undefined
  const [all, bases, upstreams] = await Promise.all([
    gitWorktrees(workspace, context),
    reader ? reader.branchConfig(BASE_KEY) : branchConfig(context.runner, mainPath, BASE_KEY.toLowerCase()),
    branchUpstreams(context, mainPath, reader),
  ])
  const underRoot = await worktreesUnderRoot(workspace, context, all)
  const identities = await listIdentities(workspace, context, [], underRoot)
  const byName = new Map(underRoot.map((entry) => [entry.name, entry.worktree]))
  const main = all.find((worktree) => worktree.path === mainPath) ?? all[0]
  const checkouts = identities.map((row) => ({row, worktree: row.target.isMain ? main : byName.get(row.target.name)!}))
  const base = (worktree: (typeof checkouts)[number]['worktree']) =>
    worktree.branch === undefined ? undefined : bases.get(worktree.branch)
  const listed = checkouts.map(({row: {target}, worktree}): ListedCheckout => ({
    name: target.name,
    branch: worktree.branch ?? null,
    path: worktree.path,
    head: worktree.head ?? null,
    base: base(worktree) === undefined ? null : shortRef(base(worktree)!),
    offset: target.offset,
    offsetSource: target.offsetSource,
    project: target.project,
    missing: !existsSync(worktree.path),
    locked: worktree.locked,
    trust: target.isMain ? 'trusted' : (workspace.config.trust[target.name] ?? 'trusted'),
    target,
  }))
  options.onListed?.(listed)
  // An untrusted checkout whose .git link was changed gets no git run in it (git-link.ts).
  const unlinked = new Set(
    listed
      .filter((checkout) => checkout.trust === 'untrusted' && !checkout.missing)
      .flatMap((checkout) => {
        const problem = gitLinkProblem(workspace.commonDir, checkout.path)
        if (problem === undefined) return []
        context.warn(
          `warning: the git link of untrusted worktree ${checkout.name} was changed (${problem}); yard runs no git there, so its status is not shown`,
        )
        return [checkout.name]
      }),
  )
  // Dirty counts of every present checkout in a few batched processes; ahead/behind per checkout.
  const present = listed.filter((checkout) => !checkout.missing && !unlinked.has(checkout.name))
  const against = (worktree: (typeof checkouts)[number]['worktree']) =>
    (worktree.branch === undefined ? undefined : upstreams.get(worktree.branch)) ?? base(worktree)
  const compared = checkouts.filter(
    ({worktree}) => worktree.head !== undefined && against(worktree) !== undefined,
  ).length
  // Opened beside the status processes, not before them.
  const resolver =
    reader !== undefined || compared < IN_PROCESS_FROM ? Promise.resolve(reader) : openGitReader(workspace.commonDir)
  const [dirty, counts] = await Promise.all([
    dirtyCountsMany(
      context.runner,
      present.map((checkout) => checkout.path),
      undefined,
      {
        commonDir: workspace.commonDir,
        checkouts: new Set(
          present.filter((checkout) => checkout.trust === 'untrusted').map((checkout) => checkout.path),
        ),
      },
    ).then((found) => new Map(present.map((checkout, index) => [checkout.name, found[index]]))),
    mapLimit(checkouts, STATUS_CONCURRENCY, async ({worktree}) => {
      const comparedWith = against(worktree)
      if (worktree.head === undefined || comparedWith === undefined) return undefined
      // A checkout where it is compared with is 0 ahead, 0 behind: no rev-list needed.
      const refs = await resolver
      if (refs && (await refs.resolve(comparedWith)) === worktree.head) return {ahead: 0, behind: 0}
      return aheadBehind(context.runner, mainPath, worktree.head, comparedWith)
    }),
  ])
  // The keys in the order of DESIGN.md Appendix A.
  return listed.map((checkout, index) => ({
    name: checkout.name,
    branch: checkout.branch,
    path: checkout.path,
    head: checkout.head,
    base: checkout.base,
    offset: checkout.offset,
    offsetSource: checkout.offsetSource,
    project: checkout.project,
    dirty: dirty.get(checkout.name) ?? null,
    ahead: counts[index]?.ahead ?? null,
    behind: counts[index]?.behind ?? null,
    missing: checkout.missing,
    locked: checkout.locked,
    trust: checkout.trust,
  }))
}

/** Short branch name → its upstream's full ref, for branches that have one (in process with a reader that can tell). */
async function branchUpstreams(
  context: YardContext,
  mainPath: string,
  reader?: GitReader,
): Promise<Map<string, string>> {
  const inProcess = reader ? await reader.upstreams() : undefined
  if (inProcess) return inProcess
  const result = await context.runner.git(
    ['for-each-ref', '--format=%(refname:lstrip=2)%00%(upstream)', 'refs/heads/'],
    {cwd: mainPath},
  )
  const upstreams = new Map<string, string>()
  for (const line of result.stdout.split('\n')) {
    const [branch, upstream] = line.split('\0', 2)
    if (branch && upstream) upstreams.set(branch, upstream)
  }

  return upstreams
}
