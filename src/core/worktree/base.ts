/**
 * What a new worktree's branch forks from (DESIGN.md §4.1): `--from` (must resolve) →
 * `YARD_WORKTREE_BASE` / `[worktrees] base` (warn and fall through) → `origin/HEAD` → the first of
 * `origin/main`, `main`, `origin/master`, `master` → the current HEAD (said out loud). Never the
 * main checkout's HEAD while anything better exists (cases 1 and 2 of the shared cases).
 */
import type {ProjectConfig} from '../config/config.js'
import type {YardContext} from '../kernel/context.js'

import {InputError} from '../../sdk/errors.js'
import {shellQuote} from '../../sdk/shell.js'
import {originLabel} from '../config/config.js'
import {fullRefName, invalidBranchName, readRefs, type RefEntry, remoteOf, resolveCommit} from '../workspace/git.js'

export type BaseSource = 'from' | 'config' | 'origin-head' | 'default-branch' | 'current-head'

export interface Base {
  /** The ref as yard names it to the user and records it (`origin/develop`, `main`, or a commit id). */
  ref: string
  /** What `branch.<branch>.yardBase` records: the full ref name, or the commit id. */
  recorded: string
  commit: string
  source: BaseSource
}

/** Refs the automatic rule looks at, in order (DESIGN.md §4.1). */
export const DEFAULT_BASES = [
  'refs/remotes/origin/main',
  'refs/heads/main',
  'refs/remotes/origin/master',
  'refs/heads/master',
] as const
export const ORIGIN_HEAD = 'refs/remotes/origin/HEAD'

