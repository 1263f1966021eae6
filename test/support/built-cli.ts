/**
 * The working tree's built CLI (`bin/run.js` and dist/, built by `npm run build:cli` when a start-up
 * path module is missing) in a child process, with every module it resolves recorded: a test
 * tells whether a command ran through oclif or one of the start-up paths without it (src/cli/).
 */
import {execFileSync, spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import os from 'node:os'
import path from 'node:path'

import {projectRoot} from './oclif-config.js'

const runJs = path.join(projectRoot, 'bin', 'run.js')
const recordImports = path.join(projectRoot, 'test', 'support', 'record-imports.mjs')

export interface BuiltRun {
  status: number
  stdout: string
  stderr: string
  /** Whether @oclif/core was loaded. */
  oclif: boolean
}

/** `bin/run.js ARGS` in `cwd` with `env` over process.env (undefined deletes a variable). */
export function builtCli(args: string[], options: {cwd: string; env?: Record<string, string | undefined>}): BuiltRun {
  if (
    ['fast-exec.js', 'fast-create.js', 'fast-worktree-add.js'].some(
      (file) => !existsSync(path.join(projectRoot, 'dist', 'cli', file)),
    )
  )
    execFileSync('npm', ['run', '--silent', 'build:cli'], {cwd: projectRoot, stdio: 'ignore'})
  const imports = path.join(mkdtempSync(path.join(os.tmpdir(), 'yard-built-cli-')), 'imports')
  writeFileSync(imports, '')
  const env: NodeJS.ProcessEnv = {...process.env, RECORD_IMPORTS_FILE: imports}
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[key]
    else env[key] = value
  }

  const result = spawnSync(process.execPath, ['--import', recordImports, runJs, ...args], {
    cwd: options.cwd,
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const oclif = readFileSync(imports, 'utf8').includes('/@oclif/core/')
  return {status: result.status ?? 1, stdout: result.stdout, stderr: result.stderr, oclif}
}
