/**
 * What a new worktree's checkout needs beyond `git worktree add` on the repositories people have
 * (DESIGN.md §4.1): main's sparse-checkout patterns applied before the files are written, the
 * blobs a partial clone lacks found up front, and submodules initialised from the objects main
 * already holds in `.git/modules`, so no network is needed when they suffice.
 */
import {existsSync, promises as fs} from 'node:fs'
import path from 'node:path'

import type {YardContext} from '../kernel/context.js'

import {OperationError} from '../../sdk/errors.js'
import {shellQuote} from '../../sdk/shell.js'
import {gitFailure} from './git-failure.js'

/**
 * Config for a fetch a partial clone makes: no gc or maintenance run inside it (a partial clone's
 * first lazy fetch otherwise triggers a synchronous `gc --auto`; git-config(1) `gc.auto`,
 * `maintenance.auto`).
 */
export const NO_MAINTENANCE = ['-c', 'gc.auto=0', '-c', 'maintenance.auto=false']

/** What `worktree add` needs from main's config, read in one call (`readCheckoutConfig`). */
export interface CheckoutConfig {
  /** The remotes with any `remote.<name>.*` key, as `git remote` lists those of the config. */
  remotes: string[]
  /**
   * A partial clone's promisor remotes (`remote.<name>.promisor`, `extensions.partialClone`); empty
   * for a full clone.
   */
  promisors: string[]
  /** Set when main is sparse (`core.sparseCheckout`, git-sparse-checkout(1)), with its cone mode. */
  sparse?: {cone: boolean}
}

/**
 * A boolean config value as git reads one (git-config(1), "Values": `true`/`yes`/`on`/`1` or any
 * other non-zero integer, `false`/`no`/`off`/`0`/empty); a key without `=` (null) is true. A value
 * git would refuse is undefined.
 */
export function gitBool(value: string | null): boolean | undefined {
  if (value === null) return true
  const lower = value.trim().toLowerCase()
  if (['on', 'true', 'yes'].includes(lower)) return true
  if (['', 'false', 'no', 'off'].includes(lower)) return false
  return /^[-+]?\d+[kmg]?$/.test(lower) ? Number.parseInt(lower, 10) !== 0 : undefined
}

/**
 * Main's remotes, promisor remotes and sparse mode in one `git config --null --get-regexp` (every
 * add asks all three; three calls cost two more processes). Keys come back with section and
 * variable lowercased, the remote's name (the subsection) as written. Remotes defined only in the
 * legacy `$GIT_DIR/remotes/` and `branches/` files (gitrepository-layout(5)) are not seen.
 */
export async function readCheckoutConfig(context: YardContext, mainPath: string): Promise<CheckoutConfig> {
  const result = await context.runner.git(
    [
      'config',
      '--null',
      '--get-regexp',
      String.raw`^(remote\..*|extensions\.partialclone|core\.sparsecheckout(cone)?)$`,
    ],
    {cwd: mainPath, allowFailure: true},
  )
  const remotes = new Set<string>()
  const promisors = new Set<string>()
  const core = new Map<string, boolean | undefined>()
  for (const record of result.stdout.split('\0')) {
    if (record === '') continue
    const newline = record.indexOf('\n')
    const key = newline === -1 ? record : record.slice(0, newline)
    const value = newline === -1 ? null : record.slice(newline + 1)
    if (key.startsWith('remote.')) {
      const name = key.slice('remote.'.length, key.lastIndexOf('.'))
      if (name === '') continue
      remotes.add(name)
      if (key.endsWith('.promisor') && gitBool(value) === true) promisors.add(name)
    } else if (key === 'extensions.partialclone') {
      if (value) promisors.add(value)
    } else {
      core.set(key, gitBool(value))
    }
  }

  const sparse =
    core.get('core.sparsecheckout') === true ? {cone: core.get('core.sparsecheckoutcone') !== false} : undefined
  return {remotes: [...remotes], promisors: [...promisors], ...(sparse && {sparse})}
}

/** Whether main is sparse, and its cone mode (`readCheckoutConfig`'s `sparse`). */
export async function mainSparse(context: YardContext, mainPath: string): Promise<{cone: boolean} | undefined> {
  return (await readCheckoutConfig(context, mainPath)).sparse
}

/**
 * Whether this git copies the sparse-checkout patterns and mode of the worktree it runs in into a
 * worktree it adds, before that worktree's checkout (git ≥ 2.36, git-worktree(1) "add"): then a
 * plain `git worktree add` run from main writes only the sparse set, in one step. Asked only of a
 * sparse main, so a full checkout pays no process for it.
 */
export async function gitCopiesSparse(context: YardContext): Promise<boolean> {
  const version = /(\d+)\.(\d+)/.exec((await context.runner.git(['--version'], {allowFailure: true})).stdout)
  if (version === null) return false
  const [major, minor] = [Number(version[1]), Number(version[2])]
  return major > 2 || (major === 2 && minor >= 36)
}

