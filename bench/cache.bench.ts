/**
 * What a sandbox's workspace costs (DESIGN.md §5, issue acceptance 9), on a generated repository
 * (20,000 files in 400 directories, 2,000 commits; generated-repo.ts) and on `BENCH_REPO` when
 * set, in one run:
 * (a) `git clone --shared` with checkout from a git-cache cache (made by the git-cache backend),
 * (b) `git worktree add` in a clone of the same repository — the baseline,
 * (c) `git clone --no-local` from the cache (a full copy),
 * each with the size of the new `.git`; target (a) ≤ 1.2× (b). Then concurrent churn — 8
 * workspaces × 40 rounds of commit + tag + fetch + tag delete + `pack-refs --all` (git-churn.ts),
 * once — counting lock failures for 8 worktrees of one `.git` and for 8 private `--shared`
 * clones; target: none for the private clones. Two extra rows run the churn again with git's lock
 * retries off, to show the contention the retries turn into waiting.
 */
import {execFile} from 'node:child_process'
import {readdir, readFile, rm, stat} from 'node:fs/promises'
import {join} from 'node:path'
import {promisify} from 'node:util'

import {GitCache} from '../src/plugins/git-cache/cache.js'
import {ProcessRunner} from '../src/sdk/process.js'
import {repoRoot} from './fixtures.js'
import {cloneInto, generatedRepo} from './generated-repo.js'
import {type BenchRow, makeScratchDir, measureBench, readRunConfig, reportBench, type RowResult} from './lib.js'

const log = (line: string) => process.stderr.write(`cache: ${line}\n`)
const run = promisify(execFile)
const git = async (cwd: string, ...args: string[]) =>
  run('git', args, {cwd, env: {...process.env, LC_ALL: 'C', GIT_TERMINAL_PROMPT: '0'}, maxBuffer: 1 << 26})
// The same yard.toml as worktree-add.bench.ts: both benches share one cached repository.
const YARD_TOML = '[project]\nprefix = "bench"\n\n[ports]\nAPP_PORT = 3000\nDB_PORT = 5432\n'
const WORKSPACES = 8
const ROUNDS = 40

/** Bytes of every file under `path` (or of `path` itself). */
async function bytes(path: string): Promise<number> {
  const info = await stat(path)
  if (!info.isDirectory()) return info.size
  let total = 0
  for (const entry of await readdir(path, {recursive: true, withFileTypes: true})) {
    if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name))).size
  }

  return total
}

const mib = (size: number) => `${(size / 1_048_576).toFixed(1)} MiB`

/** Rows (a), (b), (c) for one repository, and the `.git` size of each (measured once, untimed). */
async function workspaceRows(
  source: string,
  suffix: string,
): Promise<{rows: BenchRow[]; cache: string; sizes: number[]}> {
  const scratch = await makeScratchDir('cache')
  const cache = new GitCache({runner: new ProcessRunner(), env: process.env, stateDir: scratch, warn: log})
  log(`caching ${source}${suffix}`)
  const cached = (await cache.add(join(scratch, 'caches'), source)).path
  const main = await cloneInto(cached, scratch, 'main')
  const target = join(scratch, 'target')
  const removeTarget = async () => rm(target, {recursive: true, force: true})
  const removeWorktree = async () => {
    await git(main, 'worktree', 'remove', '--force', target).catch(() => undefined)
    await removeTarget()
  }

  const labels = [
    `(a) git clone --shared${suffix}`,
    `(b) git worktree add${suffix}`,
    `(c) git clone --no-local${suffix}`,
  ]
  const relativeTo = suffix === '' ? undefined : labels[1]
  const rows: BenchRow[] = [
    {
      label: labels[0],
      argv: ['git', 'clone', '-q', '--shared', '--', cached, target],
      afterEach: removeTarget,
      relativeTo,
    },
    {
      label: labels[1],
      argv: ['git', 'worktree', 'add', '-q', '--detach', target, 'HEAD'],
      cwd: main,
      afterEach: removeWorktree,
      relativeTo,
    },
    {
      label: labels[2],
      argv: ['git', 'clone', '-q', '--no-local', '--', cached, target],
      afterEach: removeTarget,
      relativeTo,
    },
  ]
  const sizes: number[] = []
  for (const row of rows) {
    await run(row.argv[0], row.argv.slice(1), {cwd: row.cwd})
    const worktreeAdmin = join(main, '.git', 'worktrees', 'target')
    sizes.push(
      row === rows[1]
        ? (await bytes(join(target, '.git'))) + (await bytes(worktreeAdmin))
        : await bytes(join(target, '.git')),
    )
    await row.afterEach!()
  }

  return {rows, cache: cached, sizes}
}

const generated = await generatedRepo({files: 20_000, dirs: 400, commits: 2000}, YARD_TOML, log)
const sets = [await workspaceRows(generated, '')]
if (process.env.BENCH_REPO) sets.push(await workspaceRows(process.env.BENCH_REPO, ' (BENCH_REPO)'))
const timed = await measureBench({
  name: 'cache',
  baseline: '(b) git worktree add',
  rows: sets.flatMap((set) => set.rows),
})

