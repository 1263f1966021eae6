import {render as renderScreen} from 'ink-testing-library'
/**
 * The dashboard's gather over 50 worktrees without stacks (DESIGN.md §6), in this process, against
 * `git status --porcelain=v2 --branch` run in each worktree one after another (the baseline); and
 * the time to render the table of those rows. Target: the whole gather (git status of every
 * checkout, one engine call for every stack and box, the sandbox list) ≤ 500 ms.
 */
import {execFile} from 'node:child_process'
import {writeFile} from 'node:fs/promises'
import {join} from 'node:path'
import {performance} from 'node:perf_hooks'
import {promisify} from 'node:util'
import {createElement} from 'react'

import {gatherLocal} from '../src/core/dashboard/dashboard.js'
import {createContext} from '../src/core/kernel/context.js'
import {backendsOf} from '../src/core/registry/backends.js'
import {loadRegistry} from '../src/core/registry/registry.js'
import {listWorktrees} from '../src/core/worktree/list.js'
import {DashboardApp, type DashboardServices} from '../src/tui/dashboard-app.js'
import {LOCAL_COLUMNS, tableLines} from '../src/tui/dashboard-table.js'
import {loadTestConfig} from '../test/support/oclif-config.js'
import {readRunConfig, reportBench, type RowResult} from './lib.js'
import {scratchDir} from './stack-fixture.js'

process.env.NODE_ENV = 'development'
const run = promisify(execFile)
const repo = join(await scratchDir('dashboard'), 'app')
const names = Array.from({length: 50}, (_, index) => `w${index}`)
await run('mkdir', ['-p', repo])
await writeFile(join(repo, 'yard.toml'), '[project]\nprefix = "yardbench-dash"\n\n[ports]\nWEB_PORT = 39300\n')
const git = async (...args: string[]) =>
  run('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@yard.invalid', ...args], {cwd: repo})
await git('init', '-q', '-b', 'main')
await git('add', 'yard.toml')
await git('commit', '-q', '-m', 'bench')
const paths = names.map((name) => join(`${repo}-worktrees`, name))
for (const [index, name] of names.entries()) await git('worktree', 'add', '-q', '-b', `wt/${name}`, paths[index])
// Each with the base `yard worktree add` records (DESIGN.md §4.1), so that the gather compares it with its base.
for (const name of names) await git('config', `branch.wt/${name}.yardBase`, 'refs/heads/main')

const context = createContext({
  env: {
    ...process.env,
    YARD_STATE_DIR: await scratchDir('dashboard-state'),
    YARD_WORKTREE: undefined,
    WT_OFFSET: undefined,
  },
  cwd: repo,
  warn() {},
})
const backends = backendsOf(await loadRegistry(await loadTestConfig()))
const {runs, warmup} = readRunConfig()

/** Median, min and 90th percentile of `runs` timed calls after `warmup` untimed ones, in ms. */
async function time(label: string, work: () => Promise<unknown>, extra: Partial<RowResult> = {}): Promise<RowResult> {
  for (let index = 0; index < warmup; index++) await work()
  const times: number[] = []
  for (let index = 0; index < runs; index++) {
    const start = performance.now()
    await work()
    times.push(performance.now() - start)
  }

  times.sort((a, b) => a - b)
  const pick = (fraction: number) =>
    Math.round(times[Math.min(times.length - 1, Math.floor(fraction * times.length))] * 10) / 10
  return {
    label,
    runs,
    medianMs: pick(0.5),
    minMs: Math.round(times[0] * 10) / 10,
    p90Ms: pick(0.9),
    ratio: null,
    ...extra,
  }
}

const baseline = await time('git status --porcelain=v2 --branch × 50, one after another', async () => {
  for (const path of paths) await run('git', ['status', '--porcelain=v2', '--branch'], {cwd: path})
})
const gather = await time(
  'dashboard gather: worktree list, one podman ps for every stack and box, sandbox list',
  async () => gatherLocal(context, backends),
  {note: 'target ≤ 500 ms'},
)
const gitGather = await time(
  "the gather's git part alone (worktree list of 51 checkouts)",
  async () => listWorktrees(context, {inProcess: true}),
  {extra: true},
)
const cliGather = await time(
  'the same as `yard worktree list` runs it (branch config and upstreams through git)',
  async () => listWorktrees(context),
  {extra: true},
)
const {rows} = await gatherLocal(context, backends)
const lines = await time(
  'the table of 51 rows at 120 columns (tableLines)',
  async () => tableLines(LOCAL_COLUMNS, rows, 117),
  {extra: true},
)

/** Mounts the screen over the gathered rows and waits for its first frame showing the last row. */
async function firstFrame(): Promise<void> {
  const services = {load: async () => ({rows, notes: []})} as unknown as DashboardServices
  const screen = renderScreen(createElement(DashboardApp, {services, initialMode: 'local', onExit() {}}))
  const last = rows.at(-1)!.name
  while (!(screen.lastFrame() ?? '').includes(last)) await new Promise((resolve) => setImmediate(resolve))
  screen.unmount()
}

const frame = await time("the screen's first frame with 51 rows (Ink)", firstFrame, {extra: true})
const rowsOut = [baseline, gather, gitGather, cliGather, lines, frame].map((row) => ({
  ...row,
  ratio:
    row.medianMs === null || baseline.medianMs === null
      ? null
      : Math.round((row.medianMs / baseline.medianMs) * 100) / 100,
}))
await reportBench({name: 'dashboard', baseline: baseline.label, rows: rowsOut})
