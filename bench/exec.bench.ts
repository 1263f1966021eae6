/**
 * `yard exec` (the built CLI, bin/run.js) against `podman exec` of the same command in the same
 * container and directory, in the same run: into a running box (compose-stack, the bench's
 * busybox image) and into a sandbox on the podman runtime. Box and sandbox are made once before
 * timing (`yard box up`, `yard sandbox create`) and removed at the end. Target: ≤ 1.5× each.
 */
import {execFile} from 'node:child_process'
import {mkdir, writeFile} from 'node:fs/promises'
import {join} from 'node:path'
import {promisify} from 'node:util'

import {ensureBuilt, runJs, yardEnv} from './fixtures.js'
import {type BenchRow, makeScratchDir, measureBench, reportBench} from './lib.js'
import {BENCH_IMAGE, ensureBenchImage, scratchDir, sweepPrefix, writeConf} from './stack-fixture.js'

const run = promisify(execFile)
const log = (line: string) => process.stderr.write(`exec: ${line}\n`)
const PREFIX = 'yardbench-exec'
const COMMAND = ['sh', '-c', 'exit 0']

const buildFailure = await ensureBuilt(log)
const state = await scratchDir('state')
const conf = await writeConf(state)
// The sandbox's cache goes to a scratch root, not the user's.
const env: NodeJS.ProcessEnv = {
  ...yardEnv(state),
  XDG_DATA_HOME: await makeScratchDir('data'),
  YARD_CACHE_ROOT: await makeScratchDir('cache'),
}
delete env.CONTAINERS_CONF
const podmanEnv = {...process.env, CONTAINERS_CONF: conf}
await ensureBenchImage(conf)
await sweepPrefix(conf, PREFIX)

const main = join(await scratchDir('main'), 'app')
await mkdir(main)
const gitEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: 'b',
  GIT_AUTHOR_EMAIL: 'b@yard.invalid',
  GIT_COMMITTER_NAME: 'b',
  GIT_COMMITTER_EMAIL: 'b@yard.invalid',
}
await writeFile(join(main, 'yard.toml'), `[project]\nprefix = "${PREFIX}"\n\n[box]\nimage = "${BENCH_IMAGE}"\n`)
for (const args of [
  ['init', '-q', '-b', 'main'],
  ['add', '-A'],
  ['commit', '-q', '-m', 'bench'],
])
  await run('git', args, {cwd: main, env: gitEnv})
const feat = join(`${main}-worktrees`, 'feat')
await run('git', ['worktree', 'add', '-q', '-b', 'wt/feat', feat], {cwd: main})

const rows: BenchRow[] = []
const failed = (error: Error) => `${buildFailure ?? ''}${error.message.split('\n').slice(0, 3).join(' / ')}`
log('box up')
const boxUp = await run(process.execPath, [runJs, 'box', 'up', '--worktree', 'feat'], {cwd: main, env}).then(
  () => undefined,
  failed,
)
const box = `${PREFIX}-feat-box`
rows.push(
  {
    label: 'podman exec (box)',
    argv: ['podman', 'exec', '--interactive', '--workdir', feat, box, ...COMMAND],
    env: podmanEnv,
    unavailable: boxUp,
  },
  {
    label: 'yard exec feat (box)',
    argv: [process.execPath, runJs, 'exec', 'feat', '--', ...COMMAND],
    cwd: main,
    env,
    unavailable: buildFailure ?? boxUp,
    note: 'target ≤ 1.5',
  },
)

// The sandbox's repository: a one-commit upstream; its cache is made by the create.
const upstream = join(await scratchDir('upstream'), 'up')
await mkdir(upstream)
await writeFile(join(upstream, 'README'), 'bench\n')
for (const args of [
  ['init', '-q', '-b', 'main'],
  ['add', '-A'],
  ['commit', '-q', '-m', 'bench'],
])
  await run('git', args, {cwd: upstream, env: gitEnv})
log("sandbox create (builds yard's default image on first use)")
const created = await run(
  process.execPath,
  [runJs, 'sandbox', 'create', 'sbx', '--repo', upstream, '--branch', 'work'],
  {cwd: main, env, timeout: 600_000},
).then(() => undefined, failed)
const sandboxLabel = 'podman exec (sandbox)'
rows.push(
  {
    label: sandboxLabel,
    argv: ['podman', 'exec', '--interactive', '--workdir', '/work/up/work', `${PREFIX}-sbx-workspace`, ...COMMAND],
    env: podmanEnv,
    unavailable: created,
  },
  {
    label: 'yard exec sbx/work (sandbox)',
    argv: [process.execPath, runJs, 'exec', 'sbx/work', '--', ...COMMAND],
    cwd: main,
    env,
    unavailable: buildFailure ?? created,
    relativeTo: sandboxLabel,
    note: 'target ≤ 1.5',
  },
)

try {
  await reportBench(await measureBench({name: 'exec', baseline: 'podman exec (box)', rows}))
} finally {
  await run(process.execPath, [runJs, 'sandbox', 'rm', '--force', 'sbx'], {cwd: main, env}).catch(() => undefined)
  await sweepPrefix(conf, PREFIX)
}
