/**
 * The git facade (DESIGN.md §2; STYLE.md "Processes and git"): the few git questions and
 * answers the worktree use cases share, each one git CLI call through the process adapter
 * (argv arrays, `GIT_TERMINAL_PROMPT=0`, `LC_ALL=C`). Refs and paths that come from users are
 * checked not to start with `-` before they get here.
 */
import path from 'node:path'

import type {ProcessRunner} from '../../sdk/process.js'

import {InputError} from '../../sdk/errors.js'
import {UNTRUSTED_STATUS, untrustedGit} from './git-link.js'

/** The commit `ref` names (`git rev-parse --verify REF^{commit}`), or undefined. */
export async function resolveCommit(runner: ProcessRunner, cwd: string, ref: string): Promise<string | undefined> {
  const result = await runner.git(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], {cwd, allowFailure: true})
  return result.exitCode === 0 ? result.stdout.trim() : undefined
}

/** `refs/remotes/origin/x` for `origin/x`; undefined for a commit id or an expression (`HEAD~2`). */
export async function fullRefName(runner: ProcessRunner, cwd: string, ref: string): Promise<string | undefined> {
  const result = await runner.git(['rev-parse', '--symbolic-full-name', ref], {cwd, allowFailure: true})
  const name = result.stdout.trim()
  return result.exitCode === 0 && name.startsWith('refs/') ? name : undefined
}

export interface RefEntry {
  /** The object id the ref points to. */
  oid: string
  /** For a symbolic ref (`refs/remotes/origin/HEAD`), the ref it points to. */
  symref?: string
}

/**
 * Reads exactly the named full refs in one `git for-each-ref`; absent refs are missing from
 * the map. (ref-files.ts `readRefFiles` answers the same from the files, where it can.)
 */
export async function readRefs(
  runner: ProcessRunner,
  cwd: string,
  refs: readonly string[],
): Promise<Map<string, RefEntry>> {
  const result = await runner.git(['for-each-ref', '--format=%(refname)%00%(objectname)%00%(symref)', ...refs], {cwd})
  const wanted = new Set(refs)
  const found = new Map<string, RefEntry>()
  for (const line of result.stdout.split('\n')) {
    const [refname, oid, symref] = line.split('\0', 3)
    if (!wanted.has(refname)) continue
    found.set(refname, symref ? {oid, symref} : {oid})
  }

  return found
}

/** The configured remotes (`git remote`). */
export async function listRemotes(runner: ProcessRunner, cwd: string): Promise<string[]> {
  const result = await runner.git(['remote'], {cwd})
  return result.stdout
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
}

