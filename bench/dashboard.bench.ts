/**
 * The dashboard's gather over 50 worktrees without stacks (DESIGN.md §6), in this process, against
 * `git status --porcelain=v2 --branch` run in each worktree one after another (the baseline); and
 * the time to render the table of those rows. Target: the git part of the gather ≤ 500 ms.
 */
import {execFile} from 'node:child_process'
import {writeFile} from 'node:fs/promises'
import {join} from 'node:path'
import {performance} from 'node:perf_hooks'
import {promisify} from 'node:util'

import {createContext} from '../src/core/context.js'
import {gatherLocal} from '../src/core/dashboard.js'
import {loadRegistry} from '../src/core/registry.js'
import {listWorktrees} from '../src/core/worktree-list.js'
import {LOCAL_COLUMNS, tableLines} from '../src/tui/dashboard-table.js'
import {loadTestConfig} from '../test/support/oclif-config.js'
import {readRunConfig, reportBench, RowResult} from './lib.js'
import {scratchDir} from './stack-fixture.js'

process.env.NODE_ENV = 'development'
const run = promisify(execFile)
const repo = join(await scratchDir('dashboard'), 'app')
const names = Array.from({length: 50}, (_, index) => `w${index}`)
await run('mkdir', ['-p', repo])
await writeFile(join(repo, 'yard.toml'), '[project]\nprefix = "yardbench-dash"\n\n[ports]\nWEB_PORT = 39300\n')
const git = (...args: string[]) => run('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@yard.invalid', ...args], {cwd: repo})
await git('init', '-q', '-b', 'main')
await git('add', 'yard.toml')
await git('commit', '-q', '-m', 'bench')
const paths = names.map((name) => join(`${repo}-worktrees`, name))
for (const [index, name] of names.entries()) await git('worktree', 'add', '-q', '-b', `wt/${name}`, paths[index])

const context = createContext({env: {...process.env, YARD_STATE_DIR: await scratchDir('dashboard-state'), YARD_WORKTREE: undefined, WT_OFFSET: undefined}, cwd: repo, warn: () => {}})
const registry = await loadRegistry(await loadTestConfig())
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
  const pick = (fraction: number) => Math.round(times[Math.min(times.length - 1, Math.floor(fraction * times.length))] * 10) / 10
  return {label, runs, medianMs: pick(0.5), minMs: Math.round(times[0] * 10) / 10, p90Ms: pick(0.9), ratio: null, ...extra}
}

const baseline = await time('git status --porcelain=v2 --branch × 50, one after another', async () => {
  for (const path of paths) await run('git', ['status', '--porcelain=v2', '--branch'], {cwd: path})
})
const gitGather = await time('dashboard gather, git part (worktree list) × 51', () => listWorktrees(context), {note: 'target ≤ 500 ms'})
const rows = (await gatherLocal(context, registry)).rows
const full = await time('dashboard gather with stack and box probes (podman ps × 102)', () => gatherLocal(context, registry), {extra: true, note: 'no stacks run; each probe within 1.5 s'})
const render = await time('render the table of 51 rows at 120 columns', async () => tableLines(LOCAL_COLUMNS, rows, 117), {extra: true})
const rowsOut = [baseline, gitGather, full, render].map((row) => ({...row, ratio: row.medianMs === null || baseline.medianMs === null ? null : Math.round((row.medianMs / baseline.medianMs) * 100) / 100}))
await reportBench({name: 'dashboard', baseline: baseline.label, rows: rowsOut})
