/**
 * The workspace: the main checkout found from git's common dir, its config, and the `Target`
 * of whichever checkout a command acts on (DESIGN.md §2, §3.3, §3.4).
 */
import {existsSync, readFileSync, realpathSync, statSync} from 'node:fs'
import path from 'node:path'

import type {OffsetSource, Target} from '../../sdk/target.js'
import type {YardContext} from '../kernel/context.js'

import {InputError, OperationError} from '../../sdk/errors.js'
import {shellCommand} from '../../sdk/shell.js'
import {configCachePath, loadConfig, originLabel, type ProjectConfig} from '../config/config.js'
import {findClashes, hashOffset, portsFor, projectName, validateName, validateOffset} from '../identity/identity.js'
import {chooseMainWorktree, isBareGitDir, isBareLayout, repositoryRoot} from './bare-layout.js'
import {type DiscoveredRepository, discoverFromFiles} from './discover.js'
import {adminDirOf, checkGitLink, gitLinkProblem} from './git-link.js'
import {repositoryOwner} from './owner.js'
import {untrustedCheckoutAt} from './untrusted-checkouts.js'

export interface Workspace {
  /** Real path of the main checkout. */
  mainPath: string
  /** git's common dir (`<main>/.git`). */
  commonDir: string
  /** The main checkout's effective config. */
  config: ProjectConfig
  prefix: string
  owner: string
  /** Real path of the worktrees root (it may not exist yet). */
  worktreesRoot: string
  /** Real path of the checkout holding the current directory (undefined when not known). */
  currentCheckout?: string
}

function real(p: string): string {
  try {
    return realpathSync(p)
  } catch {
    // A path that does not exist yet (the worktrees root): resolve its closest existing parent.
    const parent = path.dirname(p)
    return parent === p ? p : path.join(real(parent), path.basename(p))
  }
}

export interface MainCheckout {
  /** Real path of the main checkout. */
  mainPath: string
  /** Real path of git's common dir. */
  commonDir: string
  /** Real path of the checkout (main or linked worktree) holding the current directory. */
  checkoutPath: string
}

/**
 * Finds the main checkout from the current directory through git's common dir, so that commands
 * work from inside any worktree (DESIGN.md §3.3), and the checkout the directory is in. Reads no
 * config. No process for a main checkout with a `.git` directory or a linked worktree of one
 * (read from the files as git reads them: discover.ts); otherwise one `git rev-parse` (plus `git
 * worktree list` from a linked worktree of a repository whose git dir is not `<main>/.git`);
 * neither inside an untrusted worktree, whose repository is the one recorded for it
 * (untrusted-checkouts.ts), whatever its files say. A bare repository with worktrees (the bare
 * layout, see bare-layout.ts) has the worktree on its default branch as main, found from any of
 * its worktrees or from the directory holding the bare repository.
 * @throws InputError (exit 2) outside a git repository, inside a `.git` directory or a bare
 *   repository without a main worktree; OperationError (exit 1) when git itself fails (not
 *   installed, unsafe ownership).
 */
export async function findMainCheckout(context: YardContext): Promise<MainCheckout> {
  // Inside an untrusted worktree git is not asked: a .git its box planted would answer. The
  // shell's own path counts too: through a link the box made, the real one can lie anywhere.
  const logical =
    context.env.PWD && real(context.env.PWD) === real(context.cwd) ? path.resolve(context.env.PWD) : undefined
  const untrusted =
    untrustedCheckoutAt(context.env, real(context.cwd)) ??
    (logical === undefined ? undefined : untrustedCheckoutAt(context.env, logical))
  if (untrusted) return {mainPath: untrusted.mainPath, commonDir: untrusted.commonDir, checkoutPath: untrusted.checkout}
  const found = discoverFromFiles(context.cwd, context.env) ?? (await revParseRepository(context))
  if ('mainPath' in found) return found
  const {commonDir, gitDir, checkoutPath} = found
  if (path.basename(commonDir) === '.git') return {mainPath: path.dirname(commonDir), commonDir, checkoutPath}
  if (gitDir === commonDir) return {mainPath: checkoutPath, commonDir, checkoutPath}
  const entries = await gitWorktreeEntries(context, checkoutPath)
  const [first] = entries
  if (first?.bare && entries.length > 1)
    return {mainPath: real(await mainOfBare(commonDir, entries, checkoutPath)), commonDir, checkoutPath}
  if (first === undefined || first.bare) {
    throw new InputError(`${commonDir} is a bare repository`, {
      why: 'yard needs a main checkout (holding yard.toml); the worktrees of a bare repository have none',
      fix: 'clone the repository normally (`git clone URL app`) and run yard inside it',
    })
  }

  if (real(first.path) === commonDir) {
    // `git init --separate-git-dir` without core.worktree: git itself cannot tell a linked
    // worktree where the main checkout is (it reports the git dir).
    throw new InputError(`git cannot tell where the main checkout of ${commonDir} is`, {
      why: "the repository keeps its git dir apart from the main checkout (--separate-git-dir), and linked worktrees do not record the main checkout's path",
      fix: 'run yard from the main checkout, naming the target with --worktree NAME',
    })
  }

  return {mainPath: real(first.path), commonDir, checkoutPath}
}

