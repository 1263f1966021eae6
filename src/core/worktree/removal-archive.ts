/**
 * Work in a worktree that its branch and the snapshot ref cannot hold (DESIGN.md §4.1, `yard
 * worktree remove`): submodules with commits not on their remote or with changes (their git dirs
 * live under `<common dir>/worktrees/<name>/modules/` and go with the worktree), nested
 * repositories (an untracked directory with its own `.git`, which a snapshot could only record
 * as a dangling gitlink), and gitignored files. Found by `findOutsideWork`; with `--force` saved
 * by `archiveOutsideWork` under `<state dir>/removed/<prefix>/<name>-<stamp>/`, each part with
 * the command that brings it back.
 */
import {existsSync, promises as fs} from 'node:fs'
import path from 'node:path'

import type {YardContext} from '../kernel/context.js'

import {OperationError} from '../../sdk/errors.js'
import {formatArgv, type ProcessRunner} from '../../sdk/process.js'
import {stateDir} from '../kernel/state.js'
import {UNTRUSTED_STATUS, untrustedGit} from '../workspace/git-link.js'
import {dirtyCounts} from '../workspace/git.js'
import {copyEntry, ignoredMatching} from '../workspace/ignored-files.js'
import {AGENT_HOME_DIR} from './agent-home.js'

/** A submodule whose git dir holds work found nowhere else. */
export interface SubmoduleWork {
  /** Relative to the checkout. */
  path: string
  /** Commits of its HEAD and branches on none of its remote-tracking branches. */
  commits: number
  modified: number
  /** Untracked paths, its nested repositories left out (they are archived on their own). */
  untracked: number
  /** Untracked directories of the submodule with their own `.git`, relative to the submodule. */
  nested: string[]
}

export interface OutsideWork {
  submodules: SubmoduleWork[]
  /** Untracked directories with their own `.git`, relative to the checkout, without a trailing `/`. */
  nested: string[]
  /**
   * Every gitignored path remove deletes (a wholly ignored directory is one path, `dir/`); yard's
   * own `.yard/` left out.
   */
  ignored: string[]
  /** The ignored files that match `[worktrees] keep-ignored`: unsaved work, copied to the archive with `--force`. */
  keepIgnored: string[]
  /**
   * Of an untrusted worktree: its checked-out submodules and nested repositories, into which yard
   * runs no git (their `.git` may be its box's, whose config git would obey on the host:
   * git-link.ts UNTRUSTED_CONFIG). Unsaved work that cannot be told: refuses without `--force`, and
   * is not saved with it.
   */
  uninspected: string[]
}

/** One saved part: where it went and the command (run from anywhere) that restores it into the re-added worktree. */
export interface ArchivedPart {
  kind: 'submodule' | 'nested' | 'ignored' | 'agent-home'
  /** The part's path in the checkout (`.` for ignored files). */
  path: string
  /** The files written, absolute. */
  files: string[]
  restore: string
}

const split = (output: string) => output.split('\0').filter((entry) => entry !== '')

/**
 * What the checkout holds outside its branch and its snapshot. `keepPatterns` are gitignore-style
 * patterns (`[worktrees] keep-ignored`, matched by `ignoredMatching`); a matching file with the
 * same content as the file at the same path in `mainPath` is left out of `keepIgnored`.
 * @throws OperationError (exit 1) when git fails in the checkout or a submodule.
 */
