/**
 * Fixtures of the sandbox tests (DESIGN.md §5.2): local bare repositories as upstreams, a main
 * checkout whose prefix starts with the sandbox tests' own podman prefix, yard's default image,
 * and helpers that look inside a pod with plain podman.
 */
import {execFile, spawnSync} from 'node:child_process'
import {mkdirSync} from 'node:fs'
import path from 'node:path'

import {podman, podmanEnv, podmanStateDir, podmanTry} from '../../support/podman.js'
import {git, makeRepo, tempDir, writeFile} from '../../support/repo.js'
import {projectRoot} from '../../support/yard.js'

/** Every pod, container and volume the sandbox tests make starts with this (never sweep wider). */
export const SANDBOX_TEST_PREFIX = 'yardtest-x'

/** A bare upstream with `main` (2 commits) and, when asked, `develop` one commit ahead. Returns its path. */
export function makeUpstream(name: string, options: {develop?: boolean} = {}): string {
  const root = tempDir('yardtest-upstream')
  const bare = path.join(root, `${name}.git`)
  git(root, 'init', '-q', '--bare', '-b', 'main', bare)
  const seed = path.join(root, 'seed')
  git(root, 'init', '-q', '-b', 'main', seed)
  git(seed, 'remote', 'add', 'origin', bare)
  writeFile(seed, 'README', `${name}\n`)
  git(seed, 'add', '-A')
  git(seed, 'commit', '-q', '-m', 'first')
  writeFile(seed, 'lib.txt', `${name} lib\n`)
  git(seed, 'add', '-A')
  git(seed, 'commit', '-q', '-m', 'second')
  git(seed, 'push', '-q', 'origin', 'main')
  if (options.develop) {
    git(seed, 'checkout', '-q', '-b', 'develop')
    writeFile(seed, 'develop.txt', 'on develop\n')
    git(seed, 'add', '-A')
    git(seed, 'commit', '-q', '-m', 'develop')
    git(seed, 'push', '-q', 'origin', 'develop')
  }

  return bare
}

export interface SandboxFixture {
  app: string
  state: string
  env: Record<string, string | undefined>
}

/** A main checkout with the given prefix and `[ports]`, a git identity of its own, and a temp state dir. */
export function makeApp(
  prefix: string,
  ports = 'WEB_PORT = 38700',
  extraFiles: Record<string, string> = {},
): SandboxFixture {
  const app = makeRepo({'yard.toml': `[project]\nprefix = "${prefix}"\n\n[ports]\n${ports}\n`, ...extraFiles})
  git(app, 'config', 'user.name', 'Sandbox Tester')
  git(app, 'config', 'user.email', 'sandbox@example.com')
  const state = podmanStateDir()
  mkdirSync(path.join(state, 'caches'), {recursive: true})
  return {app, state, env: podmanEnv(state)}
}

/** The workspace container of pod `project`. */
export const workspaceOf = (project: string) => `${project}-workspace`

/** Runs argv in a pod's workspace container (no shell); throws on failure; trimmed stdout. */
export function inPod(project: string, ...argv: string[]): string {
  return podman('exec', workspaceOf(project), ...argv)
}

/** Like inPod, never throws. */
export function inPodTry(project: string, ...argv: string[]): {status: number; stdout: string; stderr: string} {
  return podmanTry('exec', workspaceOf(project), ...argv)
}

/** Whether a pod of that name exists. */
export function podExists(project: string): boolean {
  return podmanTry('pod', 'exists', project).status === 0
}

export const devJs = path.join(projectRoot, 'bin', 'dev.js')

/** This process's environment with the fixture's on top (an undefined value removes the variable). */
export function fixtureEnv(fixture: SandboxFixture): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {...process.env}
  for (const [key, value] of Object.entries(fixture.env)) {
    if (value === undefined) delete env[key]
    else env[key] = value
  }

  return env
}

/** `yard …` as a child process (exec hands its terminal to podman), in `cwd` with the fixture's env. */
export function cli(fixture: SandboxFixture, args: string[]): {status: number; stdout: string; stderr: string} {
  const childEnv = fixtureEnv(fixture)

  const result = spawnSync(process.execPath, [devJs, ...args], {
    cwd: fixture.app,
    env: childEnv,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  return {status: result.status ?? 1, stdout: result.stdout, stderr: result.stderr}
}

/** `yard …` as a child process, as `cli`, without blocking: for commands that must run at the same time. */
export async function cliAsync(
  fixture: SandboxFixture,
  args: string[],
): Promise<{status: number; stdout: string; stderr: string}> {
  const childEnv = fixtureEnv(fixture)

  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [devJs, ...args],
      {cwd: fixture.app, env: childEnv, encoding: 'utf8'},
      (error, stdout, stderr) =>
        resolve({status: error ? Number((error as {code?: number}).code ?? 1) : 0, stdout, stderr}),
    )
  })
}

/** The shell line that runs `yard …` from `cwd` with the fixture's env (for tmux panes). */
export function cliLine(fixture: SandboxFixture, args: string[]): string {
  const quote = (word: string) => `'${word.replaceAll("'", String.raw`'\''`)}'`
  return `cd ${quote(fixture.app)} && env YARD_STATE_DIR=${quote(fixture.state)} ${quote(process.execPath)} ${quote(devJs)} ${args.map(quote).join(' ')}`
}
