/**
 * `yard sandbox create` to attached (the built CLI, bin/run.js; podman runtime) on a warm cache
 * against `git clone --no-local` of the same repository, in the same run: on the generated
 * repository (20,000 files in 400 directories, 2,000 commits; see generated-repo.ts) and, when
 * `BENCH_REPO` is set, on that repository. The cache is made before timing, so every timed create
 * finds it warm (one fetch, one lease); each run's pod is removed afterwards with `yard sandbox
 * rm`, untimed. yard's create also checks out the default branch and the branch worktree (two
 * checkouts to git's one) and starts a pod.
 *
 * Time to first instruction (docs/sandboxes.md, "Warm pool"): from `yard sandbox create` start
 * until `yard exec NAME/BRANCH -- git status` returns, cold in the same rounds as above, then warm
 * with a pool of 2 (`yard sandbox pool set`, filled before the first run) refilling in the
 * background between the creates as it would: before each create (untimed) the bench waits until
 * the pool is full again. The note says how many creates claimed a pod and how long the refill
 * lagged behind (a pool of 2 sustains one create per that lag plus a create's own time).
 *
 * Removal: `yard sandbox rm` of a clean sandbox (a cold create before each run, untimed), which
 * asks the pod once for unsaved work, stops and removes it and its lease. `yard exec` into a
 * sandbox against `podman exec` is bench/exec.ts.
 *
 * BENCH_SANDBOX_ONLY=warm runs the warm rows alone, =rm the removal rows alone.
 */
import {execFile} from 'node:child_process'
import {rm, writeFile} from 'node:fs/promises'
import {join, resolve} from 'node:path'
import {promisify} from 'node:util'

import {ensureBuilt, runJs, yardEnv} from './fixtures.js'
import {generatedRepo} from './generated-repo.js'
import {type BenchResult, type BenchRow, makeScratchDir, measureBench, reportBench} from './lib.js'
import {scratchDir, sweepPrefix, writeConf} from './stack-fixture.js'
import {anchorCli} from './startup-fixtures.js'

const run = promisify(execFile)
const log = (line: string) => process.stderr.write(`sandbox: ${line}\n`)
const PREFIX = 'yardbench-sbx'

const buildFailure = await ensureBuilt(log)
const state = await scratchDir('state')
const conf = await writeConf(state)
const env: NodeJS.ProcessEnv = {...yardEnv(state), XDG_DATA_HOME: await makeScratchDir('data')}
delete env.CONTAINERS_CONF

const main = await scratchDir('main')
await writeFile(join(main, 'yard.toml'), `[project]\nprefix = "${PREFIX}"\n`)
await run('git', ['init', '-q', '-b', 'main'], {cwd: main})
await sweepPrefix(conf, PREFIX)

async function removePod(): Promise<void> {
  const podmanEnv = {...process.env, CONTAINERS_CONF: conf}
  await run('podman', ['pod', 'rm', '--force', '--ignore', '--time', '0', `${PREFIX}-bench`], {env: podmanEnv}).catch(
    () => undefined,
  )
  await run('podman', ['volume', 'rm', '--force', `${PREFIX}-bench-work`], {env: podmanEnv}).catch(() => undefined)
}

/** `yard sandbox create bench` then `yard exec bench/wt/bench -- git status`; resolves whether the create was warm. */
async function firstInstruction(url: string): Promise<boolean> {
  const created = await run(process.execPath, [runJs, 'sandbox', 'create', 'bench', '--repo', url, '--json'], {
    cwd: main,
    env,
  })
  await run(process.execPath, [runJs, 'exec', 'bench/wt/bench', '--', 'git', 'status'], {cwd: main, env})
  return (JSON.parse(created.stdout) as {start: string}).start === 'warm'
}

async function removeSandbox(): Promise<void> {
  await run(process.execPath, [runJs, 'sandbox', 'rm', 'bench'], {cwd: main, env}).catch(() => undefined)
  // A run killed at its time-out may leave a pod `yard sandbox rm` cannot read: remove it by name.
  await removePod()
}