/**
 * Gives a worktree made with `git worktree add --no-checkout` main's sparse-checkout patterns and
 * mode, then checks its files out, so only the sparse set is written. git ≥ 2.36 copies both
 * itself when the add runs from main (git-worktree(1)); older gits and a worktree whose copy is
 * missing get them here: `extensions.worktreeConfig` on, the mode in the worktree's own
 * `config.worktree`, the patterns in its `info/sparse-checkout` (the layout git-sparse-checkout(1)
 * documents for worktrees).
 * @throws OperationError (exit 1) when git fails.
 */
export async function checkOutSparse(
  context: YardContext,
  mainPath: string,
  target: string,
  sparse: {cone: boolean},
): Promise<void> {
  const gitPath = async (cwd: string) =>
    path.resolve(
      cwd,
      (await context.runner.git(['rev-parse', '--git-path', 'info/sparse-checkout'], {cwd})).stdout.trim(),
    )
  const [mine, theirs] = await Promise.all([gitPath(mainPath), gitPath(target)])
  if (!existsSync(theirs) && existsSync(mine)) {
    await context.runner.git(['config', 'extensions.worktreeConfig', 'true'], {cwd: target})
    await context.runner.git(['config', '--worktree', 'core.sparseCheckout', 'true'], {cwd: target})
    await context.runner.git(['config', '--worktree', 'core.sparseCheckoutCone', String(sparse.cone)], {cwd: target})
    await fs.mkdir(path.dirname(theirs), {recursive: true})
    await fs.copyFile(mine, theirs)
  }

  await context.runner.git(['checkout', '--quiet'], {cwd: target})
}

/**
 * The pathspecs of what a cone-mode sparse checkout writes (git-sparse-checkout(1), "Internals —
 * cone mode"): the files at the top, the files directly in each parent of a listed directory, and
 * everything below each listed directory; undefined for non-cone patterns. rev-list limits the
 * objects it walks to them, so a sparse partial clone does not fetch blobs it will never check out.
 */
async function conePathspecs(
  context: YardContext,
  mainPath: string,
  sparse: {cone: boolean},
): Promise<string[] | undefined> {
  if (!sparse.cone) return undefined
  const listed = await context.runner.git(['sparse-checkout', 'list'], {cwd: mainPath})
  const dirs = listed.stdout
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
  const parents = new Set<string>()
  for (const dir of dirs) {
    for (let parent = path.posix.dirname(dir); parent !== '.'; parent = path.posix.dirname(parent)) parents.add(parent)
  }

  return [':(glob)*', ...[...parents].map((parent) => `:(glob)${parent}/*`), ...dirs.map((dir) => `:(literal)${dir}`)]
}

/**
 * For a partial clone (`config` as `readCheckoutConfig` read it), makes sure the tree of `commit`
 * is all local before the worktree is made:
 * the missing objects (`git rev-list --objects --no-walk --missing=print`, which fetches nothing)
 * are fetched from the promisor remote once, as git's own lazy fetch does (promisor-remote.c:
 * `fetch --filter=blob:none --stdin`), with gc and maintenance off. Nothing is created when it fails.
 * @returns how many objects were fetched (0 when none were missing or the clone is full).
 * @throws OperationError (exit 1) naming how many objects are missing (and the first few) and the
 *   fix, when the promisor remote cannot give them.
 */
export async function fetchMissingObjects(
  context: YardContext,
  mainPath: string,
  commit: string,
  config: CheckoutConfig,
): Promise<number> {
  const {promisors: remotes, sparse} = config
  if (remotes.length === 0) return 0
  const within = sparse ? await conePathspecs(context, mainPath, sparse) : []
  // Non-cone patterns cannot be told to rev-list cheaply: git's checkout fetches what they need.
  if (within === undefined) return 0
  const listed = await context.runner.git(
    ['rev-list', '--objects', '--no-walk', '--missing=print', commit, '--', ...within],
    {cwd: mainPath},
  )
  const missing = listed.stdout
    .split('\n')
    .filter((line) => line.startsWith('?'))
    .map((line) => line.slice(1).trim())
  if (missing.length === 0) return 0
  const remote = remotes[0]
  const fetched = await context.runner.git(
    [
      ...NO_MAINTENANCE,
      '-c',
      'fetch.negotiationAlgorithm=noop',
      'fetch',
      remote,
      '--quiet',
      '--no-tags',
      '--no-write-fetch-head',
      '--recurse-submodules=no',
      '--filter=blob:none',
      '--stdin',
    ],
    {cwd: mainPath, allowFailure: true, input: missing.join('\n') + '\n', timeoutMs: 600_000, budget: 'fetch'},
  )
  if (fetched.exitCode === 0) return missing.length
  const reason = gitFailure(fetched.stderr) || `exit code ${fetched.exitCode}`
  const shown = missing.slice(0, 3).join(', ') + (missing.length > 3 ? ', …' : '')
  throw new OperationError(
    `this partial clone lacks ${missing.length} object${missing.length === 1 ? '' : 's'} of ${commit.slice(0, 12)} (${shown}), and promisor remote ${remote} could not give them: ${reason}`,
    {
      why: 'a partial clone (--filter) keeps blobs on its promisor remote until a checkout needs them; nothing was created',
      fix: `make ${remote} reachable and run the add again (\`git -C ${shellQuote(mainPath)} rev-list --objects --no-walk --missing=print ${commit.slice(0, 12)}\` lists what is missing), or fork from a base whose files are local with --from REF`,
    },
  )
}
