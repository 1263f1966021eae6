/**
 * Start-up: wall-clock time from spawn to exit of the shipped CLI (bin/run.js with dist/ and
 * oclif.manifest.json) against a bare `node -e 0` and against a minimal oclif CLI of the same
 * major (one command, a manifest), all under this Node in the same run; and the CPU time of
 * `yard --version` against yard as it was on Node 20, under Node 20. Extra rows show what the
 * compile cache, the bundle and the manifest save, and the tsx dev path.
 */
import {execFile} from 'node:child_process'
import {copyFile, mkdir, symlink} from 'node:fs/promises'
import {join} from 'node:path'
import {promisify} from 'node:util'

import {devJs, ensureBuilt, repoRoot, runJs, scratchGitRepo, treeWithoutManifest, yardEnv} from './fixtures.js'
import {type BenchRow, makeScratchDir, measureBench, reportBench} from './lib.js'
import {anchorCli, NODE20_REF_DEFAULT, NODE20_VERSION, node20Yard} from './startup-fixtures.js'

const log = (line: string) => process.stderr.write(`startup: ${line}\n`)
const node = process.execPath
const run = promisify(execFile)

const buildFailure = await ensureBuilt(log)
const repo = await scratchGitRepo()
const env = yardEnv(await makeScratchDir('state'))
// The compile cache of these runs: warm after the warm-up runs, as for someone using yard.
env.XDG_CACHE_HOME = await makeScratchDir('xdg-cache')
const noCache = {...env, NODE_DISABLE_COMPILE_CACHE: '1'}
const anchorCache = {...env, NODE_COMPILE_CACHE: await makeScratchDir('anchor-cache')}
const bare = await treeWithoutManifest()
const anchor = await anchorCli()
const old = await node20Yard(log)

/** The same package with tsc's output instead of the bundle (the manifest is the same). */
async function unbundledTree(): Promise<string> {
  const root = await makeScratchDir('unbundled')
  await mkdir(join(root, 'bin'))
  for (const file of ['package.json', 'bin/run.js', 'oclif.manifest.json'])
    await copyFile(join(repoRoot, file), join(root, file))
  await symlink(join(repoRoot, 'node_modules'), join(root, 'node_modules'), 'dir')
  await run(join(repoRoot, 'node_modules', '.bin', 'tsc'), [
    '-p',
    join(repoRoot, 'tsconfig.json'),
    '--outDir',
    join(root, 'dist'),
    '--declaration',
    'false',
    '--sourceMap',
    'false',
  ])
  return root
}

const unbundled = buildFailure ? undefined : await unbundledTree()

const yard = (label: string, script: string, args: string[], more: Partial<BenchRow> = {}): BenchRow => ({
  label,
  argv: [node, script, ...args],
  cwd: repo,
  env,
  unavailable: buildFailure,
  ...more,
})
const anchorRow = (label: string, args: string[], more: Partial<BenchRow> = {}): BenchRow => ({
  label,
  argv: [node, anchor, ...args],
  cwd: repo,
  env: noCache,
  ...more,
})
const oldRow = (label: string, args: string[], more: Partial<BenchRow> = {}): BenchRow =>
  'unavailable' in old
    ? {label, argv: [node], unavailable: old.unavailable, ...more}
    : {label, argv: [old.node, old.runJs, ...args], cwd: repo, env, ...more}

const result = await measureBench({
  name: 'startup',
  baseline: 'node -e 0',
  rows: [
    {label: 'node -e 0', argv: [node, '-e', '0'], cwd: repo, env},
    anchorRow('minimal oclif --version', ['--version'], {note: 'one command, manifest, no plugins'}),
    anchorRow('minimal oclif hello --json', ['hello', '--json']),
    yard('yard --version', runJs, ['--version'], {relativeTo: 'minimal oclif --version', note: 'target ≤ 1.2'}),
    yard('yard ports --json', runJs, ['ports', '--json'], {
      relativeTo: 'minimal oclif hello --json',
      note: 'target ≤ 2',
    }),
    yard('yard help', runJs, ['help']),
    oldRow(`yard --version, CPU, Node 20 (before)`, ['--version'], {
      cpu: true,
      note: `yard at ${(process.env.BENCH_NODE20_REF || NODE20_REF_DEFAULT).slice(0, 12)} on Node ${NODE20_VERSION}`,
    }),
    yard('yard --version, CPU', runJs, ['--version'], {
      cpu: true,
      relativeTo: 'yard --version, CPU, Node 20 (before)',
      note: 'target ≤ 0.75',
    }),
    yard('yard --version, no compile cache', runJs, ['--version'], {env: noCache, extra: true}),
    yard('yard ports --json, no compile cache', runJs, ['ports', '--json'], {env: noCache, extra: true}),
    anchorRow('minimal oclif --version, compile cache', ['--version'], {
      env: anchorCache,
      extra: true,
      note: 'NODE_COMPILE_CACHE, as yard has it',
    }),
    anchorRow('minimal oclif --version, CPU', ['--version'], {cpu: true, extra: true}),
    yard('yard --version, CPU, again', runJs, ['--version'], {
      cpu: true,
      extra: true,
      relativeTo: 'minimal oclif --version, CPU',
    }),
    anchorRow('minimal oclif hello --json, CPU', ['hello', '--json'], {cpu: true, extra: true}),
    yard('yard ports --json, CPU', runJs, ['ports', '--json'], {
      cpu: true,
      extra: true,
      relativeTo: 'minimal oclif hello --json, CPU',
    }),
    unbundled
      ? yard('yard --version, unbundled', join(unbundled, 'bin', 'run.js'), ['--version'], {
          extra: true,
          note: "tsc's files instead of the bundle",
        })
      : yard('yard --version, unbundled', runJs, [], {extra: true}),
    unbundled
      ? yard('yard ports --json, unbundled', join(unbundled, 'bin', 'run.js'), ['ports', '--json'], {extra: true})
      : yard('yard ports --json, unbundled', runJs, [], {extra: true}),
    yard('yard --version, no manifest', join(bare, 'bin', 'run.js'), ['--version'], {
      extra: true,
      note: 'imports every command to list them',
    }),
    // `node bin/dev.js`, not the shebang's `--import tsx`: oclif registers tsx itself in
    // development. Not gated on the build: dev.js reads src/ and ignores the manifest.
    {...yard('dev.js --version', devJs, ['--version']), unavailable: undefined, extra: true, note: 'tsx dev path'},
  ],
})
await reportBench(result)