/** The warm rows of one repository: a pool of 2, filled, then timed creates that claim from it. */
async function warmRows(
  url: string,
  suffix: string,
): Promise<{rows: BenchRow[]; starts: boolean[]; refills: number[]}> {
  const starts: boolean[] = []
  const refills: number[] = []
  const label = `create → first instruction, warm pool of 2${suffix}`
  return {
    starts,
    refills,
    rows: [
      {
        label,
        argv: [process.execPath, runJs, 'sandbox', 'create', 'bench', '--repo', url],
        cwd: main,
        env,
        unavailable: buildFailure,
        call: async () => void starts.push(await firstInstruction(url)),
        // Untimed: the refill a claim started has made its pod, as it would between an agent's creates.
        async beforeEach() {
          await removeSandbox()
          refills.push(await untilPoolFull())
        },
        afterEach: removeSandbox,
      },
      {
        // The same two steps with nothing but their unavoidable parts: a minimal oclif CLI's start
        // and one `podman exec` each, then git status in a prepared checkout of a pool pod.
        label: `floor: 2 × (minimal oclif start + podman exec), git status${suffix}`,
        argv: ['podman', 'exec', '<a pool pod>', 'git', 'status'],
        extra: true,
        async call() {
          const {container, checkout} = await poolCheckout()
          await run(process.execPath, [await anchor(), '--version'], {env})
          await run('podman', ['exec', container, 'true'], {env: podmanEnv})
          await run(process.execPath, [await anchor(), '--version'], {env})
          await run('podman', ['exec', '--workdir', checkout, container, 'git', 'status'], {env: podmanEnv})
        },
      },
    ],
  }
}

let anchorPath: Promise<string> | undefined
const anchor = async () => (anchorPath ??= anchorCli())
const podmanEnv = {...process.env, CONTAINERS_CONF: conf}

/** A ready pool pod's workspace container and its prepared checkout (`/work/<slot>/.pool`). */
async function poolCheckout(): Promise<{container: string; checkout: string}> {
  const listed = JSON.parse(
    (await run(process.execPath, [runJs, 'sandbox', 'pool', 'list', '--json'], {cwd: main, env})).stdout,
  ) as Array<{pods: Array<{name: string; ready: boolean}>}>
  const pod = listed.flatMap((pool) => pool.pods).find((candidate) => candidate.ready)
  if (!pod) throw new Error('no ready pool pod for the floor row')
  const container = `${pod.name}-workspace`
  const found = await run('podman', ['exec', container, 'sh', '-c', 'ls -d /work/*/.pool'], {env: podmanEnv})
  return {container, checkout: found.stdout.split('\n', 1)[0].trim()}
}