for (const [index, set] of sets.entries()) {
  const [a, b, c] = timed.rows.slice(index * 3, index * 3 + 3)
  const ratio = (x: RowResult, y: RowResult) =>
    x.medianMs !== null && y.medianMs !== null ? x.medianMs / y.medianMs : null
  const aOverB = ratio(a, b)
  const cOverA = ratio(c, a)
  a.note = `.git ${mib(set.sizes[0])}; target ≤ 1.2× (b): ${aOverB === null ? 'not measured' : aOverB <= 1.2 ? 'met' : 'MISSED'}`
  b.note = `.git ${mib(set.sizes[1])} (the worktree's admin directory)`
  c.note = `.git ${mib(set.sizes[2])}; (c)/(a) = ${cOverA === null ? '—' : `${cOverA.toFixed(2)}×`} in time, ${(set.sizes[2] / set.sizes[0]).toFixed(1)}× in size`
}

/** Eight worktrees of one clone, and eight private `--shared` clones of the cache, each on its own branch. */
async function churnWorkspaces(cached: string): Promise<{worktrees: string[]; clones: string[]}> {
  const scratch = await makeScratchDir('churn')
  log(`making ${WORKSPACES} worktrees and ${WORKSPACES} --shared clones for the churn`)
  const main = await cloneInto(cached, scratch, 'main')
  const worktrees: string[] = []
  const clones: string[] = []
  for (let index = 0; index < WORKSPACES; index++) {
    worktrees.push(join(scratch, `wt-${index}`))
    await git(main, 'worktree', 'add', '-q', '-b', `churn-${index}`, worktrees[index])
    clones.push(join(scratch, `clone-${index}`))
    await git(scratch, 'clone', '-q', '--shared', '--', cached, clones[index])
    await git(clones[index], 'checkout', '-q', '-b', `churn-${index}`)
  }

  return {worktrees, clones}
}

const churn = await churnWorkspaces(sets[0].cache)
const tallies = join(await makeScratchDir('tally'), 'tally')
// git retries a busy lock for a while (core.filesRefLockTimeout 100 ms, core.packedRefsTimeout
// 1 s), which hides contention as waiting; the extra rows turn the retries off to show it.
const noRetries = {
  ...process.env,
  GIT_CONFIG_COUNT: '2',
  GIT_CONFIG_KEY_0: 'core.filesRefLockTimeout',
  GIT_CONFIG_VALUE_0: '0',
  GIT_CONFIG_KEY_1: 'core.packedRefsTimeout',
  GIT_CONFIG_VALUE_1: '0',
}
const churnRow = (label: string, dirs: string[], file: string, retries = true): BenchRow => ({
  label,
  argv: [process.execPath, '--import', 'tsx', join(repoRoot, 'bench', 'git-churn.ts'), file, String(ROUNDS), ...dirs],
  cwd: repoRoot,
  ...(!retries && {env: noRetries, extra: true}),
})
const config = readRunConfig()
// One run: the churn is the measurement, and its history piles up in the workspaces.
const churned = await measureBench(
  {
    name: 'cache',
    baseline: `churn: ${WORKSPACES} worktrees of one .git`,
    rows: [
      churnRow(`churn: ${WORKSPACES} worktrees of one .git`, churn.worktrees, `${tallies}-worktrees`),
      churnRow(`churn: ${WORKSPACES} --shared clones`, churn.clones, `${tallies}-clones`),
      churnRow(`churn: ${WORKSPACES} worktrees, no lock retries`, churn.worktrees, `${tallies}-worktrees-now`, false),
      churnRow(`churn: ${WORKSPACES} --shared clones, no lock retries`, churn.clones, `${tallies}-clones-now`, false),
    ],
  },
  {runs: 1, warmup: 0, timeoutMs: Math.max(config.timeoutMs, 900_000)},
)
const tallyFiles = ['worktrees', 'clones', 'worktrees-now', 'clones-now'].map((suffix) => `${tallies}-${suffix}`)
for (const [index, row] of churned.rows.entries()) {
  const file = tallyFiles[index]
  const tally = JSON.parse(await readFile(file, 'utf8').catch(() => '{}')) as {
    commands?: number
    lockFailures?: number
    otherFailures?: number
    examples?: string[]
  }
  const target = index === 1 ? `; target 0: ${tally.lockFailures === 0 ? 'met' : 'MISSED'}` : ''
  row.note = `lock failures: ${tally.lockFailures} of ${tally.commands} git commands${tally.otherFailures ? `, other failures: ${tally.otherFailures}` : ''}${target}${tally.examples?.length ? ` — e.g. ${tally.examples[0]}` : ''}`
  row.relativeTo = churned.baseline ?? undefined
}

await reportBench({...timed, rows: [...timed.rows, ...churned.rows]})