/**
 * `git rev-parse` of the repository holding the cwd, for every layout discoverFromFiles leaves to
 * git; from the directory holding a bare repository with worktrees, its main worktree.
 * @throws what findMainCheckout throws for a directory outside a checkout.
 */
async function revParseRepository(context: YardContext): Promise<DiscoveredRepository | MainCheckout> {
  // Relative output is relative to the cwd; `--path-format` would need git 2.31 (we support 2.30).
  const result = await context.runner.git(['rev-parse', '--git-common-dir', '--git-dir', '--show-toplevel'], {
    cwd: context.cwd,
    allowFailure: true,
  })
  if (result.exitCode !== 0) {
    const bare = /must be run in a work tree/i.test(result.stderr) ? await bareRepositoryMain(context) : undefined
    if (bare) return bare
    throw revParseFailure(context.cwd, result.exitCode, result.stderr)
  }

  // git 2.39's rev-parse has no NUL-separated output: three paths are three lines unless one holds a newline.
  const lines = result.stdout.replace(/\n$/, '').split('\n')
  if (lines.length !== 3) throw newlineInPath(result.stdout)
  const [commonDir, gitDir, checkoutPath] = lines.map((line) => real(path.resolve(context.cwd, line)))
  return {commonDir, gitDir, checkoutPath}
}

/**
 * From the directory holding a bare repository with worktrees (`repo/` with `.git: gitdir:
 * ./.bare`): its main worktree; else undefined.
 */
async function bareRepositoryMain(context: YardContext): Promise<MainCheckout | undefined> {
  const result = await context.runner.git(['rev-parse', '--git-common-dir'], {cwd: context.cwd, allowFailure: true})
  const commonDir =
    result.exitCode === 0 ? real(path.resolve(context.cwd, result.stdout.replace(/\n$/, ''))) : undefined
  if (commonDir === undefined || !isBareGitDir(commonDir)) return undefined
  const entries = await gitWorktreeEntries(context, context.cwd)
  if (entries.length < 2) return undefined
  const mainPath = real(await mainOfBare(commonDir, entries))
  return {mainPath, commonDir, checkoutPath: mainPath}
}

async function mainOfBare(commonDir: string, worktrees: GitWorktree[], checkoutPath?: string): Promise<string> {
  // A symbolic ref is always a loose file (packed-refs holds none).
  let originHead: string | undefined
  try {
    originHead = /^ref: (.+)$/m.exec(
      readFileSync(path.join(commonDir, 'refs', 'remotes', 'origin', 'HEAD'), 'utf8'),
    )?.[1]
  } catch {}

  // `[project] main-worktree` is read from the worktrees' yard.toml files, parsed and validated as config.
  const {readToml} = await import('../config/config-files.js')
  return chooseMainWorktree({commonDir, worktrees, originHead, checkoutPath, readToml})
}

/**
 * A repository whose checkout or git dir path holds a newline: git's line-based output (rev-parse,
 * `worktree list --porcelain` before git 2.36's `-z`) cannot be read, so yard refuses it rather
 * than misread it.
 */
