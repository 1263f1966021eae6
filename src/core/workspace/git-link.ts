/**
 * The link of a linked worktree to its repository (gitrepository-layout(5), "worktrees"): the
 * checkout's `.git` is a file `gitdir: <common dir>/worktrees/<id>`, and that directory's
 * `gitdir` file names the checkout's `.git` back. Code in an untrusted worktree's box can
 * rewrite `.git` to point at a directory of its own whose config git would then obey on the
 * host (`core.fsmonitor`, filter drivers run commands), so yard runs no git in such a checkout
 * until the link is as git made it.
 */
import {lstatSync, readdirSync, readFileSync, realpathSync} from 'node:fs'
import path from 'node:path'

import {RefusedError} from '../../sdk/errors.js'
import {shellQuote} from '../../sdk/shell.js'

/**
 * The config every git run in an untrusted worktree gets. Its box writes the checkout, so it can
 * put a `.git` directory of its own under any submodule path (a gitlink a pull request commits),
 * whose config git obeys in the submodule: `core.fsmonitor` and filter drivers run commands on
 * the host. So git never goes into a submodule there (`submodule.recurse`, `diff.ignoreSubmodules`;
 * `git status` also gets UNTRUSTED_STATUS) and runs no fsmonitor. `-c` reaches git's child
 * processes too (GIT_CONFIG_PARAMETERS) and outranks every config file (git-config(1), "SCOPES").
 */
const UNTRUSTED_CONFIG = [
  '-c',
  'core.fsmonitor=false',
  '-c',
  'submodule.recurse=false',
  '-c',
  'diff.ignoreSubmodules=all',
] as const

/**
 * The worktree's administrative directory `<commonDir>/worktrees/<id>` whose `gitdir` file names
 * `<checkout>/.git` (gitrepository-layout(5), "worktrees"), read from the repository's side only:
 * those files are git's, outside what an untrusted box can write. Undefined when none does.
 */
export function adminDirOf(commonDir: string, checkout: string): string | undefined {
  const worktrees = path.join(real(commonDir), 'worktrees')
  const link = path.join(real(checkout), '.git')
  let names: string[]
  try {
    names = readdirSync(worktrees)
  } catch {
    return undefined
  }

  // git names the directory after the checkout's unless that was taken (then `name1`, …).
  const first = path.basename(checkout)
  for (const name of [first, ...names.filter((candidate) => candidate !== first)]) {
    let back: string
    try {
      back = readFileSync(path.join(worktrees, name, 'gitdir'), 'utf8').trim()
    } catch {
      continue
    }

    if (path.resolve(back) === link || real(back) === link) return path.join(worktrees, name)
  }

  return undefined
}

/**
 * What every git run in the untrusted worktree `checkout` starts with: `--git-dir` its
 * administrative directory (adminDirOf) and `--work-tree` the checkout, so git never reads the
 * checkout's own `.git` (its box can swap that file between yard's check and git's read, and git
 * obeys the config of whatever directory it names), then UNTRUSTED_CONFIG.
 * @throws RefusedError (exit 3) when no worktree of `commonDir` names the checkout.
 */
export function untrustedGit(commonDir: string, checkout: string): string[] {
  const admin = adminDirOf(commonDir, checkout)
  if (admin === undefined)
    throw new RefusedError(`no worktree of ${commonDir} is checked out at ${checkout}`, {
      why: 'yard runs git in an untrusted worktree only through the directory git made for it, never through the .git its box can write',
      fix: 'git worktree list shows the worktrees; git worktree repair puts a moved one back',
    })
  return [`--git-dir=${admin}`, `--work-tree=${real(checkout)}`, ...UNTRUSTED_CONFIG]
}

/** `git status` in an untrusted worktree: submodules are not looked into (git-status(1)). */
export const UNTRUSTED_STATUS = ['--ignore-submodules=all'] as const

function real(p: string): string {
  try {
    return realpathSync(p)
  } catch {
    return path.resolve(p)
  }
}

/**
 * Why the `.git` of the linked worktree `checkout` is not the link git made to `commonDir`, or
 * undefined when it is (or the checkout is gone: nothing of it can run then).
 */
export function gitLinkProblem(commonDir: string, checkout: string): string | undefined {
  const link = path.join(checkout, '.git')
  let stat
  try {
    stat = lstatSync(link)
  } catch {
    return undefined
  }

  if (!stat.isFile())
    return `${link} is ${stat.isSymbolicLink() ? 'a symbolic link' : 'a directory'}, not the file git writes for a worktree`
  if (stat.size > 4096) return `${link} is ${stat.size} bytes, not the one line git writes`
  const match = /^gitdir: (.+)\n?$/.exec(readFileSync(link, 'utf8'))
  if (!match) return `${link} is not a single \`gitdir:\` line`
  const gitDir = path.resolve(checkout, match[1])
  const worktrees = path.join(real(commonDir), 'worktrees')
  if (path.dirname(real(gitDir)) !== worktrees) return `${link} points at ${gitDir}, not into ${worktrees}`
  let back: string
  try {
    back = readFileSync(path.join(gitDir, 'gitdir'), 'utf8').trim()
  } catch {
    return `${gitDir} has no gitdir file naming ${link}`
  }

  if (real(back) !== real(link)) return `${gitDir} belongs to ${back}, not to ${link}`
  return undefined
}

/** The one line git writes into a worktree's `.git`, as a command that puts it back. */
function restoreCommand(commonDir: string, checkout: string): string {
  const worktrees = path.join(real(commonDir), 'worktrees')
  // The directory git made for it, else git's default name for it (the checkout's directory name).
  const admin = adminDirOf(commonDir, checkout) ?? path.join(worktrees, path.basename(checkout))
  return String.raw`printf 'gitdir: %s\n' ${shellQuote(admin)} > ${shellQuote(path.join(checkout, '.git'))}`
}

/**
 * Refuses to go on in untrusted worktree `name` whose `.git` link was changed (gitLinkProblem).
 * @throws RefusedError (exit 3) naming what changed and the command that restores the link.
 */
export function checkGitLink(commonDir: string, checkout: string, name: string): void {
  const problem = gitLinkProblem(commonDir, checkout)
  if (problem === undefined) return
  throw new RefusedError(`the git link of untrusted worktree ${name} was changed: ${problem}`, {
    why: 'git obeys the config of the directory .git points at, and such config can run commands on this host; yard runs no git in that checkout',
    fix: `look at what its box wrote, then put the link back: ${restoreCommand(commonDir, checkout)}`,
  })
}
