/**
 * The timing harness every bench script shares (bench/README.md). A bench script names its rows —
 * a label and an argv — and one of them as the baseline; `measureBench` times each row in fresh
 * child processes and reduces the samples; `reportBench` hands the result to bench/run.ts (or
 * prints the table when the script runs on its own).
 */
import {spawn} from 'node:child_process'
import {rmSync} from 'node:fs'
import {mkdtemp, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {performance} from 'node:perf_hooks'

export interface BenchRow {
  /** Names the row in the table and in results.json; the baseline is chosen by it. */
  label: string
  /** Executable and arguments, spawned without a shell. */
  argv: readonly [string, ...string[]]
  cwd?: string
  /** The child's whole environment (default: this process's). */
  env?: NodeJS.ProcessEnv
  /** Informational: shown for context, never meant as a gate. */
  extra?: boolean
  /** A short remark printed after the figures. */
  note?: string
  /**
   * Label of the row this one's ratio is taken against, when not the bench's baseline (a bench
   * that compares two pairs, e.g. the same commands on two repositories).
   */
  relativeTo?: string
  /**
   * Label of a row this one adds work to: the result then gives `overheadMs`, the median over
   * the timed rounds of this row's run minus that row's run of the same round (paired, so a
   * change in machine load between rounds cancels out).
   */
  overheadOver?: string
  /**
   * Measure CPU time (user + system of the command and its children, through bash's `times`)
   * instead of wall-clock time: steadier than wall clock on a loaded machine.
   */
  cpu?: boolean
  /** When set, the row is not run and is reported failed with this reason. */
  unavailable?: string
  /**
   * When set, a run is this call, timed in this process (a request to a server started once),
   * instead of spawning `argv`; `argv` then only says what the row stands for. A rejection fails
   * the row.
   */
  call?: () => Promise<void>
  /** Untimed work around each run, warm-ups included (e.g. remove what a timed `worktree add` made). */
  beforeEach?: () => Promise<void>
  afterEach?: () => Promise<void>
}

export interface BenchSpec {
  name: string
  /** Label of the row the others are divided by. */
  baseline: string
  rows: BenchRow[]
}

/** One row of results.json; figures are milliseconds, null when the row failed. */
export interface RowResult {
  label: string
  /** Timed runs that completed (warm-ups not counted). */
  runs: number
  medianMs: number | null
  minMs: number | null
  p90Ms: number | null
  /** medianMs / the baseline's medianMs (or that of the row named by `relativeTo`). */
  ratio: number | null
  relativeTo?: string
  /** Median of the paired differences to the row named by `overheadOver` (BenchRow.overheadOver), ms. */
  overheadMs?: number
  overheadOver?: string
  extra?: true
  /** The figures are CPU milliseconds (BenchRow.cpu), not wall clock. */
  cpu?: true
  note?: string
  /** Why the row has no figures: exit code and the first lines of the command's output. */
  error?: string
}

export interface BenchResult {
  name: string
  baseline: string | null
  rows: RowResult[]
  /** Set when the bench script itself failed and produced no rows. */
  error?: string
}

export interface RunConfig {
  runs: number
  warmup: number
  timeoutMs: number
}

/**
 * Reads BENCH_RUNS (default 10), BENCH_WARMUP (default 2) and BENCH_TIMEOUT_MS (default 60000).
 * @throws Error naming the variable when a value is not a whole number in range.
 */
export function readRunConfig(env: NodeJS.ProcessEnv = process.env): RunConfig {
  return {
    runs: readCount(env, 'BENCH_RUNS', 10, 1),
    warmup: readCount(env, 'BENCH_WARMUP', 2, 0),
    timeoutMs: readCount(env, 'BENCH_TIMEOUT_MS', 60_000, 1),
  }
}

function readCount(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  const text = env[name]
  if (text === undefined || text === '') return fallback
  const value = Number(text)
  if (!Number.isInteger(value) || value < min) {
    throw new Error(`${name} must be a whole number ≥ ${min}, got '${text}'. Unset it to use ${fallback}.`)
  }

  return value
}

interface RowState {
  row: BenchRow
  samples: number[]
  error?: string
}

/**
 * Times every row: `warmup` untimed rounds, then `runs` timed rounds. Each round runs every
 * still-healthy row once, starting one row later than the previous round, so drift in machine load
 * spreads over all rows instead of biasing one. A row whose command exits non-zero, is killed or
 * times out stops there and is reported with the reason; the other rows go on.
 * @throws Error when `baseline` names no row (a mistake in the bench script).
 */
export async function measureBench(spec: BenchSpec, config: RunConfig = readRunConfig()): Promise<BenchResult> {
  for (const label of [
    spec.baseline,
    ...spec.rows.flatMap((row) => [row.relativeTo ?? [], row.overheadOver ?? []].flat()),
  ]) {
    if (spec.rows.every((row) => !(row.label === label)))
      throw new Error(`bench ${spec.name}: baseline '${label}' is not one of its rows`)
  }

  const states: RowState[] = spec.rows.map((row) => ({row, samples: [], error: row.unavailable}))
  const rounds = config.warmup + config.runs
  process.stderr.write(
    `${spec.name}: ${config.warmup} warm-up + ${config.runs} timed runs of ${spec.rows.length} rows\n`,
  )
  for (let round = 0; round < rounds; round++) {
    const timed = round >= config.warmup
    for (const state of rotate(states, round)) {
      if (state.error !== undefined) continue
      const outcome = await runOnce(state.row, config.timeoutMs)
      if (outcome.error !== undefined) {
        const which = timed
          ? `run ${round - config.warmup + 1}/${config.runs}`
          : `warm-up ${round + 1}/${config.warmup}`
        state.error = `${which}: ${outcome.error}`
      } else if (timed) {
        state.samples.push(outcome.ms)
      }
    }
  }

  const stateOf = (label: string) => states.find((state) => state.row.label === label)!
  const rows = states.map((state) => {
    const result = toRowResult(state, median(stateOf(state.row.relativeTo ?? spec.baseline)))
    const over = state.row.overheadOver
    if (over !== undefined) {
      result.overheadOver = over
      const overhead = pairedOverhead(state, stateOf(over))
      if (overhead !== undefined) result.overheadMs = round2(overhead)
    }

    return result
  })
  return {name: spec.name, baseline: spec.baseline, rows}
}

/** Median of `state`'s samples minus `other`'s of the same round; undefined unless both ran every round. */
function pairedOverhead(state: RowState, other: RowState): number | undefined {
  if (
    state.error !== undefined ||
    other.error !== undefined ||
    state.samples.length === 0 ||
    state.samples.length !== other.samples.length
  )
    return undefined
  return percentile(
    state.samples.map((sample, index) => sample - other.samples[index]),
    50,
  )
}

function rotate<T>(items: T[], by: number): T[] {
  const start = by % items.length
  return [...items.slice(start), ...items.slice(0, start)]
}

function median(state: RowState): number | null {
  return state.error === undefined && state.samples.length > 0 ? percentile(state.samples, 50) : null
}

/** Nearest-rank percentile of `samples` (p in 1..100); the median of an even count averages the middle two. */
function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b)
  if (p === 50 && sorted.length % 2 === 0) return (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]
}