function newlineInPath(revParse: string): InputError {
  return new InputError(`the path of this repository holds a newline: ${JSON.stringify(revParse.replace(/\n$/, ''))}`, {
    why: 'git prints paths one per line, so a path with a newline in it cannot be read back reliably',
    fix: 'rename the directory (or the one above it) to a name without a newline, then run yard again',
  })
}

function revParseFailure(cwd: string, exitCode: number, stderr: string): Error {
  if (exitCode === 127) {
    return new OperationError('git is not installed or not on PATH', {
      why: 'yard finds your repository with git',
      fix: 'install git (scripts/setup-system, or your package manager), then run `yard doctor`',
    })
  }

  if (/not a git repository/i.test(stderr)) {
    return new InputError(`${cwd} is not inside a git repository`, {
      why: 'yard works on the worktrees of one git repository, found from the current directory',
      fix: "cd into your repository's main checkout or one of its worktrees (or run `git init` first)",
    })
  }

  if (/must be run in a work tree/i.test(stderr)) {
    return new InputError(`${cwd} is inside a .git directory or a bare repository`, {
      why: 'yard needs a checkout: the main one (holding yard.toml) or one of its worktrees',
      fix: 'cd into the checkout (or clone the repository normally: `git clone URL app`)',
    })
  }

  return new OperationError(`git could not read the repository at ${cwd}`, {
    why: stderr.trim() || `git rev-parse exited with ${exitCode}`,
    fix: 'fix what git reports, then try again',
  })
}

/**
 * The main checkout's config when the current directory is inside a git checkout, else
 * undefined — for commands that also run outside any checkout (the cache agent, `yard cluster`),
 * which then fall back to the environment.
 * @throws InputError (exit 2) for invalid config; what findMainCheckout throws other than its
 *   "not a git checkout" InputError.
 */
export async function mainConfigIfAny(context: YardContext): Promise<ProjectConfig | undefined> {
  let mainPath: string | undefined
  try {
    mainPath = (await findMainCheckout(context)).mainPath
  } catch (error) {
    if (!(error instanceof InputError)) throw error
  }

  return mainPath === undefined ? undefined : loadConfig({mainPath, env: context.env, warn: context.warn})
}

/**
 * Finds the main checkout (see findMainCheckout) and loads its config.
 * @throws InputError (exit 2) outside a git repository, in a bare repository, for invalid config,
 *   or for a worktrees root that holds the main checkout, is a file, or lies inside the git directory.
 */
export async function openWorkspace(context: YardContext): Promise<Workspace> {
  const {mainPath, commonDir, checkoutPath} = await findMainCheckout(context)
  const config = await loadConfig({
    mainPath,
    env: context.env,
    warn: context.warn,
    cache: configCachePath(context.env, commonDir),
  })
  checkPins(config)
  const worktreesRoot = real(config.worktrees.root)
  if (worktreesRoot.includes('\n')) {
    throw new InputError(
      `the worktrees root ${JSON.stringify(worktreesRoot)} (${originLabel(config.origins['worktrees.root'], 'worktrees', 'root')}) holds a newline`,
      {
        why: 'git lists worktrees one path per line, so a worktree below it could not be read back',
        fix: 'choose a worktrees root without a newline in its path',
      },
    )
  }

  const rootLabel = originLabel(config.origins['worktrees.root'], 'worktrees', 'root')
  if (existsSync(worktreesRoot) && !statSync(worktreesRoot).isDirectory()) {
    throw new InputError(`the worktrees root ${worktreesRoot} (${rootLabel}) is not a directory`, {
      why: 'yard makes every worktree a directory below the root',
      fix: `move that file away, or point [worktrees] root at a directory, e.g. "${mainPath}-worktrees" (the default)`,
    })
  }

  if (isInside(worktreesRoot, real(commonDir))) {
    throw new InputError(
      `the worktrees root ${worktreesRoot} (${rootLabel}) is inside the repository's git directory ${commonDir}`,
      {
        why: "git keeps its own files there; a checkout inside it would be read as part of the repository's internals",
        fix: `point [worktrees] root at a directory beside or inside the main checkout, e.g. "${mainPath}-worktrees" (the default)`,
      },
    )
  }

  // In the bare layout main is a worktree beside the others, below the root by design.
  if (!isBareLayout(mainPath) && isInside(mainPath, worktreesRoot)) {
    throw new InputError(`the worktrees root ${worktreesRoot} (${rootLabel}) contains the main checkout ${mainPath}`, {
      why: 'a worktree is named by its directory below the root, so the main checkout would pass for a worktree',
      fix: `point [worktrees] root at a directory beside or inside the main checkout, e.g. "${mainPath}-worktrees" (the default)`,
    })
  }

  return {
    mainPath,
    commonDir,
    config,
    prefix: config.project.prefix,
    owner: repositoryOwner(repositoryRoot(mainPath), context.env, commonDir),
    worktreesRoot,
    currentCheckout: checkoutPath,
  }
}

