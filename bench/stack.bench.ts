/**
 * `yard up` + `yard down` of a 2-service stack against the compose provider's own `up -d` /
 * `down` with the same compose file, in one run (issue target: ≤ 1.2×). Each timed run brings
 * the stack up and takes it down again; networks podman-compose leaves behind are removed
 * between runs, untimed.
 */
import {execFile} from 'node:child_process'
import {writeFile} from 'node:fs/promises'
import {join} from 'node:path'
import {promisify} from 'node:util'

import {ensureBuilt, runJs, yardEnv} from './fixtures.js'
import {measureBench, reportBench} from './lib.js'
import {COMPOSE_YAML, ensureBenchImage, scratchDir, sweepPrefix, writeConf} from './stack-fixture.js'

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

const node = process.execPath
const compose = 'podman-compose -p yardbench-raw -f compose.yaml'
try {
  const result = await measureBench({
    name: 'stack',
    baseline: 'podman-compose up -d + down',
    rows: [
      {label: 'podman-compose up -d + down', argv: ['bash', '-c', `${compose} up -d >/dev/null && ${compose} down >/dev/null`], cwd: repo, env: providerEnv, afterEach: cleanup},
      {
        label: 'yard up + yard down',
        argv: ['bash', '-c', `"$0" "$1" up >/dev/null && "$0" "$1" down >/dev/null`, node, runJs],
        cwd: repo,
        env,
        afterEach: cleanup,
        unavailable: buildFailure,
      },
    ],
  })
  await reportBench(result)
} finally {
  await cleanup()
}