export async function findOutsideWork(
  runner: ProcessRunner,
  checkout: string,
  keepPatterns: readonly string[],
  mainPath?: string,
  options: {untrusted?: {commonDir: string}} = {},
): Promise<OutsideWork> {
  const [config, statusOptions] = options.untrusted
    ? [untrustedGit(options.untrusted.commonDir, checkout), UNTRUSTED_STATUS]
    : [[], []]
  const [status, staged, matching] = await Promise.all([
    runner.git(
      [...config, 'status', '--porcelain', '-z', '--ignored=matching', '--untracked-files=all', ...statusOptions],
      {cwd: checkout},
    ),
    runner.git([...config, 'ls-files', '--stage', '-z'], {cwd: checkout}),
    ignoredMatching(runner, checkout, keepPatterns, config),
  ])
  // A copy of the main checkout's file (what `worktree add` copied in, unchanged) loses nothing.
  const keepIgnored =
    mainPath === undefined
      ? matching
      : (
          await Promise.all(
            matching.map(async (file) =>
              (await sameFile(path.join(checkout, file), path.join(mainPath, file))) ? undefined : file,
            ),
          )
        ).filter((file): file is string => file !== undefined)
  const entries = split(status.stdout)
  const nested = nestedRepositories(checkout, entries)
  const ignored = entries
    .filter((entry) => entry.startsWith('!! ') && !entry.startsWith('!! .yard/'))
    .map((entry) => entry.slice(3))
  const gitlinks = split(staged.stdout)
    .filter((line) => line.startsWith('160000 '))
    .map((line) => line.slice(line.indexOf('\t') + 1))
  const populated = gitlinks.filter((sub) => existsSync(path.join(checkout, sub, '.git')))
  if (options.untrusted)
    return {submodules: [], nested: [], ignored, keepIgnored, uninspected: [...populated, ...nested]}
  const inSubmodules = await Promise.all(populated.map(async (sub) => submoduleWork(runner, checkout, sub)))
  // A nested repository inside a submodule is archived like one in the checkout: the submodule's
  // patch could only record it as a gitlink to a commit that lives nowhere else.
  for (const sub of inSubmodules) nested.push(...sub.nested.map((inner) => path.join(sub.path, inner)))
  // One holding a nested repository stays listed: its restore (`submodule update --init`) must run
  // before the nested one's.
  const submodules = inSubmodules.filter(
    (work) => work.commits + work.modified + work.untracked + work.nested.length > 0,
  )
  return {submodules, nested, ignored, keepIgnored, uninspected: []}
}

/** The `?? dir/` entries of `git status --porcelain -z` in `dir` that hold a `.git`, without the `/`. */
function nestedRepositories(dir: string, entries: string[]): string[] {
  return entries
    .filter(
      (entry) => entry.startsWith('?? ') && entry.endsWith('/') && existsSync(path.join(dir, entry.slice(3), '.git')),
    )
    .map((entry) => entry.slice(3, -1))
}

async function sameFile(a: string, b: string): Promise<boolean> {
  const [left, right] = await Promise.all([
    fs.readFile(a).catch(() => undefined),
    fs.readFile(b).catch(() => undefined),
  ])
  return left !== undefined && right !== undefined && left.equals(right)
}

async function submoduleWork(runner: ProcessRunner, checkout: string, sub: string): Promise<SubmoduleWork> {
  const cwd = path.join(checkout, sub)
  const [dirty, commits, status] = await Promise.all([
    dirtyCounts(runner, cwd),
    // An unborn HEAD (a submodule without a commit) has nothing to bundle.
    runner.git(['rev-list', '--count', 'HEAD', '--branches', '--not', '--remotes', '--'], {cwd, allowFailure: true}),
    runner.git(['status', '--porcelain', '-z', '--untracked-files=all'], {cwd}),
  ])
  const nested = nestedRepositories(cwd, split(status.stdout))
  return {
    path: sub,
    commits: commits.exitCode === 0 ? Number(commits.stdout.trim()) : 0,
    modified: dirty.modified,
    untracked: Math.max(0, dirty.untracked - nested.length),
    nested,
  }
}

/** Whether anything in `work` is unsaved (refuses a remove without `--force`). */
export function hasOutsideWork(work: OutsideWork): boolean {
  return work.submodules.length + work.nested.length + work.keepIgnored.length + work.uninspected.length > 0
}