/** True when `child` is `parent` or lies below it (both real paths). */
function isInside(child: string, parent: string): boolean {
  const relative = path.relative(parent, child)
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative))
}

/** Every pin must be a valid name with an offset in 1..89 (DESIGN.md §3.4). */
function checkPins(config: ProjectConfig): void {
  for (const [name, value] of Object.entries(config.pins)) {
    validateName(name, `name in ${config.files.local} [worktree-offsets]`)
    validateOffset(value, pinSource(config, name), pinFix(config, name))
  }
}

const pinSource = (config: ProjectConfig, name: string) => `${config.files.local} [worktree-offsets] ${name}`
const pinFix = (config: ProjectConfig, name: string) =>
  `in ${config.files.local}, write \`${name} = <an integer from 1 to 89>\` without quotes under [worktree-offsets], or delete the line to use the hash`

export type TargetSource = 'flag' | 'env' | 'cwd' | 'main'

/**
 * Which checkout a command targets (DESIGN.md §3.3): `--worktree NAME` → `YARD_WORKTREE` → the
 * current directory (the first path component below the worktrees root) → the main checkout.
 * `WORKTREE` is an output, never read here.
 * @throws InputError (exit 2) for an invalid name.
 */
export function targetName(
  workspace: Workspace,
  context: YardContext,
  flag?: string,
): {name: string; isMain: boolean; source: TargetSource} {
  const chosen = flag ?? (context.env.YARD_WORKTREE?.trim() ? context.env.YARD_WORKTREE.trim() : undefined)
  const source: TargetSource = flag === undefined ? 'env' : 'flag'
  if (chosen !== undefined) {
    if (chosen === 'main') return {name: 'main', isMain: true, source}
    return {
      name: validateName(chosen, source === 'flag' ? 'worktree name (--worktree)' : 'worktree name (YARD_WORKTREE)'),
      isMain: false,
      source,
    }
  }

  const checkout = workspace.currentCheckout
  if (checkout === undefined || checkout === workspace.mainPath) return {name: 'main', isMain: true, source: 'main'}
  const relative = path.relative(workspace.worktreesRoot, checkout)
  if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative) || relative.includes(path.sep)) {
    throw new InputError(`${checkout} is a worktree outside yard's worktrees root ${workspace.worktreesRoot}`, {
      why: 'yard names a worktree by its directory directly below the root; this one has no yard identity',
      fix: `move it there (\`${shellCommand(['git', 'worktree', 'move', checkout, path.join(workspace.worktreesRoot, path.basename(checkout))])}\`), or name a target with --worktree NAME`,
    })
  }

  return {name: validateName(relative, `worktree name (from the directory ${checkout})`), isMain: false, source: 'cwd'}
}

export interface OffsetOptions {
  /** Honour `WT_OFFSET`: only commands that act on one target do (DESIGN.md §3.4). */
  useEnvOffset: boolean
}

/**
 * The offset of a name and its source (DESIGN.md §3.4): main 0; else `WT_OFFSET` (when honoured)
 * → the main checkout's pin → the cksum hash.
 * @throws InputError (exit 2) naming the source for an invalid WT_OFFSET or pin.
 */
