/**
 * `yard worktree add --no-fetch` (the built CLI, bin/run.js) against plain `git worktree add` of
 * the same new branch from the same base, in the same run: on a generated repository (20,000
 * files in 400 directories, 2,000 commits; cached between runs, see generated-repo.ts) and, when
 * `BENCH_REPO` is set, on a local clone of that repository. Target on the generated one: yard's
 * overhead (the median of the paired differences, lib.ts `overheadOver`) ≤ 200 ms.
 * A sparse pair on the generated repository: main with a cone sparse-checkout of one directory,
 * against the same done by hand with git. Target: ≤ 1.3×.
 * Each run's worktree and branch are removed afterwards, untimed.
 */
import {execFile} from 'node:child_process'
import {join} from 'node:path'
import {promisify} from 'node:util'

import {ensureBuilt, runJs, yardEnv} from './fixtures.js'
import {cloneInto, generatedRepo} from './generated-repo.js'
import {type BenchRow, makeScratchDir, measureBench, reportBench} from './lib.js'

const log = (line: string) => process.stderr.write(`worktree-add: ${line}\n`)
const git = promisify(execFile)
const YARD_TOML = '[project]\nprefix = "bench"\n\n[ports]\nAPP_PORT = 3000\nDB_PORT = 5432\n'

const buildFailure = await ensureBuilt(log)
// Plugins a developer linked (oclif reads them from XDG_DATA_HOME/yard) would load in every run.
const env = {...yardEnv(await makeScratchDir('state')), XDG_DATA_HOME: await makeScratchDir('data')}

/** The two rows for one main checkout; `suffix` tells the repositories apart in labels. */
async function rowsFor(main: string, suffix: string): Promise<BenchRow[]> {
  const target = join(`${main}-worktrees`, 'bench')
  // The base yard picks with --no-fetch in a clone: origin/HEAD. git gets the same commit.
  const base = (await git('git', ['rev-parse', 'refs/remotes/origin/HEAD^{commit}'], {cwd: main})).stdout.trim()
  const cleanUp = async () => {
    await git('git', ['worktree', 'remove', '--force', target], {cwd: main}).catch(() => undefined)
    await git('git', ['branch', '-q', '-D', 'wt/bench'], {cwd: main}).catch(() => undefined)
  }

  await cleanUp()
  const gitLabel = `git worktree add${suffix}`
  // The BENCH_REPO pair is compared with itself, not with the generated repository's git row.
  const relativeTo = suffix === '' ? undefined : gitLabel
  return [
    {
      label: gitLabel,
      argv: ['git', 'worktree', 'add', '-q', '--no-track', '-b', 'wt/bench', target, base],
      cwd: main,
      env,
      afterEach: cleanUp,
      relativeTo,
    },
    {
      label: `yard worktree add --no-fetch${suffix}`,
      argv: [process.execPath, runJs, 'worktree', 'add', 'bench', '--no-fetch'],
      cwd: main,
      env,
      afterEach: cleanUp,
      unavailable: buildFailure,
      relativeTo,
      overheadOver: gitLabel,
      note: suffix === '' ? 'target: overhead ≤ 200 ms' : undefined,
    },
  ]
}

/**
 * The sparse pair: a second clone whose main has a cone sparse-checkout of one directory; by hand
 * is what git-worktree(1) suggests (`--no-checkout`, the patterns, then the checkout), yard's add
 * gives the new worktree main's patterns before its checkout.
 */
async function sparseRows(main: string): Promise<BenchRow[]> {
  await git('git', ['sparse-checkout', 'set', '--cone', SPARSE_DIR], {cwd: main})
  const target = join(`${main}-worktrees`, 'bench')
  const base = (await git('git', ['rev-parse', 'refs/remotes/origin/HEAD^{commit}'], {cwd: main})).stdout.trim()
  const cleanUp = async () => {
    await git('git', ['worktree', 'remove', '--force', target], {cwd: main}).catch(() => undefined)
    await git('git', ['branch', '-q', '-D', 'wt/bench'], {cwd: main}).catch(() => undefined)
  }

  await cleanUp()
  // Paths reach the script as positional parameters, never inside its text.
  const byHand =
    'git worktree add -q --no-checkout --no-track -b wt/bench "$1" "$2" && git -C "$1" sparse-checkout set --cone "$3" && git -C "$1" checkout -q'
  return [
    {
      label: 'git worktree add (sparse, by hand)',
      argv: ['/bin/sh', '-c', byHand, 'sh', target, base, SPARSE_DIR],
      cwd: main,
      env,
      afterEach: cleanUp,
    },
    {
      label: 'yard worktree add --no-fetch (sparse)',
      argv: [process.execPath, runJs, 'worktree', 'add', 'bench', '--no-fetch'],
      cwd: main,
      env,
      afterEach: cleanUp,
      unavailable: buildFailure,
      relativeTo: 'git worktree add (sparse, by hand)',
    },
    // What any yard command costs in that clone (start-up, config, git's answers): the by-hand
    // checkout of 50 files is shorter than it, so the sparse ratio is mostly this floor.
    {
      label: 'yard ports --json (sparse clone, start-up floor)',
      argv: [process.execPath, runJs, 'ports', '--json'],
      cwd: main,
      env,
      unavailable: buildFailure,
      relativeTo: 'git worktree add (sparse, by hand)',
      extra: true,
    },
  ]
}

const SPARSE_DIR = 'src/d007'
const generated = await generatedRepo({files: 20_000, dirs: 400, commits: 2000}, YARD_TOML, log)
const rows = await rowsFor(await cloneInto(generated, await makeScratchDir('generated'), 'app'), '')
rows.push(...(await sparseRows(await cloneInto(generated, await makeScratchDir('generated-sparse'), 'app'))))
if (process.env.BENCH_REPO) {
  log(`cloning BENCH_REPO ${process.env.BENCH_REPO}`)
  rows.push(
    ...(await rowsFor(
      await cloneInto(process.env.BENCH_REPO, await makeScratchDir('bench-repo'), 'repo'),
      ' (BENCH_REPO)',
    )),
  )
}

await reportBench(await measureBench({name: 'worktree-add', baseline: 'git worktree add', rows}))
