/**
 * `yard ps --json` while 10 worktree stacks run, against one engine `podman ps` call for the same
 * project (the baseline). An extra row asks yard for all 10 in turn.
 */
import {execFile} from 'node:child_process'
import {writeFile} from 'node:fs/promises'
import {join} from 'node:path'
import {promisify} from 'node:util'

import {ensureBuilt, runJs, yardEnv} from './fixtures.js'
import {measureBench, reportBench} from './lib.js'
import {COMPOSE_YAML, ensureBenchImage, scratchDir, sweepPrefix, writeConf} from './stack-fixture.js'

const run = promisify(execFile)
const log = (line: string) => process.stderr.write(`stack-ps: ${line}\n`)
const buildFailure = await ensureBuilt(log)
const state = await scratchDir('state')
const conf = await writeConf(state)
await ensureBenchImage(conf)

const repo = join(await scratchDir('repo'), 'app')
const names = Array.from({length: 10}, (_, index) => `w${index}`)
await run('mkdir', ['-p', repo])
await writeFile(join(repo, 'yard.toml'), '[project]\nprefix = "yardbench-ps"\n\n[ports]\nWEB_PORT = 39100\n')
// Pins keep the 10 worktrees on distinct offsets (hash offsets of 10 names often collide).
await writeFile(
  join(repo, 'yard.local.toml'),
  `[worktree-offsets]\n${names.map((name, index) => `${name} = ${index + 1}`).join('\n')}\n`,
)
await writeFile(join(repo, 'compose.yaml'), COMPOSE_YAML)
const git = async (...args: string[]) =>
  run('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@yard.invalid', ...args], {cwd: repo})
await git('init', '-q', '-b', 'main')
await git('add', 'yard.toml', 'compose.yaml')
await git('commit', '-q', '-m', 'bench')
for (const name of names) await git('worktree', 'add', '-q', '-b', `wt/${name}`, join(`${repo}-worktrees`, name))

const env = yardEnv(state)
delete env.CONTAINERS_CONF
const node = process.execPath
await sweepPrefix(conf, 'yardbench-ps')
try {
  if (buildFailure === undefined) {
    for (let start = 0; start < names.length; start += 5) {
      await Promise.all(
        names
          .slice(start, start + 5)
          .map(async (name) => run(node, [runJs, 'up', '--worktree', name], {cwd: repo, env})),
      )
    }
  }

  const result = await measureBench({
    name: 'stack-ps',
    baseline: 'podman ps (one call)',
    rows: [
      {
        label: 'podman ps (one call)',
        argv: [
          'podman',
          'ps',
          '--all',
          '--format',
          'json',
          '--filter',
          'label=com.docker.compose.project=yardbench-ps-w0',
        ],
        cwd: repo,
        env: {...env, CONTAINERS_CONF: conf},
      },
      {
        label: 'yard ps --json',
        argv: [node, runJs, 'ps', '--json', '--worktree', 'w0'],
        cwd: repo,
        env,
        unavailable: buildFailure,
        note: '10 worktree stacks running',
      },
      {
        label: 'yard ps --json × 10 worktrees',
        argv: [
          'bash',
          '-c',
          'for w in w0 w1 w2 w3 w4 w5 w6 w7 w8 w9; do "$0" "$1" ps --json --worktree "$w" >/dev/null || exit 1; done',
          node,
          runJs,
        ],
        cwd: repo,
        env,
        extra: true,
        unavailable: buildFailure,
      },
    ],
  })
  await reportBench(result)
} finally {
  await sweepPrefix(conf, 'yardbench-ps')
}