export function resolveOffset(
  workspace: Workspace,
  context: YardContext,
  name: string,
  isMain: boolean,
  options: OffsetOptions,
): {offset: number; offsetSource: OffsetSource} {
  const fromEnv = context.env.WT_OFFSET
  // An invalid WT_OFFSET is refused for main too (§3.4: validation names the source, exit 2): it
  // is input to this one-target command, even where main's offset 0 leaves it unused.
  const envOffset =
    fromEnv !== undefined && fromEnv !== '' && options.useEnvOffset
      ? validateOffset(fromEnv, 'env WT_OFFSET', 'unset WT_OFFSET, or set it to an integer from 1 to 89')
      : undefined
  if (isMain) return {offset: 0, offsetSource: 'main'}
  if (envOffset !== undefined) return {offset: envOffset, offsetSource: 'env'}
  const pin = workspace.config.pins[name]
  if (pin !== undefined)
    return {
      offset: validateOffset(pin, pinSource(workspace.config, name), pinFix(workspace.config, name)),
      offsetSource: 'pin',
    }
  return {offset: hashOffset(name), offsetSource: 'hash'}
}

/** The path a worktree of this name has: `<worktrees root>/<name>` (DESIGN.md §4.1). */
export function worktreePath(workspace: Workspace, name: string): string {
  return path.join(workspace.worktreesRoot, name)
}

/**
 * Builds the `Target` handed to every backend (DESIGN.md §2): identity computed once, here.
 * Per-checkout config (`[ports]`) comes from the targeted checkout's own yard.toml when it has one.
 * @throws InputError (exit 2) for an invalid yard.toml in the checkout.
 */
export async function buildTarget(
  workspace: Workspace,
  context: YardContext,
  name: string,
  isMain: boolean,
  options: OffsetOptions,
): Promise<Target> {
  return (await targetWithConfig(workspace, context, name, isMain, options)).target
}

/** buildTarget's Target and the effective config of its checkout (main's for main). */
async function targetWithConfig(
  workspace: Workspace,
  context: YardContext,
  name: string,
  isMain: boolean,
  options: OffsetOptions,
): Promise<{target: Target; config: ProjectConfig}> {
  const target = targetIdentity(workspace, context, name, isMain, options)
  if (isMain) return {target, config: workspace.config}
  const config = await loadConfig({
    mainPath: workspace.mainPath,
    cache: configCachePath(context.env, workspace.commonDir),
    checkout: {path: target.checkoutPath, name},
    env: context.env,
    warn: context.warn,
  })
  return {target: {...target, ports: portsFor(config.ports, target.offset)}, config}
}

/**
 * The `Target` of `name` with `[ports]` from the main checkout's config: all of buildTarget's
 * Target for main, and for a sandbox, whose ports are main's (sandboxTarget). Reads no config file.
 */
export function targetIdentity(
  workspace: Workspace,
  context: YardContext,
  name: string,
  isMain: boolean,
  options: OffsetOptions,
): Target {
  const {offset, offsetSource} = resolveOffset(workspace, context, name, isMain, options)
  return {
    name,
    isMain,
    prefix: workspace.prefix,
    project: projectName(workspace.prefix, name, isMain),
    owner: workspace.owner,
    offset,
    offsetSource,
    ports: portsFor(workspace.config.ports, offset),
    checkoutPath: isMain ? workspace.mainPath : worktreePath(workspace, name),
    mainPath: workspace.mainPath,
  }
}

/**
 * Resolves the targeted checkout (§3.3) and builds its Target, honouring `WT_OFFSET`, with the
 * checkout's effective config (its own yard.toml's per-checkout tables). A named
 * worktree without a directory gets a note (its identity is still useful: teardown and read
 * verbs work on it), or with `requireCheckout` (verbs that create: `up`, `box up`, `logs`) is
 * refused.
 * @throws InputError (exit 2) for a bad target; with `requireCheckout`, for a worktree whose
 *   directory does not exist; RefusedError (exit 3) for an untrusted worktree whose `.git` link
 *   was changed (git-link.ts).
 * `workspace`: one the caller has already opened in this invocation (no second `git rev-parse`
 * and config load).
 */