function toRowResult(state: RowState, baselineMedian: number | null): RowResult {
  const {row, samples, error} = state
  const ok = error === undefined && samples.length > 0
  const medianMs = ok ? round2(percentile(samples, 50)) : null
  const result: RowResult = {
    label: row.label,
    runs: samples.length,
    medianMs,
    minMs: ok ? round2(Math.min(...samples)) : null,
    p90Ms: ok ? round2(percentile(samples, 90)) : null,
    ratio: medianMs !== null && baselineMedian ? round2(percentile(samples, 50) / baselineMedian) : null,
  }
  if (row.extra) result.extra = true
  if (row.cpu) result.cpu = true
  if (row.note) result.note = row.note
  if (row.relativeTo) result.relativeTo = row.relativeTo
  if (error !== undefined) result.error = error
  return result
}

function round2(value: number): number {
  return Math.round(value * 100) / 100
}

interface RunOutcome {
  ms: number
  error?: string
}

async function runOnce(row: BenchRow, timeoutMs: number): Promise<RunOutcome> {
  try {
    await row.beforeEach?.()
  } catch (error) {
    return {ms: 0, error: `beforeEach failed: ${(error as Error).message}`}
  }

  const outcome = row.call ? await timeCall(row.call, timeoutMs) : await timeCommand(row, timeoutMs)
  try {
    await row.afterEach?.()
  } catch (error) {
    return {ms: 0, error: outcome.error ?? `afterEach failed: ${(error as Error).message}`}
  }

  return outcome
}

const OUTPUT_CAP = 16 * 1024

/** Wall-clock ms of one in-process call, failed when it rejects or takes longer than `timeoutMs`. */
async function timeCall(call: () => Promise<void>, timeoutMs: number): Promise<RunOutcome> {
  const started = performance.now()
  let timer: NodeJS.Timeout | undefined
  const budget = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs)
  })
  try {
    await Promise.race([call(), budget])
    return {ms: performance.now() - started}
  } catch (error) {
    return {ms: performance.now() - started, error: (error as Error).message}
  } finally {
    clearTimeout(timer)
  }
}

/** bash's `times` for its children: "0m0.112s 0m0.031s" (user, system). */
const CPU_TIMES = /(\d+)m([\d.]+)s (\d+)m([\d.]+)s\s*$/

/**
 * Wall-clock ms from spawn until the child exited and closed its output; with `row.cpu`, the
 * child's CPU ms instead (it runs under bash, which prints `times` after it; its own output is
 * dropped).
 */
