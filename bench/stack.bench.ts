/**
 * `yard up` + `yard down` of a 2-service stack against the compose provider's own `up -d` /
 * `down` with the same compose file, in one run (target: yard adds ≤ 600 ms). Each timed run
 * brings the stack up and takes it down again; networks podman-compose leaves behind are removed
 * between runs, untimed. Then `yard up --dry-run` of a 10-service file with includes and extends
 * in a worktree against `yard up --dry-run` of a box-only checkout: the same CLI start, so the
 * difference is resolving, isolating and rendering (target: ≤ 50 ms).
 */
import {execFile} from 'node:child_process'
import {writeFile} from 'node:fs/promises'
import {join} from 'node:path'
import {promisify} from 'node:util'

import {ensureBuilt, runJs, yardEnv} from './fixtures.js'
import {measureBench, reportBench} from './lib.js'
import {COMPOSE_YAML, ensureBenchImage, scratchDir, sweepPrefix, TEN_SERVICES, writeConf} from './stack-fixture.js'

const run = promisify(execFile)
const log = (line: string) => process.stderr.write(`stack: ${line}\n`)
const buildFailure = await ensureBuilt(log)
const state = await scratchDir('state')
const conf = await writeConf(state)
await ensureBenchImage(conf)

const repo = await scratchDir('repo')
await writeFile(join(repo, 'yard.toml'), '[project]\nprefix = "yardbench-yard"\n\n[ports]\nWEB_PORT = 39000\n')
await writeFile(join(repo, 'compose.yaml'), COMPOSE_YAML)
await run('git', ['init', '-q', '-b', 'main'], {cwd: repo})
const env = yardEnv(state)
delete env.CONTAINERS_CONF
const providerEnv = {...env, CONTAINERS_CONF: conf, WEB_PORT: '39000'}
const cleanup = async () => {
  await sweepPrefix(conf, 'yardbench-')
}

await cleanup()

// The 10-service project (nothing starts: images need not exist) and a box-only one.
const ten = await scratchDir('ten')
for (const [name, content] of Object.entries(TEN_SERVICES)) {
  await run('mkdir', ['-p', join(ten, name, '..')])
  await writeFile(join(ten, name), content)
}

await run('git', ['init', '-q', '-b', 'main'], {cwd: ten})
await run(
  'git',
  ['-c', 'user.name=bench', '-c', 'user.email=bench@example.com', 'commit', '-q', '--allow-empty', '-m', 'init'],
  {cwd: ten},
)
await run('git', ['worktree', 'add', '-q', '-b', 'wt/feat', `${ten}-worktrees/feat`], {cwd: ten})
const boxOnly = await scratchDir('box-only')
await writeFile(join(boxOnly, 'yard.toml'), '[project]\nprefix = "yardbench-box"\n')
await run('git', ['init', '-q', '-b', 'main'], {cwd: boxOnly})
await run(
  'git',
  ['-c', 'user.name=bench', '-c', 'user.email=bench@example.com', 'commit', '-q', '--allow-empty', '-m', 'init'],
  {cwd: boxOnly},
)
await run('git', ['worktree', 'add', '-q', '-b', 'wt/feat', `${boxOnly}-worktrees/feat`], {cwd: boxOnly})

const node = process.execPath
const compose = 'podman-compose -p yardbench-raw -f compose.yaml'
try {
  const result = await measureBench({
    name: 'stack',
    baseline: 'podman-compose up -d + down',
    rows: [
      {
        label: 'podman-compose up -d + down',
        argv: ['bash', '-c', `${compose} up -d >/dev/null && ${compose} down >/dev/null`],
        cwd: repo,
        env: providerEnv,
        afterEach: cleanup,
      },
      {
        label: 'yard up + yard down',
        argv: ['bash', '-c', `"$0" "$1" up >/dev/null && "$0" "$1" down >/dev/null`, node, runJs],
        cwd: repo,
        env,
        afterEach: cleanup,
        unavailable: buildFailure,
      },
      {
        label: 'yard up --dry-run, box-only worktree',
        argv: [node, runJs, 'up', '--dry-run', '--worktree', 'feat'],
        cwd: boxOnly,
        env,
        extra: true,
        unavailable: buildFailure,
      },
      {
        label: 'yard up --dry-run, 10 services (include, extends), worktree',
        argv: [node, runJs, 'up', '--dry-run', '--worktree', 'feat'],
        cwd: ten,
        env,
        extra: true,
        relativeTo: 'yard up --dry-run, box-only worktree',
        note: 'the difference to the box-only row is resolving, isolating and rendering',
        unavailable: buildFailure,
      },
    ],
  })
  await reportBench(result)
} finally {
  await cleanup()
}