export async function resolveTarget(
  context: YardContext,
  flag?: string,
  options: {requireCheckout?: boolean; workspace?: Workspace} = {},
): Promise<{workspace: Workspace; target: Target; config: ProjectConfig}> {
  const workspace = options.workspace ?? (await openWorkspace(context))
  const {name, isMain} = targetName(workspace, context, flag)
  const {target, config} = await targetWithConfig(workspace, context, name, isMain, {useEnvOffset: true})
  if (options.requireCheckout) requireCheckout(target, workspace.commonDir)
  else noteMissingCheckout(target, context)
  if (!isMain && workspace.config.trust[name] === 'untrusted')
    checkGitLink(workspace.commonDir, target.checkoutPath, name)
  return {workspace, target, config}
}

/**
 * Refuses a named worktree that has no directory, or whose directory is no linked worktree of
 * this repository (a plain directory, another repository: gitrepository-layout(5), a worktree's
 * `.git` is a file naming `<common dir>/worktrees/<id>`), for verbs that would create something
 * for it.
 * @throws InputError (exit 2) naming the worktree, its path and `yard worktree list`.
 */
export function requireCheckout(target: Target, commonDir: string): void {
  if (target.isMain) return
  const problem = checkoutProblem(commonDir, target.checkoutPath)
  if (problem === undefined) return
  throw new InputError(`there is no worktree ${target.name}: ${target.checkoutPath} ${problem}`, {
    why: "this command starts or reads the stack from the checkout's own files, so it needs the checkout",
    fix: existsSync(target.checkoutPath)
      ? `${target.checkoutPath} is in the way of a worktree of that name: move it out of the worktrees root, or use another name; \`yard worktree list\` shows the worktrees`
      : `see \`yard worktree list\` for the worktrees there are, or create this one with \`yard worktree add ${target.name}\``,
  })
}

/**
 * Why `checkout` (a path under the worktrees root) is no linked worktree of the repository at
 * `commonDir`, as the end of a sentence naming it: `does not exist`, `is not a git worktree (it
 * has no .git)`, `is no worktree of this repository (…)`; undefined when it is one. One is when
 * its `.git` link is sound (gitrepository-layout(5): a file naming `<common dir>/worktrees/<id>`,
 * whose `gitdir` names it back), or when git's administrative directory still names it: a link
 * changed since is then the caller's to judge (checkGitLink for an untrusted worktree).
 */
export function checkoutProblem(commonDir: string, checkout: string): string | undefined {
  if (!existsSync(checkout)) return 'does not exist'
  if (!existsSync(path.join(checkout, '.git'))) return 'is not a git worktree (it has no .git)'
  const problem = gitLinkProblem(commonDir, checkout)
  return problem === undefined || adminDirOf(commonDir, checkout) !== undefined
    ? undefined
    : `is no worktree of this repository (${problem})`
}

/** Says so when a named worktree has no directory: its identity is shown all the same. */
export function noteMissingCheckout(target: Target, context: YardContext): void {
  if (!target.isMain && !existsSync(target.checkoutPath))
    context.warn(
      `note: there is no worktree ${target.name} at ${target.checkoutPath}; this is the identity it would have`,
    )
}

export interface GitWorktree {
  path: string
  head?: string
  /** Short branch name, or undefined when detached. */
  branch?: string
  locked: boolean
  prunable: boolean
  bare: boolean
}

/** Every worktree git knows (`git worktree list --porcelain`), main first. */
export async function gitWorktrees(workspace: Workspace, context: YardContext): Promise<GitWorktree[]> {
  return gitWorktreeEntries(context, workspace.mainPath)
}

