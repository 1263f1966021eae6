/** Temporary git repositories for tests: real git, removed after each test. */
import {execFileSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync} from 'node:fs'
import os from 'node:os'
import path from 'node:path'

const made: string[] = []

/** Runs git synchronously in `cwd`; returns trimmed stdout. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_TERMINAL_PROMPT: '0',
      LC_ALL: 'C',
      GIT_AUTHOR_NAME: 'Test',
      GIT_AUTHOR_EMAIL: 't@example.com',
      GIT_COMMITTER_NAME: 'Test',
      GIT_COMMITTER_EMAIL: 't@example.com',
    },
  }).trim()
}

/** A fresh directory under the system temp dir (real path), removed by `cleanupTemp`. */
export function tempDir(label = 'yard-test'): string {
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), `${label}-`)))
  made.push(dir)
  return dir
}

/** A main checkout `<tmp>/<dirName>` with one commit and the given files; returns its path. */
export function makeRepo(files: Record<string, string> = {}, dirName = 'app'): string {
  const repo = path.join(tempDir(), dirName)
  mkdirSync(repo, {recursive: true})
  git(repo, 'init', '-q', '-b', 'main')
  for (const [name, content] of Object.entries(files)) writeFile(repo, name, content)
  writeFile(repo, 'README', 'test\n')
  git(repo, 'add', '-A')
  git(repo, 'commit', '-q', '-m', 'initial')
  return repo
}

export function writeFile(dir: string, name: string, content: string): void {
  const file = path.join(dir, name)
  mkdirSync(path.dirname(file), {recursive: true})
  writeFileSync(file, content)
}

/** Adds a worktree with plain git at `<repo>-worktrees/<name>`; returns its path. */
export function addWorktree(repo: string, name: string): string {
  const dir = path.join(`${repo}-worktrees`, name)
  git(repo, 'worktree', 'add', '-q', '-b', `wt/${name}`, dir)
  return dir
}

/** Removes every temporary directory made so far. */
export function cleanupTemp(): void {
  for (const dir of made.splice(0)) rmSync(dir, {recursive: true, force: true})
}