async function timeCommand(row: BenchRow, timeoutMs: number): Promise<RunOutcome> {
  return new Promise((resolve) => {
    const output = {stdout: '', stderr: ''}
    let settled = false
    let timedOut = false
    const started = performance.now()
    const argv = row.cpu
      ? ['bash', '-c', '"$@" >/dev/null; status=$?; times; exit $status', 'bench', ...row.argv]
      : row.argv
    const child = spawn(argv[0], argv.slice(1), {
      cwd: row.cwd,
      env: row.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const timer = setTimeout(() => {
      timedOut = true
      child.kill('SIGKILL')
    }, timeoutMs)
    const settle = (outcome: RunOutcome) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve(outcome)
    }

    for (const stream of ['stdout', 'stderr'] as const) {
      child[stream].setEncoding('utf8')
      child[stream].on('data', (chunk: string) => {
        if (output[stream].length < OUTPUT_CAP) output[stream] += chunk
      })
    }

    child.on('error', (error) => settle({ms: 0, error: `cannot run ${row.argv[0]}: ${error.message}`}))
    child.on('close', (code, signal) => {
      const ms = performance.now() - started
      if (code === 0 && row.cpu) {
        const times = CPU_TIMES.exec(output.stdout)
        if (!times) return settle({ms, error: `no CPU times from bash: ${firstLines(output.stdout)}`})
        return settle({
          ms: (Number(times[1]) * 60 + Number(times[2]) + Number(times[3]) * 60 + Number(times[4])) * 1000,
        })
      }

      if (code === 0) return settle({ms})
      const how = timedOut ? `timed out after ${timeoutMs} ms` : signal ? `killed by ${signal}` : `exit ${code}`
      const said = firstLines(output.stderr) || firstLines(output.stdout)
      settle({ms, error: said ? `${how}: ${said}` : how})
    })
  })
}

/** The first two non-empty lines of a command's output, without colour codes, on one line. */
function firstLines(text: string): string {
  return text

    .replaceAll(/\u001B\[[0-9;]*m/g, '')
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .slice(0, 2)
    .join(' / ')
}

/**
 * Prints `result` as a table, or — when bench/run.ts started this script and set
 * BENCH_RESULT_FILE — writes it there as JSON for run.ts to collect.
 */
export async function reportBench(result: BenchResult): Promise<void> {
  const resultFile = process.env.BENCH_RESULT_FILE
  if (resultFile) await writeFile(resultFile, JSON.stringify(result))
  else process.stdout.write(formatTable(result))
  if (hasFailures(result)) process.exitCode = 1
}

export function hasFailures(result: BenchResult): boolean {
  return result.error !== undefined || result.rows.some((row) => row.error !== undefined)
}

/** A plain-text table: absolute ms (median, min, p90) and the ratio of medians to the baseline. */
export function formatTable(result: BenchResult): string {
  if (result.error !== undefined) return `\n${result.name}: FAILED — ${result.error}\n`
  const header = ['', 'runs', 'median', 'min', 'p90', '× base', '']
  const lines = result.rows.map((row) => {
    if (row.error !== undefined) return [row.label, String(row.runs), 'FAILED', '', '', '', row.error]
    const remark = [
      row.label === result.baseline ? 'baseline' : '',
      row.cpu ? 'CPU time' : '',
      row.relativeTo ? `× ${row.relativeTo}` : '',
      row.overheadMs === undefined
        ? ''
        : `${row.overheadMs >= 0 ? '+' : ''}${row.overheadMs.toFixed(1)} ms over ${row.overheadOver} (paired median)`,
      row.extra ? 'extra' : '',
      row.note ?? '',
    ]
    return [
      row.label,
      String(row.runs),
      ms(row.medianMs),
      ms(row.minMs),
      ms(row.p90Ms),
      ratio(row.ratio),
      remark.filter(Boolean).join('; '),
    ]
  })
  const widths = header.map((cell, column) =>
    Math.max(cell.length, ...lines.map((line) => (column === 6 ? 0 : line[column].length))),
  )
  const render = (cells: string[]) =>
    cells
      .map((cell, column) =>
        column === 0 ? cell.padEnd(widths[0]) : column === 6 ? cell : cell.padStart(widths[column]),
      )
      .join('  ')
      .trimEnd()
  return [`\n${result.name} (baseline: ${result.baseline})`, render(header), ...lines.map(render)].join('\n') + '\n'
}

function ms(value: number | null): string {
  return value === null ? '—' : `${value.toFixed(1)} ms`
}

function ratio(value: number | null): string {
  return value === null ? '—' : `${value.toFixed(2)}×`
}

const scratchDirs: string[] = []

/**
 * A new empty directory under the OS temp dir, removed when this process exits (Ctrl-C included).
 */
export async function makeScratchDir(prefix: string): Promise<string> {
  if (scratchDirs.length === 0) {
    process.on('exit', () => {
      for (const dir of scratchDirs) rmSync(dir, {recursive: true, force: true})
    })
    process.once('SIGINT', () => process.exit(130))
  }

  const dir = await mkdtemp(join(tmpdir(), `yard-bench-${prefix}-`))
  scratchDirs.push(dir)
  return dir
}