async function gitWorktreeEntries(context: YardContext, cwd: string): Promise<GitWorktree[]> {
  const result = await context.runner.git(['worktree', 'list', '--porcelain'], {cwd})
  const entries: GitWorktree[] = []
  for (const block of result.stdout.split('\n\n')) {
    const lines = block.split('\n').filter(Boolean)
    if (lines.length === 0) continue
    const entry: GitWorktree = {path: '', locked: false, prunable: false, bare: false}
    for (const line of lines) {
      const [field, ...rest] = line.split(' ')
      const value = rest.join(' ')
      if (field === 'worktree') entry.path = value
      else if (field === 'HEAD') entry.head = value
      else if (field === 'branch') entry.branch = value.replace(/^refs\/heads\//, '')
      else if (field === 'locked') entry.locked = true
      else if (field === 'prunable') entry.prunable = true
      else if (field === 'bare') entry.bare = true
    }

    entries.push(entry)
  }

  return entries
}

/**
 * Worktrees under the root, as names (the first path component below it) with git's entry.
 * `known`: the result of `gitWorktrees` when the caller already has it.
 */
export async function worktreesUnderRoot(
  workspace: Workspace,
  context: YardContext,
  known?: GitWorktree[],
): Promise<Array<{name: string; worktree: GitWorktree}>> {
  const found: Array<{name: string; worktree: GitWorktree}> = []
  const nameOf = (p: string) => {
    const relative = path.relative(workspace.worktreesRoot, p)
    return relative === '' || relative.startsWith('..') || path.isAbsolute(relative) || relative.includes(path.sep)
      ? undefined
      : relative
  }

  for (const worktree of known ?? (await gitWorktrees(workspace, context))) {
    // The bare repository itself and main (below the root in the bare layout) are no worktrees of a name.
    if (worktree.bare || real(worktree.path) === workspace.mainPath) continue
    // The resolved path first; then the path git recorded, for a worktree whose directory was
    // replaced by a symbolic link to somewhere else (it is still that name's worktree).
    const name = nameOf(real(worktree.path)) ?? nameOf(worktree.path)
    if (name !== undefined) found.push({name, worktree})
  }

  return found
}

export interface IdentityRow {
  target: Target
  kind: 'main' | 'worktree' | 'sandbox'
  clashesWith: string[]
}

/**
 * Main, every worktree under the root and every sandbox given, with clashes (DESIGN.md §3.4).
 * `WT_OFFSET` is ignored here (with a note), as it is by every listing. `underRoot`: the result
 * of `worktreesUnderRoot` when the caller already has it.
 */
export async function listIdentities(
  workspace: Workspace,
  context: YardContext,
  sandboxes: Array<{name: string; offset: number}> = [],
  underRoot?: Array<{name: string; worktree: GitWorktree}>,
): Promise<IdentityRow[]> {
  if (context.env.WT_OFFSET)
    context.warn(
      'note: WT_OFFSET is ignored when listing every checkout; it applies only to commands that act on one target',
    )
  const rows: IdentityRow[] = [
    {target: targetIdentity(workspace, context, 'main', true, {useEnvOffset: false}), kind: 'main', clashesWith: []},
  ]
  const invalid: string[] = []
  for (const {name} of underRoot ?? (await worktreesUnderRoot(workspace, context))) {
    if (validNameOrUndefined(name) === undefined) {
      invalid.push(name)
      continue
    }

    try {
      rows.push({
        target: await buildTarget(workspace, context, name, false, {useEnvOffset: false}),
        kind: 'worktree',
        clashesWith: [],
      })
    } catch (error) {
      // One worktree's broken yard.toml must not hide every other checkout.
      if (!(error instanceof InputError)) throw error
      context.warn(`warning: skipped worktree ${name}: ${error.message}`)
    }
  }

  if (invalid.length > 0)
    context.warn(`warning: skipped worktrees whose directory names are not valid yard names: ${invalid.join(', ')}`)
  const worktreeNames = new Set(rows.map((row) => row.target.name))
  for (const sandbox of sandboxes) {
    if (worktreeNames.has(sandbox.name)) continue
    const target = targetIdentity(workspace, context, sandbox.name, false, {useEnvOffset: false})
    rows.push({
      target: {
        ...target,
        checkoutPath: workspace.mainPath,
        offset: sandbox.offset,
        offsetSource: 'label',
        ports: portsFor(workspace.config.ports, sandbox.offset),
      },
      kind: 'sandbox',
      clashesWith: [],
    })
  }

  const clashes = findClashes(
    rows.filter((row) => !row.target.isMain).map((row) => ({name: row.target.name, offset: row.target.offset})),
  )
  for (const row of rows) row.clashesWith = clashes.get(row.target.name) ?? []
  return rows
}

function validNameOrUndefined(name: string): string | undefined {
  try {
    return validateName(name)
  } catch {
    return undefined
  }
}