/** The archive directory of one removal: `<state dir>/removed/<prefix>/<name>-<stamp>`. */
export function removalArchiveDir(env: NodeJS.ProcessEnv, prefix: string, stampedName: string): string {
  return path.join(stateDir(env), 'removed', prefix, stampedName)
}

/**
 * Saves the parts of `work` into `dir`: per submodule a git bundle of its unpushed commits
 * (`HEAD` and its branches) and a binary patch of its changes, untracked files included (built
 * through a copy of its index, so the submodule is untouched); per nested repository a tar of the
 * whole directory, its `.git` included, plus a bundle of its refs when it has any; the
 * keep-ignored files copied under `ignored/`, paths kept.
 * @returns the parts, each with its restore command for a worktree re-added at `checkout`.
 * @throws the fs or git error when something cannot be written (the caller stops the removal).
 */
export async function archiveOutsideWork(
  context: YardContext,
  checkout: string,
  work: OutsideWork,
  dir: string,
): Promise<ArchivedPart[]> {
  const parts: ArchivedPart[] = []
  for (const sub of work.submodules)
    parts.push(await saveSubmodule(context, checkout, sub, path.join(dir, 'submodules', sub.path)))
  for (const nested of work.nested)
    parts.push(await saveNested(context, checkout, nested, path.join(dir, 'nested', nested)))
  if (work.keepIgnored.length > 0) {
    const target = path.join(dir, 'ignored')
    const files: string[] = []
    for (const file of work.keepIgnored) {
      const to = path.join(target, file)
      await fs.mkdir(path.dirname(to), {recursive: true})
      await copyEntry(path.join(checkout, file), to, {overwrite: true})
      files.push(to)
    }

    parts.push({kind: 'ignored', path: '.', files, restore: formatArgv(['cp', '-a', `${target}/.`, `${checkout}/`])})
  }

  return parts
}

async function saveSubmodule(
  context: YardContext,
  checkout: string,
  sub: SubmoduleWork,
  dir: string,
): Promise<ArchivedPart> {
  const cwd = path.join(checkout, sub.path)
  const git = async (args: string[], env: Record<string, string> = {}) => context.runner.git(args, {cwd, env})
  await fs.mkdir(dir, {recursive: true})
  const files: string[] = []
  const steps = [['git', '-C', checkout, 'submodule', 'update', '--init', '--', sub.path]]
  if (sub.commits > 0) {
    const bundle = path.join(dir, 'unpushed.bundle')
    await git(['bundle', 'create', '--quiet', bundle, 'HEAD', '--branches', '--not', '--remotes'])
    files.push(bundle)
    steps.push(
      ['git', '-C', cwd, 'fetch', '--quiet', bundle, 'HEAD'],
      ['git', '-C', cwd, 'checkout', '--quiet', '--detach', 'FETCH_HEAD'],
    )
  }

  if (sub.modified + sub.untracked > 0) {
    const patch = path.join(dir, 'changes.patch')
    const index = path.join(dir, 'index.tmp')
    const real = path.resolve(cwd, (await git(['rev-parse', '--git-path', 'index'])).stdout.trim())
    try {
      await fs.copyFile(real, index).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error
      })
      await git(['add', '--all', '--', ':/', ...sub.nested.map((inner) => `:(top,exclude)${inner}`)], {
        GIT_INDEX_FILE: index,
      })
      await fs.writeFile(
        patch,
        (await git(['diff', '--cached', '--binary', 'HEAD'], {GIT_INDEX_FILE: index})).stdout + '\n',
      )
    } finally {
      await fs.rm(index, {force: true})
    }

    files.push(patch)
    steps.push(['git', '-C', cwd, 'apply', patch])
  }

  return {kind: 'submodule', path: sub.path, files, restore: steps.map(formatArgv).join(' && ')}
}

