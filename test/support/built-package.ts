/**
 * The built CLI package for plugin tests (DESIGN.md §7): the sources, bin/ and examples/ copied
 * to a temporary directory (its node_modules a link to the project's), then `npm run build` run
 * there — the project's own build, examples included — once per test run. Tests drive
 * `bin/run.js` of that copy in child processes, as a user runs the installed CLI, with their own
 * XDG_DATA_HOME (installed and linked plugins) and YARD_STATE_DIR. The working tree's dist/ is
 * never touched.
 */
import {execFile, spawnSync} from 'node:child_process'
import {cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync} from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {promisify} from 'node:util'

import {projectRoot} from './oclif-config.js'

const run = promisify(execFile)

let building: Promise<string> | undefined

/** The root of the built copy (holding bin/run.js and examples/procfile-stack/dist/). */
export async function builtPackage(): Promise<string> {
  building ??= build()
  return building
}

async function build(): Promise<string> {
  const root = path.join(realpathSync(mkdtempSync(path.join(os.tmpdir(), 'yard-built-'))), 'yard')
  process.once('exit', () => rmSync(path.dirname(root), {recursive: true, force: true}))
  mkdirSync(root)
  for (const entry of ['package.json', 'tsconfig.json', 'src', 'bin', 'scripts'])
    cpSync(path.join(projectRoot, entry), path.join(root, entry), {recursive: true})
  const example = path.join('examples', 'procfile-stack')
  for (const entry of ['package.json', '.npmrc', 'tsconfig.json', 'src'])
    cpSync(path.join(projectRoot, example, entry), path.join(root, example, entry), {recursive: true})
  symlinkSync(path.join(projectRoot, 'node_modules'), path.join(root, 'node_modules'))
  try {
    await run('npm', ['run', 'build'], {cwd: root, env: productionEnv(), maxBuffer: 64 * 1024 * 1024})
  } catch (error) {
    const {stdout, stderr} = error as {stdout?: string; stderr?: string}
    throw new Error(`npm run build failed in ${root}:\n${stdout ?? ''}\n${stderr ?? ''}`, {cause: error})
  }

  return root
}

/** process.env without the test mode that makes oclif load sources (DESIGN.md §9). */
function productionEnv(): NodeJS.ProcessEnv {
  const env = {...process.env}
  delete env.NODE_ENV
  return env
}

export interface CliRun {
  status: number
  stdout: string
  stderr: string
  json?: unknown
}

/**
 * Runs `yard <args>` from the built copy in a child process. `env` is merged over process.env
 * (undefined deletes a variable); `input` is written to its stdin (no terminal).
 */
export function builtYard(
  root: string,
  args: string[],
  options: {cwd?: string; env?: Record<string, string | undefined>; input?: string; timeoutMs?: number} = {},
): CliRun {
  const env = productionEnv()
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[key]
    else env[key] = value
  }

  const child = spawnSync(process.execPath, [path.join(root, 'bin', 'run.js'), ...args], {
    cwd: options.cwd ?? root,
    env,
    input: options.input ?? '',
    encoding: 'utf8',
    timeout: options.timeoutMs ?? 60_000,
  })
  let json: unknown
  try {
    json = JSON.parse(child.stdout)
  } catch {
    json = undefined
  }

  return {status: child.status ?? -1, stdout: child.stdout, stderr: child.stderr, json}
}
