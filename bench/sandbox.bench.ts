/**
 * `yard sandbox create` to attached (the built CLI, bin/run.js; podman runtime) on a warm cache
 * against `git clone --no-local` of the same repository, in the same run: on the generated
 * repository (20,000 files in 400 directories, 2,000 commits; see generated-repo.ts) and, when
 * `BENCH_REPO` is set, on that repository. The cache is made before timing, so every timed create
 * finds it warm (one fetch, one lease); each run's pod is removed afterwards with `yard sandbox
 * rm`, untimed. yard's create also checks out the default branch and the branch worktree (two
 * checkouts to git's one) and starts a pod.
 */
import {execFile} from 'node:child_process'
import {rm, writeFile} from 'node:fs/promises'
import {join, resolve} from 'node:path'
import {promisify} from 'node:util'

import {ensureBuilt, runJs, yardEnv} from './fixtures.js'
import {generatedRepo} from './generated-repo.js'
import {BenchRow, makeScratchDir, measureBench, reportBench} from './lib.js'
import {scratchDir, sweepPrefix, writeConf} from './stack-fixture.js'

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
  await run('podman', ['pod', 'rm', '--force', '--ignore', '--time', '0', `${PREFIX}-bench`], {env: podmanEnv}).catch(() => undefined)
  await run('podman', ['volume', 'rm', '--force', `${PREFIX}-bench-work`], {env: podmanEnv}).catch(() => undefined)
}

/** The two rows for one repository url; `suffix` tells the repositories apart in labels. */
async function rowsFor(url: string, suffix: string): Promise<BenchRow[]> {
  log(`warming the cache of ${url}`)
  await run(process.execPath, [runJs, 'cache', 'add', url], {cwd: main, env}).catch((error: Error) => log(`cache add failed: ${error.message}`))
  const clone = join(await makeScratchDir('clone'), 'repo')
  const gitLabel = `git clone --no-local${suffix}`
  const removeSandbox = async () => {
    await run(process.execPath, [runJs, 'sandbox', 'rm', 'bench'], {cwd: main, env}).catch(() => undefined)
    // A run killed at its time-out may leave a pod `yard sandbox rm` cannot read: remove it by name.
    await removePod()
  }
  return [
    {label: gitLabel, argv: ['git', 'clone', '-q', '--no-local', url, clone], env, afterEach: () => rm(clone, {recursive: true, force: true}), relativeTo: suffix === '' ? undefined : gitLabel},
    {
      label: `yard sandbox create (warm cache)${suffix}`,
      argv: [process.execPath, runJs, 'sandbox', 'create', 'bench', '--repo', url],
      cwd: main, env, beforeEach: removeSandbox, afterEach: removeSandbox, unavailable: buildFailure, relativeTo: suffix === '' ? undefined : gitLabel,
    },
  ]
}

const generated = await generatedRepo({files: 20_000, dirs: 400, commits: 2_000}, `[project]\nprefix = "${PREFIX}"\n`, log)
const rows = await rowsFor(generated, '')
if (process.env.BENCH_REPO) rows.push(...(await rowsFor(resolve(process.env.BENCH_REPO), ' (BENCH_REPO)')))

try {
  await reportBench(await measureBench({name: 'sandbox', baseline: 'git clone --no-local', rows}))
} finally {
  await removePod()
  await sweepPrefix(conf, PREFIX)
}
