/**
 * kill -9 points during `yard cache add` of a large repository (DESIGN.md §3.4 "Locks", §5.1):
 * a clean `cache add` of a generated repository of BENCH_KILL_MB MB (default 500, random blobs,
 * cached between runs like generated-repo.ts), then BENCH_KILL_POINTS points (default 10) spread
 * over the clone (its duration re-estimated from each rerun that cloned again): each in a fresh
 * cache root, yard alone is killed (SIGKILL) that long
 * after the `.cloning` marker appeared, the same command is run again, and its exit code, its
 * time, whether it left the state a clean run leaves and whether the orphaned git was ended are
 * printed. Exit 1 when any rerun failed or left another state. Not a timing bench: run it alone,
 *   node --import tsx bench/kill-points.ts
 */
import {existsSync, mkdirSync, renameSync, rmSync} from 'node:fs'
import path from 'node:path'

import {repoIdentity} from '../src/sdk/repo-identity.js'
import {cacheState, killPoint, type KillPoint, makeBulkyUpstream, startCacheAdd} from '../test/support/kill-points.js'
import {benchCacheDir} from './generated-repo.js'
import {makeScratchDir} from './lib.js'

const log = (line: string) => process.stderr.write(`kill-points: ${line}\n`)
const megabytes = Number(process.env.BENCH_KILL_MB ?? 500)
const count = Number(process.env.BENCH_KILL_POINTS ?? 10)
if (!(Number.isInteger(megabytes) && megabytes > 0 && Number.isInteger(count) && count > 0)) {
  log('BENCH_KILL_MB and BENCH_KILL_POINTS must be positive whole numbers')
  process.exit(2)
}

/** The generated upstream, made once per size under the bench cache directory. */
function upstream(): string {
  const kept = path.join(benchCacheDir(), `bulky-${megabytes}mb`)
  const bare = path.join(kept, 'bulky.git')
  if (existsSync(bare)) return bare
  const building = `${kept}.building-${process.pid}`
  mkdirSync(building, {recursive: true})
  log(`generating a ${megabytes} MB repository under ${kept} (once)`)
  makeBulkyUpstream(building, megabytes, 10)
  renameSync(building, kept)
  return bare
}

const url = upstream()
const scratch = await makeScratchDir('kill-points')
const sleep = async (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

// The clean run: its state is the reference, its clone time spreads the points.
const cleanRoot = path.join(scratch, 'clean', 'caches')
const clean = startCacheAdd(url, {YARD_CACHE_ROOT: cleanRoot})
let exited = false
void clean.done.then(() => (exited = true))
const started = Date.now()
const marker = path.join(cleanRoot, `${repoIdentity(url).key}.cloning`)
while (!existsSync(marker) && !exited) await sleep(5)
const markerSeen = Date.now()
const cleanRun = await clean.done
const cloneMs = Date.now() - markerSeen
if (cleanRun.code !== 0) {
  log(`the clean run failed (exit ${cleanRun.code}): ${cleanRun.stderr}`)
  process.exit(1)
}

const reference = cacheState(cleanRoot, url)
rmSync(path.join(scratch, 'clean'), {recursive: true, force: true})
log(`clean run: ${Date.now() - started} ms, of which ${cloneMs} ms from the marker to the end`)

const points: KillPoint[] = []
// The clone's speed drifts with the machine's load: each rerun that cloned again updates the
// estimate the next point is placed in, and points stay within 90 % of it.
let estimateMs = cloneMs
for (let index = 0; index < count; index++) {
  const afterMarkerMs = Math.round(((index + 0.5) / count) * 0.9 * estimateMs)
  const dir = path.join(scratch, `point-${index}`)
  const point = await killPoint(dir, url, {}, afterMarkerMs, reference)
  points.push(point)
  if (!point.exitedFirst && point.rerun.code === 0 && point.orphans > 0) estimateMs = point.rerun.ms
  rmSync(dir, {recursive: true, force: true})
  log(
    `point ${index + 1}/${count}: ${point.exitedFirst ? 'yard had exited before' : 'killed'} ${afterMarkerMs} ms after the marker, ${point.orphans} orphaned git process(es); rerun exit ${point.rerun.code} in ${point.rerun.ms} ms, same state: ${point.sameState}, orphans ended: ${point.orphansGone}`,
  )
}

rmSync(scratch, {recursive: true, force: true})

const rows = points.map((point, index) => [
  String(index + 1),
  String(point.afterMarkerMs),
  point.exitedFirst ? 'exited' : String(point.orphans),
  String(point.rerun.code),
  String(point.rerun.ms),
  String(point.sameState),
  String(point.orphansGone),
])
const header = ['POINT', 'KILLED AT MS', 'ORPHANS', 'RERUN EXIT', 'RERUN MS', 'SAME STATE', 'ORPHANS ENDED']
const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)))
const line = (cells: string[]) =>
  cells
    .map((cell, column) => cell.padEnd(widths[column]))
    .join('  ')
    .trimEnd()
process.stdout.write(
  `cache add of ${megabytes} MB: clean run ${cloneMs} ms from marker to end\n${[header, ...rows].map(line).join('\n')}\n`,
)
const failed = points.filter((point) => point.rerun.code !== 0 || !point.sameState || !point.orphansGone)
if (failed.length > 0) {
  for (const point of failed) log(`at ${point.afterMarkerMs} ms: ${point.rerun.stderr.trim()}`)
  process.exitCode = 1
}
