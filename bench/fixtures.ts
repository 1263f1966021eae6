/**
 * The yard CLI under test and the places benches run it in: the built CLI (rebuilt when stale),
 * a copy of the package without oclif.manifest.json, scratch git repositories and a clean
 * environment. Everything made here lives in scratch dirs removed at exit (lib.ts).
 */
import {execFile, spawn} from 'node:child_process'
import {copyFile, mkdir, readdir, stat, symlink, writeFile} from 'node:fs/promises'
import {join, relative} from 'node:path'
import {fileURLToPath} from 'node:url'
import {promisify} from 'node:util'

import {makeScratchDir} from './lib.js'

export const repoRoot = fileURLToPath(new URL('..', import.meta.url))
export const runJs = join(repoRoot, 'bin', 'run.js')
export const devJs = join(repoRoot, 'bin', 'dev.js')

const manifestPath = join(repoRoot, 'oclif.manifest.json')
/** What `npm run build` reads: a change to any of these makes dist/ and the manifest stale. */
const buildInputs = ['src', 'package.json', 'tsconfig.json']

/**
 * Makes sure bin/run.js runs the current sources: runs `npm run build` (output on stderr) when
 * dist/ or oclif.manifest.json is missing or older than a build input, saying why.
 * @returns undefined when the built CLI is current, else why it could not be built.
 */
export async function ensureBuilt(log: (line: string) => void): Promise<string | undefined> {
  const reason = await whyStale()
  if (reason === undefined) return undefined
  log(`${reason}: running npm run build`)
  const code = await new Promise<number | null>((resolve) => {
    const build = spawn('npm', ['run', 'build'], {cwd: repoRoot, stdio: ['ignore', 2, 2]})
    build.on('error', () => resolve(null))
    build.on('close', (exitCode) => resolve(exitCode))
  })
  if (code === 0) return undefined
  return `npm run build failed (${code === null ? 'could not start npm' : `exit ${code}`}); see its output above`
}

async function whyStale(): Promise<string | undefined> {
  const built = await mtimeMs(manifestPath)
  if ((await mtimeMs(join(repoRoot, 'dist'))) === undefined) return 'dist/ is missing'
  if (built === undefined) return 'oclif.manifest.json is missing'
  for (const input of buildInputs) {
    for (const file of await filesUnder(join(repoRoot, input))) {
      if ((await mtimeMs(file))! > built) return `${relative(repoRoot, file)} is newer than oclif.manifest.json`
    }
  }

  return undefined
}

async function mtimeMs(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).mtimeMs
  } catch {
    return undefined
  }
}

/** `path` itself when it is a file, else every file below it. */
async function filesUnder(path: string): Promise<string[]> {
  const info = await stat(path).catch(() => undefined)
  if (!info) return []
  if (!info.isDirectory()) return [path]
  const entries = await readdir(path, {recursive: true, withFileTypes: true})
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name))
}

/**
 * A package root like this checkout's but without oclif.manifest.json: package.json and
 * bin/run.js copied (so oclif takes this directory as the root), dist/ and node_modules/ linked.
 * Its bin/run.js must then import every command at start-up to list them — what the manifest
 * spares the shipped CLI.
 * @returns the directory.
 */
export async function treeWithoutManifest(): Promise<string> {
  const root = await makeScratchDir('tree')
  await mkdir(join(root, 'bin'))
  for (const file of ['package.json', 'bin/run.js']) await copyFile(join(repoRoot, file), join(root, file))
  for (const dir of ['dist', 'node_modules']) await symlink(join(repoRoot, dir), join(root, dir), 'dir')
  return root
}

const run = promisify(execFile)

/**
 * A new git repository on `main` with one commit holding a small yard.toml (prefix `bench`, two
 * `[ports]` keys), as a main checkout for commands that need one.
 */
export async function scratchGitRepo(): Promise<string> {
  const dir = await makeScratchDir('repo')
  const git = async (...args: string[]) =>
    run(
      'git',
      ['-c', 'user.name=yard bench', '-c', 'user.email=bench@yard.invalid', '-c', 'commit.gpgsign=false', ...args],
      {
        cwd: dir,
        env: {...process.env, LC_ALL: 'C', GIT_TERMINAL_PROMPT: '0'},
      },
    )
  await git('init', '-q', '-b', 'main')
  await writeFile(join(dir, 'yard.toml'), '[project]\nprefix = "bench"\n\n[ports]\nAPP_PORT = 3000\nDB_PORT = 5432\n')
  await git('add', 'yard.toml')
  await git('commit', '-q', '-m', 'bench fixture')
  return dir
}

/**
 * This process's environment without what would change which checkout yard targets or how it
 * loads (YARD_*, WT_OFFSET, NODE_ENV, DEBUG), plus `YARD_STATE_DIR`. NODE_ENV matters most: with
 * `development` or `test`, bin/run.js would look for TypeScript sources like bin/dev.js does.
 */
export function yardEnv(stateDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith('YARD_') || ['DEBUG', 'NODE_ENV', 'WT_OFFSET'].includes(key)) continue
    env[key] = value
  }

  env.YARD_STATE_DIR = stateDir
  return env
}
