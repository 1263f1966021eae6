/**
 * Start-up: wall-clock time from spawn to exit of the shipped CLI (bin/run.js with dist/ and
 * oclif.manifest.json) against a bare `node -e 0` in the same run. Extra rows show the same
 * start-up without the manifest, and through the tsx dev path, to show what the manifest saves.
 */
import {join} from 'node:path'

import {devJs, ensureBuilt, runJs, scratchGitRepo, treeWithoutManifest, yardEnv} from './fixtures.js'
import {BenchRow, makeScratchDir, measureBench, reportBench} from './lib.js'

const log = (line: string) => process.stderr.write(`startup: ${line}\n`)
const node = process.execPath

const buildFailure = await ensureBuilt(log)
const repo = await scratchGitRepo()
const env = yardEnv(await makeScratchDir('state'))
const bare = await treeWithoutManifest()
const yard = (label: string, script: string, args: string[]): BenchRow => ({label, argv: [node, script, ...args], cwd: repo, env})
const built = (row: BenchRow): BenchRow => ({...row, unavailable: buildFailure})

const result = await measureBench({
  name: 'startup',
  baseline: 'node -e 0',
  rows: [
    {label: 'node -e 0', argv: [node, '-e', '0'], cwd: repo, env},
    built(yard('yard --version', runJs, ['--version'])),
    built(yard('yard help', runJs, ['help'])),
    built(yard('yard ports --json', runJs, ['ports', '--json'])),
    {
      ...built(yard('yard --version, no manifest', join(bare, 'bin', 'run.js'), ['--version'])),
      extra: true,
      note: 'imports every command to list them',
    },
    {
      // `node bin/dev.js`, not the shebang's `--import tsx`: oclif registers tsx itself in
      // development. Not gated on the build: dev.js reads src/ and ignores the manifest.
      ...yard('dev.js --version', devJs, ['--version']),
      extra: true,
      note: 'tsx dev path',
    },
  ],
})
await reportBench(result)