/** The remote a ref name like `origin/main` or `refs/remotes/origin/main` belongs to, if any. */
export function remoteOf(ref: string, remotes: readonly string[]): string | undefined {
  const short = ref.replace(/^refs\/remotes\//, '')
  // Remote names may contain `/`: the longest one that prefixes the ref wins.
  return [...remotes].sort((a, b) => b.length - a.length).find((remote) => short.startsWith(`${remote}/`))
}

/**
 * Whether git would accept `branch` as a branch name, decided here without a process by the rules
 * of git-check-ref-format(1) for `refs/heads/<branch>` (as refs.c `check_refname_component`
 * applies them): no component empty, starting with `.` or ending with `.lock`; no `..`, `@{`,
 * control character, space, `~ ^ : ? * [ \`; no trailing `.`; and, for `--branch`, not `HEAD`
 * nor starting with `-`. Unlike `--branch`, `@{-N}` is not expanded to the branch it names: it
 * is refused as the name it is. test/core/workspace/git-branch-name.test.ts compares it with git.
 */
export function validBranchName(branch: string): boolean {
  if (branch === 'HEAD' || branch.startsWith('-') || branch.endsWith('.')) return false

  if (/[\u0000-\u0020\u007F~^:?*[\\]|\.\.|@\{/.test(branch)) return false
  return branch
    .split('/')
    .every((component) => component !== '' && !component.startsWith('.') && !component.endsWith('.lock'))
}

/**
 * The error for a BRANCH yard refuses to create (exit 2); `why` defaults to git-check-ref-format(1)'s
 * refusal.
 */
export function invalidBranchName(branch: string, why = 'git check-ref-format --branch refuses it'): InputError {
  return new InputError(`invalid branch name "${branch}"`, {
    why,
    fix: 'choose another branch name (see git-check-ref-format(1))',
  })
}

/**
 * Refuses a BRANCH `git check-ref-format --branch` refuses (`validBranchName`, the same rules
 * without a process), and `@` (HEAD's shorthand, which it lets through).
 * @throws InputError (exit 2) `invalidBranchName`.
 */
export function requireValidBranchName(branch: string): void {
  // `--branch` lets `@` through as itself, yet `@` alone is git's name for HEAD (gitrevisions(7)):
  // `git checkout -B @` and `git worktree add -b @` would not make a branch "@".
  if (branch === '@') throw invalidBranchName(branch, '"@" alone is git\'s shorthand for HEAD (gitrevisions(7))')
  if (!validBranchName(branch)) throw invalidBranchName(branch)
}

export interface DirtyCounts {
  /** Tracked files with staged or unstaged changes (deletions and renames included). */
  modified: number
  /** Untracked files that are not ignored. */
  untracked: number
}

/**
 * Counts of `git status --porcelain -z --untracked-files=all` in a checkout; `untrusted`: one whose
 * files untrusted code writes, a worktree of the repository at `commonDir` (git-link.ts
 * untrustedGit: git through the repository's own record of it, no submodule looked into).
 * @throws RefusedError (exit 3) for an untrusted checkout the repository has no record of.
 */
export async function dirtyCounts(
  runner: ProcessRunner,
  checkout: string,
  options: {untrusted?: {commonDir: string}} = {},
): Promise<DirtyCounts> {
  const [config, status] = options.untrusted
    ? [untrustedGit(options.untrusted.commonDir, checkout), UNTRUSTED_STATUS]
    : [[], []]
  const result = await runner.git([...config, 'status', '--porcelain', '-z', '--untracked-files=all', ...status], {
    cwd: checkout,
  })
  const counts: DirtyCounts = {modified: 0, untracked: 0}
  const entries = result.stdout.split('\0')
  for (let index = 0; index < entries.length; index++) {
    const entry = entries[index]
    if (entry.length < 3) continue
    if (entry.startsWith('??')) counts.untracked++
    else counts.modified++
    // A rename or copy carries its source path as the next entry.
    if (entry.startsWith('R') || entry.startsWith('C')) index++
  }

  return counts
}

/** The config key listing checkouts for `git for-each-repo`: given with `-c`, never written. */
const STATUS_CHECKOUTS_KEY = 'yard.statuscheckout'

/** Counts of one checkout's `git status --porcelain=v2 -z` entries (headers skipped). */
function countV2(entries: readonly string[]): DirtyCounts {
  const counts: DirtyCounts = {modified: 0, untracked: 0}
  for (let index = 0; index < entries.length; index++) {
    const entry = entries[index]
    if (entry.startsWith('? ')) counts.untracked++
    else if (entry.startsWith('1 ') || entry.startsWith('u ')) counts.modified++
    else if (entry.startsWith('2 ')) {
      counts.modified++
      index++ // a rename or copy carries its source path as the next entry
    }
  }

  return counts
}

/**
 * `dirtyCounts` of many checkouts with few processes (the dashboard asks about 50 every 2 s):
 * `git for-each-repo` (git-for-each-repo(1), git ≥ 2.30) runs `git status --porcelain=v2
 * --branch -z --untracked-files=all` in each checkout of a batch, `batches` batches side by side;
 * each checkout's output starts with its `# branch.oid` header, in the order given.
 * `GIT_OPTIONAL_LOCKS=0`: status never rewrites the index (git(1), --no-optional-locks), so it
 * never contends with the user's own git. A checkout whose status fails stops its batch (git
 * 2.39 has no `--keep-going`), and an older git has no for-each-repo: the checkouts without an
 * answer are asked one by one with `dirtyCounts`, so a failure is reported as that checkout's.
 * The checkouts in `untrusted` are asked one by one as `dirtyCounts` does with `untrusted`.
 * @returns the counts in the order of `checkouts`
 * @throws OperationError (exit 1) when `git status` fails in a checkout (as `dirtyCounts`).
 */
export async function dirtyCountsMany(
  runner: ProcessRunner,
  checkouts: readonly string[],
  batches = 4,
  untrusted: {commonDir: string; checkouts: ReadonlySet<string>} = {commonDir: '', checkouts: new Set()},
): Promise<DirtyCounts[]> {
  // Untrusted checkouts are asked alone, through the repository's record of them (git-link.ts).
  if (untrusted.checkouts.size > 0) {
    const trusted = checkouts.filter((checkout) => !untrusted.checkouts.has(checkout))
    const [counted, alone] = await Promise.all([
      dirtyCountsMany(runner, trusted, batches),
      Promise.all(
        checkouts
          .filter((checkout) => untrusted.checkouts.has(checkout))
          .map(
            async (checkout) =>
              [checkout, await dirtyCounts(runner, checkout, {untrusted: {commonDir: untrusted.commonDir}})] as const,
          ),
      ),
    ])
    const answers = new Map([...trusted.map((checkout, index) => [checkout, counted[index]] as const), ...alone])
    return checkouts.map((checkout) => answers.get(checkout)!)
  }

  const size = Math.max(1, Math.ceil(checkouts.length / batches))
  const chunks = Array.from({length: Math.ceil(checkouts.length / size)}, (_, index) =>
    checkouts.slice(index * size, (index + 1) * size),
  )
  const answered = await Promise.all(
    chunks.map(async (chunk) => {
      const listed = chunk.flatMap((checkout) => ['-c', `${STATUS_CHECKOUTS_KEY}=${checkout}`])
      // Run from outside any repository: started inside one, git exports its GIT_DIR to the
      // children, and each `git -C <checkout> status` then reads that repository's index.
      const result = await runner.git(
        [
          ...listed,
          'for-each-repo',
          `--config=${STATUS_CHECKOUTS_KEY}`,
          '--',
          'status',
          '--porcelain=v2',
          '--branch',
          '-z',
          '--untracked-files=all',
        ],
        {
          cwd: path.parse(chunk[0]).root,
          env: {GIT_OPTIONAL_LOCKS: '0', GIT_DIR: undefined, GIT_WORK_TREE: undefined},
          allowFailure: true,
        },
      )
      const sections: string[][] = []
      for (const entry of result.stdout.split('\0')) {
        if (entry.startsWith('# branch.oid ')) sections.push([])
        else if (entry !== '' && sections.length > 0) sections.at(-1)!.push(entry)
      }

      // A failed batch's last section may be cut short: only sections followed by another, or all of
      // a batch that succeeded, count.
      const complete =
        result.exitCode === 0 ? sections.slice(0, chunk.length) : sections.slice(0, Math.max(0, sections.length - 1))
      return Promise.all(
        chunk.map(async (checkout, index) =>
          index < complete.length ? countV2(complete[index]) : dirtyCounts(runner, checkout),
        ),
      )
    }),
  )
  return answered.flat()
}

/**
 * `branch.<name>.<key>` for every branch that has it, in one `git config --get-regexp`
 * (keys are matched case-insensitively, as git does).
 */
export async function branchConfig(runner: ProcessRunner, cwd: string, key: string): Promise<Map<string, string>> {
  const result = await runner.git(['config', '--null', '--get-regexp', String.raw`^branch\..*\.${key}$`], {
    cwd,
    allowFailure: true,
  })
  const values = new Map<string, string>()
  for (const record of result.stdout.split('\0')) {
    const newline = record.indexOf('\n')
    if (newline === -1) continue
    const variable = record.slice(0, newline)
    values.set(variable.slice('branch.'.length, variable.length - key.length - 1), record.slice(newline + 1))
  }

  return values
}

/** Commits in `left` and not in `right`, and the other way round (`rev-list --left-right --count`). */
export async function aheadBehind(
  runner: ProcessRunner,
  cwd: string,
  left: string,
  right: string,
): Promise<{ahead: number; behind: number} | undefined> {
  const result = await runner.git(['rev-list', '--left-right', '--count', `${left}...${right}`, '--'], {
    cwd,
    allowFailure: true,
  })
  const match = /^(\d+)\s+(\d+)/.exec(result.stdout)
  return result.exitCode === 0 && match ? {ahead: Number(match[1]), behind: Number(match[2])} : undefined
}

/**
 * Gives `remote` the default fetch refspec (`+refs/heads/*:refs/remotes/<remote>/*`) when it has
 * none: a bare clone has none (git-clone(1) `--bare`), so its `git fetch` would update no
 * remote-tracking branch and every `origin/...` base would stay as old as the clone.
 * @returns the refspec added, or undefined when the remote had one.
 */
export async function ensureFetchRefspec(
  runner: ProcessRunner,
  cwd: string,
  remote: string,
): Promise<string | undefined> {
  const existing = await runner.git(['config', '--get-all', `remote.${remote}.fetch`], {cwd, allowFailure: true})
  if (existing.stdout.trim() !== '') return undefined
  const refspec = `+refs/heads/*:refs/remotes/${remote}/*`
  await runner.git(['config', '--add', `remote.${remote}.fetch`, refspec], {cwd})
  return refspec
}
