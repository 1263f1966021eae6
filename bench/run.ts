/**
 * `npm run bench [-- NAME…]`: runs each bench/<NAME>.bench.ts (all of them by default) in its own
 * `node --import tsx` process, prints each one's table as it finishes and writes every result to
 * bench/results.json. Exit 0 when every row ran, 1 when a row or a bench failed, 2 for unknown
 * names or bad BENCH_* values (bench/README.md).
 */
import {spawn} from 'node:child_process'
import {readdir, readFile, writeFile} from 'node:fs/promises'
import {cpus, totalmem} from 'node:os'
import {dirname, join, relative} from 'node:path'
import {fileURLToPath} from 'node:url'

import {type BenchResult, formatTable, hasFailures, makeScratchDir, readRunConfig} from './lib.js'

const benchDir = dirname(fileURLToPath(import.meta.url))
const repoRoot = dirname(benchDir)
const suffix = '.bench.ts'
const resultsPath = join(benchDir, 'results.json')

const available = (await readdir(benchDir))
  .filter((file) => file.endsWith(suffix))
  .map((file) => file.slice(0, -suffix.length))
  .sort()
const asked = process.argv.slice(2)
if (asked.includes('--help') || asked.includes('-h')) {
  process.stdout.write(
    `usage: npm run bench [-- NAME…]\nbenches: ${available.join(', ')}\nsee bench/README.md for BENCH_RUNS, BENCH_WARMUP, BENCH_TIMEOUT_MS\n`,
  )
  process.exit(0)
}

const unknown = asked.filter((name) => !available.includes(name))
if (unknown.length > 0) {
  process.stderr.write(
    `bench: no bench named ${unknown.join(', ')} (no bench/${unknown[0]}${suffix}). Available: ${available.join(', ')}\n`,
  )
  process.exit(2)
}

try {
  readRunConfig()
} catch (error) {
  process.stderr.write(`bench: ${(error as Error).message}\n`)
  process.exit(2)
}

const names = asked.length > 0 ? asked : available
const benches: BenchResult[] = []
for (const name of names) {
  const result = await runBenchScript(name)
  benches.push(result)
  process.stdout.write(formatTable(result))
}

const results = {
  date: new Date().toISOString(),
  node: process.version,
  host: {cpus: cpus().length, mem: totalmem()},
  benches,
}
await writeFile(resultsPath, JSON.stringify(results, null, 2) + '\n')
process.stdout.write(`\nwrote ${relative(process.cwd(), resultsPath) || resultsPath}\n`)
if (benches.some((bench) => hasFailures(bench))) process.exitCode = 1

/** Runs one bench script in a child process; its result comes back through BENCH_RESULT_FILE. */
async function runBenchScript(name: string): Promise<BenchResult> {
  const resultFile = join(await makeScratchDir('result'), 'result.json')
  const script = join(benchDir, name + suffix)
  const code = await new Promise<number | string>((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      cwd: repoRoot,
      env: {...process.env, BENCH_RESULT_FILE: resultFile},
      stdio: 'inherit',
    })
    child.on('error', (error) => resolve(error.message))
    child.on('close', (exitCode, signal) => resolve(exitCode ?? `killed by ${signal}`))
  })
  try {
    return JSON.parse(await readFile(resultFile, 'utf8')) as BenchResult
  } catch {
    const how = typeof code === 'number' ? `exit ${code}` : code
    return {
      name,
      baseline: null,
      rows: [],
      error: `bench/${name}${suffix} gave no result (${how}); see its output above`,
    }
  }
}
