/**
 * Fault check (not a timing bench; run it alone): `yard worktree add --no-fetch` of the generated
 * 20,000-file repository (generated-repo.ts) killed with SIGKILL — the whole process group, git's
 * checkout included — at ten points, each in a fresh clone; then the same command is run again,
 * and what it leaves is compared with a clean run in a twin clone (test/support/interrupted-add.ts
 * says what is compared). Prints one row per point; exit 1 when any rerun failed or differed.
 *
 *   npm run build:cli && node --import tsx bench/worktree-add-kill.ts
 */
import {execFile} from 'node:child_process'
import {join} from 'node:path'
import {promisify} from 'node:util'

import {addState, killAt, type KillPoint} from '../test/support/interrupted-add.js'
import {ensureBuilt, runJs, yardEnv} from './fixtures.js'
import {cloneInto, generatedRepo} from './generated-repo.js'
import {makeScratchDir} from './lib.js'

const log = (line: string) => process.stderr.write(`worktree-add-kill: ${line}\n`)
const run = promisify(execFile)
const YARD_TOML = '[project]\nprefix = "bench"\n\n[ports]\nAPP_PORT = 3000\nDB_PORT = 5432\n'
const FILES = 20_000
const PER_DIR = 50

/** The path of the generated file `index` (generated-repo.ts's layout; git checks out in this order). */
const fileAt = (index: number) =>
  `<target>/src/d${String(Math.floor(index / PER_DIR)).padStart(3, '0')}/f${String(index % PER_DIR).padStart(3, '0')}.ts`

const POINTS: KillPoint[] = [
  {label: 'journal written', appears: '.git/yard/adding/bench.json'},
  {label: 'git registered the worktree', appears: '.git/worktrees/bench/locked'},
  {label: 'worktree .git file written', appears: '<target>/.git'},
  ...[0.05, 0.2, 0.35, 0.5, 0.65, 0.8, 0.99].map((share) => ({
    label: `${Math.round(share * 100)} % of the files checked out`,
    appears: fileAt(Math.floor(FILES * share)),
  })),
]

const buildFailure = await ensureBuilt(log)
if (buildFailure) {
  log(buildFailure)
  process.exit(1)
}

const env = {...yardEnv(await makeScratchDir('state')), XDG_DATA_HOME: await makeScratchDir('data')}
const source = await generatedRepo({files: FILES, dirs: FILES / PER_DIR, commits: 2000}, YARD_TOML, log)
const yardAdd = [process.execPath, runJs, 'worktree', 'add', 'bench', '--no-fetch']

const time = async (main: string) => {
  const started = Date.now()
  const result = await run(yardAdd[0], yardAdd.slice(1), {cwd: main, env}).then(
    () => ({code: 0, stderr: ''}),
    (error: {code?: number; stderr?: string}) => ({code: error.code ?? 1, stderr: error.stderr ?? ''}),
  )
  return {...result, ms: Date.now() - started}
}

const clean = await cloneInto(source, await makeScratchDir('clean'), 'app')
const cleanRun = await time(clean)
if (cleanRun.code !== 0) {
  log(`the clean run failed: ${cleanRun.stderr}`)
  process.exit(1)
}

const expected = addState(clean, 'bench')
log(`clean run: ${cleanRun.ms} ms, ${expected.files} files`)

let failures = 0
const rows: string[] = []
for (const point of POINTS) {
  const main = await cloneInto(source, await makeScratchDir('killed'), 'app')
  const target = join(`${main}-worktrees`, 'bench')
  const outcome = await killAt(yardAdd, {cwd: main, env, point, target})
  const rerun = await time(main)
  const state = addState(main, 'bench')
  const differs = Object.keys(expected).filter((key) => state[key] !== expected[key])
  const ok = outcome.killed && rerun.code === 0 && differs.length === 0
  if (!ok) failures++
  rows.push(
    `${point.label.padEnd(34)} killed ${outcome.killed ? `after ${String(outcome.elapsedMs).padStart(5)} ms` : `no (exit ${outcome.exitCode})`}  rerun exit ${rerun.code} in ${String(rerun.ms).padStart(5)} ms  ${differs.length === 0 ? 'same state as a clean run' : `differs: ${differs.join(', ')}`}${rerun.code === 0 ? '' : `\n    ${rerun.stderr.trim().replaceAll('\n', '\n    ')}`}`,
  )
  log(rows.at(-1)!)
}

process.stdout.write(
  `worktree add of ${FILES} files killed at ${POINTS.length} points (clean run ${cleanRun.ms} ms)\n${rows.join('\n')}\n${failures === 0 ? 'all reruns succeeded with the state of a clean run' : `${failures} of ${POINTS.length} failed`}\n`,
)
process.exitCode = failures === 0 ? 0 : 1
