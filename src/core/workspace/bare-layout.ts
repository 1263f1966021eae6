/**
 * The bare layout (DESIGN.md §3.3): `repo/.bare` (a bare clone), `repo/.git` a file saying
 * `gitdir: ./.bare`, and every branch a worktree beside it (`repo/main`, `repo/feat`). Its main
 * checkout is the worktree on the remote's default branch, or the one `[project] main-worktree`
 * names; the repository's root — what the owner hash, the default prefix and the default
 * worktrees root come from — is the bare repository's parent, `repo`, which is where the same
 * repository's main checkout sits in the normal layout, so identity and offsets are the same in
 * both layouts.
 */
import {existsSync, lstatSync, readFileSync} from 'node:fs'
import path from 'node:path'

import {InputError} from '../../sdk/errors.js'
import {shellCommand} from '../../sdk/shell.js'

const roots = new Map<string, string>()

/**
 * The common dir of a linked worktree's `.git` file (gitrepository-layout(5): `gitdir:`, then
 * `commondir`), or undefined.
 */
function commonDirOf(checkout: string): string | undefined {
  const dotGit = path.join(checkout, '.git')
  try {
    if (!lstatSync(dotGit).isFile()) return undefined
    const gitDir = path.resolve(checkout, /^gitdir: (.*)$/m.exec(readFileSync(dotGit, 'utf8'))?.[1]?.trim() ?? '')
    const common = readFileSync(path.join(gitDir, 'commondir'), 'utf8').trim()
    return path.resolve(gitDir, common)
  } catch {
    return undefined
  }
}

/** Whether a git dir is bare: `core.bare = true` in its config (git-config(1)). */
export function isBareGitDir(gitDir: string): boolean {
  try {
    const text = readFileSync(path.join(gitDir, 'config'), 'utf8')
    const core = /^\s*\[core\]([^[]*)/m.exec(text)?.[1] ?? ''
    return /^\s*bare\s*=\s*true\s*$/im.test(core)
  } catch {
    return false
  }
}

/**
 * The repository's root for identity: the main checkout itself in the normal layout, the bare
 * repository's parent when the main checkout is a worktree of a bare repository. Reads two small
 * files once per path; the normal layout (a `.git` directory) costs one lstat.
 */
export function repositoryRoot(mainPath: string): string {
  const known = roots.get(mainPath)
  if (known !== undefined) return known
  const common = commonDirOf(mainPath)
  const root = common !== undefined && isBareGitDir(common) ? path.dirname(common) : mainPath
  roots.set(mainPath, root)
  return root
}

/** Whether `mainPath` is a worktree of a bare repository (the bare layout). */
export function isBareLayout(mainPath: string): boolean {
  return repositoryRoot(mainPath) !== mainPath
}

/**
 * `[project] main-worktree` as written in a checkout's yard.toml, if any (read raw: the file is
 * validated when loaded).
 */
function mainWorktreeSetting(
  checkout: string | undefined,
  read: (file: string) => Record<string, unknown> | undefined,
): string | undefined {
  if (checkout === undefined) return undefined
  const project = read(path.join(checkout, 'yard.toml'))?.project as Record<string, unknown> | undefined
  const value = project?.['main-worktree']
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined
}

/**
 * The main checkout of a bare repository with worktrees: the worktree `[project] main-worktree`
 * names (a path relative to the bare repository's parent, read from the yard.toml of the
 * default-branch worktree, else of the current checkout), else the worktree on the default
 * branch — `origin/HEAD`'s branch, else the bare repository's own HEAD (a bare clone's HEAD is
 * the remote's default branch, git-clone(1) `--bare`).
 * @throws InputError (exit 2) when no worktree is on the default branch, or the one named is not a worktree.
 */
export function chooseMainWorktree(request: {
  commonDir: string
  worktrees: Array<{path: string; branch?: string; bare: boolean}>
  originHead?: string
  checkoutPath?: string
  readToml: (file: string) => Record<string, unknown> | undefined
}): string {
  const {commonDir, worktrees, readToml} = request
  const parent = path.dirname(commonDir)
  const linked = worktrees.filter((worktree) => !worktree.bare)
  const head = /^ref: refs\/heads\/(.+)$/m.exec(
    existsSync(path.join(commonDir, 'HEAD')) ? readFileSync(path.join(commonDir, 'HEAD'), 'utf8') : '',
  )?.[1]
  const defaultBranch = request.originHead?.replace(/^refs\/remotes\/origin\//, '') ?? head
  const onDefault = linked.find((worktree) => defaultBranch !== undefined && worktree.branch === defaultBranch)
  const named = mainWorktreeSetting(onDefault?.path, readToml) ?? mainWorktreeSetting(request.checkoutPath, readToml)
  if (named !== undefined) {
    const wanted = path.resolve(parent, named)
    const found = linked.find((worktree) => path.resolve(worktree.path) === wanted)
    if (found) return found.path
    throw new InputError(`[project] main-worktree "${named}" is not a worktree of ${commonDir}`, {
      why: `yard takes ${wanted} as the main checkout of this bare repository, and git has no worktree there`,
      fix: `create it (\`${shellCommand(['git', '-C', parent, 'worktree', 'add', named])}\`) or change [project] main-worktree in yard.toml`,
    })
  }

  if (onDefault) return onDefault.path
  const branch = defaultBranch ?? 'main'
  throw new InputError(`no worktree of the bare repository ${commonDir} is on its default branch ${branch}`, {
    why: 'in the bare layout yard takes the worktree on the default branch as the main checkout (it holds yard.toml and has offset 0)',
    fix: `add one (\`${shellCommand(['git', '-C', parent, 'worktree', 'add', branch, branch])}\`), or name the main worktree in yard.toml: [project] main-worktree = "DIR"`,
  })
}