/** `refs/remotes/origin/main` → `origin/main`, `refs/heads/main` → `main`. */
export function shortRef(ref: string): string {
  return ref.replace(/^refs\/(heads|remotes|tags)\//, '')
}

/** Refuses a ref that git would read as an option (STYLE.md: `worktree add` takes no `--`). */
export function checkNotOption(value: string, what: string, fix: string): void {
  if (value.startsWith('-')) {
    throw new InputError(`invalid ${what} "${value}": it starts with "-"`, {why: 'git would read it as an option', fix})
  }
}

/**
 * Refuses a BRANCH that git cannot create or that would shadow another ref, unless it already
 * exists as a local branch (which is checked out as it is): a name `git check-ref-format
 * --branch` refuses (`HEAD`), `@` (git's shorthand for HEAD), a name starting with `refs/`
 * (`refs/heads/refs/heads/x` could never be named by what was typed), and the short name of a
 * remote-tracking branch (`origin/main`, `<remote>/HEAD`): `refs/heads/origin/main` would make `origin/main` name
 * the local branch in every worktree (git-rev-parse(1), "SPECIFYING REVISIONS": refs/heads/ is
 * searched before refs/remotes/).
 * @param request `valid`: check-ref-format's answer; `local`, `remoteTracking`: whether
 *   `refs/heads/<branch>` and `refs/remotes/<branch>` exist.
 * @throws InputError (exit 2) before anything is created.
 */
export function checkBranchRequest(
  branch: string,
  name: string,
  request: {valid: boolean; local: boolean; remoteTracking: boolean},
): void {
  if (request.local) return
  if (request.remoteTracking) {
    const slash = branch.indexOf('/')
    throw new InputError(`invalid branch "${branch}": it is the name of the remote-tracking branch ${branch}`, {
      why: `a local branch refs/heads/${branch} would shadow refs/remotes/${branch}: "${branch}" would then name the local branch in every worktree`,
      fix: `to fork a new branch from it: \`yard worktree add ${name} --from ${shellQuote(branch)}\`${branch.endsWith('/HEAD') ? '' : `; to work on it: \`yard worktree add ${name} ${shellQuote(branch.slice(slash + 1))}\` (tracks ${branch})`}`,
    })
  }

  if (!request.valid || branch === '@' || branch.startsWith('refs/')) {
    throw invalidBranchName(
      branch,
      branch === '@'
        ? 'git reads "@" as HEAD'
        : request.valid
          ? `the branch would be refs/heads/${branch}, and "${branch}" names the ref ${branch}, not it (git-rev-parse(1), "SPECIFYING REVISIONS")`
          : 'git check-ref-format --branch refuses it (HEAD, for one, always means the checked-out commit)',
    )
  }
}

/** The configured base (env or `[worktrees] base`) and where it came from, for messages. */
export function configuredBase(config: ProjectConfig): {ref: string; origin: string} | undefined {
  const ref = config.worktrees.base
  return ref === undefined
    ? undefined
    : {ref, origin: originLabel(config.origins['worktrees.base'], 'worktrees', 'base')}
}

/**
 * The remote to fetch before resolving the base: the remote of `--from` or the configured base
 * when it names a remote-tracking ref, none for a local one; for the automatic rule, `origin`.
 */
export function baseRemote(
  from: string | undefined,
  configured: string | undefined,
  remotes: readonly string[],
): string | undefined {
  const explicit = from ?? configured
  if (explicit !== undefined) {
    const remote = remoteOf(explicit, remotes)
    if (remote !== undefined || from !== undefined) return remote
  }

  return remotes.includes('origin') ? 'origin' : undefined
}

async function resolveNamed(
  context: YardContext,
  cwd: string,
  ref: string,
  source: BaseSource,
): Promise<Base | undefined> {
  const commit = await resolveCommit(context.runner, cwd, ref)
  if (commit === undefined) return undefined
  const full = await fullRefName(context.runner, cwd, ref)
  return {ref: full === undefined ? ref : shortRef(full), recorded: full ?? commit, commit, source}
}

/**
 * Resolves the base of a new branch (DESIGN.md §4.1). `refs` must hold what `readRefs` gives
 * for `ORIGIN_HEAD` and `DEFAULT_BASES` (read once by the caller with its other refs).
 * @throws InputError (exit 2) when `--from` does not resolve to a commit.
 */
export async function resolveBase(
  context: YardContext,
  options: {mainPath: string; from?: string; config: ProjectConfig; refs: Map<string, RefEntry>},
): Promise<Base> {
  const {mainPath, from, config, refs} = options
  if (from !== undefined) {
    const base = await resolveNamed(context, mainPath, from, 'from')
    if (base) return base
    throw new InputError(`--from ${from} does not name a commit`, {
      why: 'git cannot resolve it to a branch, tag or commit here, even after fetching its remote',
      fix: 'check the name (`git branch -a`, `git tag`), or leave --from out to fork from the default branch',
    })
  }

  const configured = configuredBase(config)
  if (configured !== undefined) {
    const base = await resolveNamed(context, mainPath, configured.ref, 'config')
    if (base) return base
    context.warn(
      `warning: the base "${configured.ref}" from ${configured.origin} does not resolve; falling back to origin/HEAD, origin/main, main, origin/master, master`,
    )
  }

  const originHead = refs.get(ORIGIN_HEAD)
  if (originHead?.symref) {
    const target =
      refs.get(originHead.symref) ??
      (await readRefs(context.runner, mainPath, [originHead.symref])).get(originHead.symref)
    if (target)
      return {ref: shortRef(originHead.symref), recorded: originHead.symref, commit: target.oid, source: 'origin-head'}
  }

  for (const candidate of DEFAULT_BASES) {
    const entry = refs.get(candidate)
    if (entry) return {ref: shortRef(candidate), recorded: candidate, commit: entry.oid, source: 'default-branch'}
  }

  const head = await resolveCommit(context.runner, context.cwd, 'HEAD')
  if (head === undefined) {
    throw new InputError('there is nothing to fork a new branch from', {
      why: 'the repository has no origin/HEAD, origin/main, main, origin/master or master, and HEAD has no commit yet',
      fix: 'make a first commit, or pass --from REF',
    })
  }

  const headRef = await fullRefName(context.runner, context.cwd, 'HEAD')
  context.warn(
    `warning: no origin/HEAD, origin/main, main, origin/master or master: forking from the current HEAD (${headRef ? shortRef(headRef) : 'detached'} at ${head.slice(0, 12)}); pass --from REF or set [worktrees] base to choose`,
  )
  return {ref: headRef ? shortRef(headRef) : head, recorded: headRef ?? head, commit: head, source: 'current-head'}
}