async function saveNested(context: YardContext, checkout: string, nested: string, dir: string): Promise<ArchivedPart> {
  const source = path.join(checkout, nested)
  await fs.mkdir(dir, {recursive: true})
  const tar = path.join(dir, 'files.tar')
  await context.runner.run('tar', ['-cf', tar, '-C', source, '.'])
  const files = [tar]
  const bundle = path.join(dir, 'refs.bundle')
  // A repository without a commit has no refs to bundle (git refuses an empty bundle).
  const bundled = await context.runner.git(['bundle', 'create', '--quiet', bundle, '--all'], {
    cwd: source,
    allowFailure: true,
  })
  if (bundled.exitCode === 0) files.push(bundle)
  return {
    kind: 'nested',
    path: nested,
    files,
    restore: `${formatArgv(['mkdir', '-p', source])} && ${formatArgv(['tar', '-xf', tar, '-C', source])}`,
  }
}

/** The submodules, nested repositories and kept ignored files of a refusal, as `, …` clauses. */
export function describeOutside(outside: OutsideWork): string {
  const parts = outside.submodules.map(
    (sub) =>
      `submodule ${sub.path} (${plural(sub.commits, 'commit')} not on its remote, ${sub.modified} modified, ${sub.untracked} untracked)`,
  )
  parts.push(...outside.nested.map((nested) => `nested repository ${nested}/`))
  parts.push(
    ...outside.uninspected.map(
      (uninspected) =>
        `repository ${uninspected}/ (not inspected: yard runs no git in it in an untrusted worktree; --force deletes it unsaved)`,
    ),
  )
  if (outside.keepIgnored.length > 0)
    parts.push(
      `${plural(outside.keepIgnored.length, 'ignored file')} to keep ([worktrees] keep-ignored): ${outside.keepIgnored.join(', ')}`,
    )
  return parts.map((part) => `, ${part}`).join('')
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`
}

/**
 * The one command that brings everything back, from the snapshot's restore hint (`yard worktree
 * add …[ && git cherry-pick …]`): submodules right after the add (their commits must exist before
 * the snapshot's gitlinks are applied), then the snapshot's changes, nested repositories and
 * ignored files.
 */
export function restoreSequence(hint: string, parts: ArchivedPart[]): string {
  const [add, ...pick] = hint.split(' && ')
  const byKind = (kind: ArchivedPart['kind']) => parts.filter((part) => part.kind === kind).map((part) => part.restore)
  return [
    add,
    ...byKind('submodule'),
    ...pick,
    ...byKind('nested'),
    ...byKind('ignored'),
    ...byKind('agent-home'),
  ].join(' && ')
}

/**
 * `archiveOutsideWork` for a remove: an fs or git failure becomes an OperationError (exit 1)
 * saying nothing has been removed (the caller has not removed anything yet).
 */
export async function saveOutsideWork(
  context: YardContext,
  name: string,
  checkout: string,
  work: OutsideWork,
  dir: string,
): Promise<ArchivedPart[]> {
  try {
    return await archiveOutsideWork(context, checkout, work, dir)
  } catch (error) {
    throw new OperationError(
      `cannot archive the submodules, nested repositories or ignored files of ${name} to ${dir}: ${(error as Error).message}`,
      {
        why: 'removing the worktree would lose them; nothing has been removed',
        fix: 'free space or fix the permissions of the state directory (YARD_STATE_DIR), then run the command again',
        cause: error,
      },
    )
  }
}

/** The restore of the box's agent home from its archive (none when it was not archived). */
export function agentHomePart(archive: string | undefined, checkout: string): ArchivedPart[] {
  if (archive === undefined) return []
  const target = path.join(checkout, AGENT_HOME_DIR)
  return [
    {
      kind: 'agent-home',
      path: AGENT_HOME_DIR,
      files: [archive],
      restore: `${formatArgv(['mkdir', '-p', target])} && ${formatArgv(['cp', '-a', `${archive}/.`, `${target}/`])}`,
    },
  ]
}
