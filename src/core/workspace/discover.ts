/**
 * git's repository discovery read from the files, for the two layouts nearly every checkout has,
 * so that finding the main checkout costs no `git rev-parse` (a process: 10–40 ms, on every
 * command, an agent's every `yard exec` among them). Anything else is left to git.
 *
 * The rules are git's (gitrepository-layout(5), git(1) "GIT_DIR", git-worktree(1) "DETAILS",
 * git-config(1) "safe.directory"): from the current directory upwards, the first directory D
 * holding `.git` is the top of the work tree; a `.git` directory is the git dir (and the common
 * dir); a `.git` file `gitdir: PATH` names a linked worktree's git dir, whose `commondir` file
 * names the common dir.
 */
import {lstatSync, readFileSync, realpathSync, type Stats, statSync} from 'node:fs'
import path from 'node:path'

/** What `git rev-parse --git-common-dir --git-dir --show-toplevel` answers, as absolute real paths. */
export interface DiscoveredRepository {
  commonDir: string
  gitDir: string
  checkoutPath: string
}

/**
 * Environment variables that change where git looks or what it finds (git(1) ENVIRONMENT
 * VARIABLES): with any of them set, git is asked.
 */
const DISCOVERY_VARIABLES =
  /^GIT_(DIR|WORK_TREE|COMMON_DIR|CEILING_DIRECTORIES|DISCOVERY_ACROSS_FILESYSTEM|CONFIG\w*|NAMESPACE|INDEX_FILE|OBJECT_DIRECTORY|ALTERNATE_OBJECT_DIRECTORIES)$/

/**
 * Config that moves the work tree or could (an include, a per-worktree config file): a
 * repository whose config holds any of them is git's to read; so is one with a `bare` line
 * other than git init's `bare = false`.
 */
const CONFIG_GIT_MUST_READ = /^\s*(worktree|worktreeconfig)\b|^\s*\[\s*include/im
const BARE_LINE = /^\s*bare\b(.*)$/gim

/**
 * The repository holding `cwd` as git would find it, for a plain main checkout (`.git`
 * directory) or a linked worktree of one (`.git` file naming `<common>/worktrees/<id>`, with a
 * `commondir` file); undefined for everything else, which the caller asks git about: a variable
 * of DISCOVERY_VARIABLES set, a directory inside a git dir, a `.git` file naming a git dir
 * without `commondir` (a submodule, `--separate-git-dir`, the bare layout), config of
 * CONFIG_GIT_MUST_READ, a crossing to another file system, an owner other than the current
 * user (git's safe.directory check), or a path with a newline (which yard refuses from git's answer).
 * @param cwd an absolute directory.
 * Never throws: what cannot be read is git's to judge.
 */
export function discoverFromFiles(cwd: string, env: NodeJS.ProcessEnv): DiscoveredRepository | undefined {
  if (Object.keys(env).some((key) => DISCOVERY_VARIABLES.test(key))) return undefined
  try {
    const found = discover(realpathSync(cwd))
    // git prints paths a line each: one with a newline is refused where git's answer is read (workspace.ts).
    return found && Object.values(found).some((file) => file.includes('\n')) ? undefined : found
  } catch {
    return undefined
  }
}

function discover(start: string): DiscoveredRepository | undefined {
  const {dev} = statSync(start)
  const uid = process.getuid?.()
  for (let dir = start; ; dir = path.dirname(dir)) {
    const here = statSync(dir)
    // git stops at a file system boundary (GIT_DISCOVERY_ACROSS_FILESYSTEM), and refuses a
    // repository another user owns (safe.directory): both are git's to tell.
    if (here.dev !== dev || (uid !== undefined && here.uid !== uid)) return undefined
    const dotGit = statOrUndefined(path.join(dir, '.git'))
    if (dotGit?.isDirectory()) return mainCheckout(dir, uid)
    if (dotGit?.isFile()) return linkedWorktree(dir, uid)
    // A `.git` link, or a directory that is itself a git dir (inside `.git`, a bare repository): git's case.
    if (dotGit !== undefined || looksLikeGitDir(dir)) return undefined
    if (path.dirname(dir) === dir) return undefined
  }
}

function mainCheckout(dir: string, uid: number | undefined): DiscoveredRepository | undefined {
  const gitDir = path.join(dir, '.git')
  if (!looksLikeGitDir(gitDir) || !ownedBy(gitDir, uid) || statOrUndefined(path.join(gitDir, 'commondir')))
    return undefined
  if (!plainConfig(gitDir)) return undefined
  return {commonDir: gitDir, gitDir, checkoutPath: dir}
}

function linkedWorktree(dir: string, uid: number | undefined): DiscoveredRepository | undefined {
  const link = /^gitdir: (.+?)\r?\n?$/.exec(readFileSync(path.join(dir, '.git'), 'utf8'))
  if (!link) return undefined
  const gitDir = realpathSync(path.resolve(dir, link[1]))
  const commonText = readFileSync(path.join(gitDir, 'commondir'), 'utf8').replace(/\r?\n$/, '')
  if (commonText === '' || commonText.includes('\n')) return undefined
  const commonDir = realpathSync(path.resolve(gitDir, commonText))
  if (!looksLikeGitDir(commonDir) || !ownedBy(gitDir, uid) || !ownedBy(commonDir, uid)) return undefined
  // git-worktree(1): the worktree's own config.worktree applies only with extensions.worktreeConfig,
  // which CONFIG_GIT_MUST_READ sends to git.
  if (!plainConfig(commonDir)) return undefined
  return {commonDir, gitDir, checkoutPath: dir}
}

/** gitrepository-layout(5): a git dir holds HEAD, objects/ and refs/. */
function looksLikeGitDir(dir: string): boolean {
  return (
    Boolean(statOrUndefined(path.join(dir, 'HEAD'))?.isFile()) &&
    Boolean(statOrUndefined(path.join(dir, 'objects'))?.isDirectory()) &&
    Boolean(statOrUndefined(path.join(dir, 'refs'))?.isDirectory())
  )
}

function plainConfig(gitDir: string): boolean {
  let text: string
  try {
    text = readFileSync(path.join(gitDir, 'config'), 'utf8')
  } catch {
    return false
  }

  if (CONFIG_GIT_MUST_READ.test(text)) return false
  for (const [, value] of text.matchAll(BARE_LINE)) if (!/^\s*=\s*false\s*$/i.test(value)) return false
  return true
}

function ownedBy(file: string, uid: number | undefined): boolean {
  return uid === undefined || statSync(file).uid === uid
}

function statOrUndefined(file: string): Stats | undefined {
  try {
    return lstatSync(file)
  } catch {
    return undefined
  }
}