/** Waits until every pool is full; resolves how long that took, in ms (the refill's lag behind a create). */
const median = (values: number[]) =>
  values.length === 0 ? 0 : [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

async function untilPoolFull(): Promise<number> {
  const started = Date.now()
  const deadline = started + 120_000
  while (Date.now() < deadline) {
    const listed = JSON.parse(
      (await run(process.execPath, [runJs, 'sandbox', 'pool', 'list', '--json'], {cwd: main, env})).stdout,
    ) as Array<{ready: number; size: number}>
    if (listed.every((pool) => pool.ready >= pool.size)) return Date.now() - started
    await new Promise((resolve) => setTimeout(resolve, 300))
  }

  log('the pool did not fill within 120 s')
  return Date.now() - started
}

/** `yard cache add` of `url` before anything is timed (a pool never clones). */
async function warmCache(url: string): Promise<void> {
  log(`warming the cache of ${url}`)
  await run(process.execPath, [runJs, 'cache', 'add', url], {cwd: main, env}).catch((error: Error) =>
    log(`cache add failed: ${error.message}`),
  )
}

/** The two rows for one repository url; `suffix` tells the repositories apart in labels. */
async function rowsFor(url: string, suffix: string): Promise<BenchRow[]> {
  await warmCache(url)
  const clone = join(await makeScratchDir('clone'), 'repo')
  const gitLabel = `git clone --no-local${suffix}`
  return [
    {
      label: gitLabel,
      argv: ['git', 'clone', '-q', '--no-local', url, clone],
      env,
      afterEach: async () => rm(clone, {recursive: true, force: true}),
      relativeTo: suffix === '' ? undefined : gitLabel,
    },
    {
      label: `yard sandbox create (warm cache)${suffix}`,
      argv: [process.execPath, runJs, 'sandbox', 'create', 'bench', '--repo', url],
      cwd: main,
      env,
      beforeEach: removeSandbox,
      afterEach: removeSandbox,
      unavailable: buildFailure,
      relativeTo: suffix === '' ? undefined : gitLabel,
    },
    {
      label: `create → first instruction, cold${suffix}`,
      argv: [process.execPath, runJs, 'sandbox', 'create', 'bench', '--repo', url],
      cwd: main,
      env,
      unavailable: buildFailure,
      async call() {
        await firstInstruction(url)
      },
      beforeEach: removeSandbox,
      afterEach: removeSandbox,
      extra: true,
    },
    rmRow(url, suffix),
  ]
}

/** `yard sandbox rm` of a sandbox made (cold, untimed) before each run, with nothing unsaved. */
function rmRow(url: string, suffix: string): BenchRow {
  return {
    label: `yard sandbox rm, clean sandbox${suffix}`,
    argv: [process.execPath, runJs, 'sandbox', 'rm', 'bench'],
    cwd: main,
    env,
    unavailable: buildFailure,
    async beforeEach() {
      await removeSandbox()
      await run(process.execPath, [runJs, 'sandbox', 'create', 'bench', '--repo', url], {cwd: main, env})
    },
    afterEach: removeSandbox,
    extra: true,
  }
}

const generated = await generatedRepo(
  {files: 20_000, dirs: 400, commits: 2000},
  `[project]\nprefix = "${PREFIX}"\n`,
  log,
)
const urls: Array<[string, string]> = [
  [generated, ''],
  ...(process.env.BENCH_REPO ? [[resolve(process.env.BENCH_REPO), ' (BENCH_REPO)'] as [string, string]] : []),
]
// BENCH_SANDBOX_ONLY=warm: the warm rows alone (the cold rounds take most of the bench's time);
// =rm: the removal rows alone.
const only = process.env.BENCH_SANDBOX_ONLY
if (only !== undefined && only !== 'warm' && only !== 'rm') {
  process.stderr.write(`sandbox: BENCH_SANDBOX_ONLY must be warm or rm, not ${JSON.stringify(only)}\n`)
  process.exit(2)
}

const rows: BenchRow[] = []
for (const [url, suffix] of urls) {
  if (only === undefined) rows.push(...(await rowsFor(url, suffix)))
  else await warmCache(url)
  if (only === 'rm') rows.push(rmRow(url, suffix))
}

try {
  const result: BenchResult =
    only === 'warm'
      ? {name: 'sandbox', baseline: null, rows: []}
      : await measureBench({name: 'sandbox', baseline: only === 'rm' ? rows[0].label : 'git clone --no-local', rows})
  // Warm after cold: a pool of the same repository would have the cold rows claim.
  for (const [url, suffix] of only === 'rm' ? [] : urls) {
    const pool = JSON.parse(
      (
        await run(process.execPath, [runJs, 'sandbox', 'pool', 'set', '--repo', url, '--size', '2', '--json'], {
          cwd: main,
          env,
        })
      ).stdout,
    ) as {id: string}
    await untilPoolFull()
    const warm = await warmRows(url, suffix)
    const measured = await measureBench({name: 'sandbox', baseline: warm.rows[0].label, rows: warm.rows})
    for (const row of measured.rows)
      result.rows.push({
        ...row,
        ratio: null,
        note: `${warm.starts.filter(Boolean).length} of ${warm.starts.length} creates claimed a pool pod (warm-ups included); the refill caught up ${median(warm.refills.slice(1))} ms (median) after the previous create's rm`,
      })
    await run(process.execPath, [runJs, 'sandbox', 'pool', 'rm', pool.id], {cwd: main, env}).catch(() => undefined)
  }

  await reportBench(result)
} finally {
  await removePod()
  await sweepPrefix(conf, PREFIX)
}
