/**
 * Repositories for the worktree tests: a bare "origin" whose default branch is `develop`, a
 * clone of it as the main checkout, and a second clone to push from (real git throughout).
 */
import {spawnSync, type SpawnSyncReturns} from 'node:child_process'
import {mkdirSync} from 'node:fs'
import path from 'node:path'

import {projectRoot} from './oclif-config.js'
import {git, tempDir, writeFile} from './repo.js'

/** The environment the worktree tests run yard with: nothing from the developer's shell. */
export function cleanEnv(stateDir: string): Record<string, string | undefined> {
  return {
    WT_OFFSET: undefined,
    YARD_WORKTREE: undefined,
    YARD_PREFIX: undefined,
    YARD_WORKTREES_ROOT: undefined,
    YARD_WORKTREE_BASE: undefined,
    YARD_TRANSCRIPTS_ARCHIVE: undefined,
    YARD_STATE_DIR: stateDir,
    GIT_AUTHOR_NAME: 'Test',
    GIT_AUTHOR_EMAIL: 't@example.com',
    GIT_COMMITTER_NAME: 'Test',
    GIT_COMMITTER_EMAIL: 't@example.com',
  }
}

export interface RemoteSetup {
  /** The bare origin (HEAD → develop). */
  origin: string
  /** The main checkout: a clone of origin, on the unpushed branch `wip` with one extra commit. */
  main: string
  /** Another clone, for pushing commits the main checkout has not fetched yet. */
  other: string
  /** origin/develop's commit when the main checkout was cloned. */
  develop: string
  /** The main checkout's HEAD (wip). */
  wip: string
  /** The main checkout's stale local main. */
  staleMain: string
  stateDir: string
}

/** Commits a file in `dir` and returns the new HEAD. */
export function commit(dir: string, file: string, content: string, message = `change ${file}`): string {
  writeFile(dir, file, content)
  git(dir, 'add', '--', file)
  git(dir, 'commit', '-q', '-m', message)
  return git(dir, 'rev-parse', 'HEAD')
}

/**
 * Case 1 of the shared cases: remote default branch `develop`; the main checkout on an unpushed
 * branch `wip` with an extra commit; a local `main` that is stale.
 */
export function remoteSetup(files: Record<string, string> = {}): RemoteSetup {
  const root = tempDir('yard-wt')
  const seed = path.join(root, 'seed')
  mkdirSync(seed)
  git(seed, 'init', '-q', '-b', 'main')
  for (const [name, content] of Object.entries(files)) writeFile(seed, name, content)
  git(seed, 'add', '-A')
  commit(seed, 'README', 'main\n', 'initial')
  git(seed, 'checkout', '-q', '-b', 'develop')
  commit(seed, 'develop.txt', 'develop\n')
  const origin = path.join(root, 'origin.git')
  git(root, 'clone', '-q', '--bare', seed, origin)
  git(origin, 'symbolic-ref', 'HEAD', 'refs/heads/develop')
  const main = path.join(root, 'app')
  git(root, 'clone', '-q', origin, main)
  git(main, 'branch', '-q', 'main', 'origin/main')
  git(main, 'checkout', '-q', '-b', 'wip')
  const wip = commit(main, 'wip.txt', 'in flight\n')
  const other = path.join(root, 'other')
  git(root, 'clone', '-q', origin, other)
  const stateDir = path.join(root, 'state')
  return {
    origin,
    main,
    other,
    develop: git(main, 'rev-parse', 'origin/develop'),
    wip,
    staleMain: git(main, 'rev-parse', 'main'),
    stateDir,
  }
}

/** The worktrees root of a main checkout (the default `<main>-worktrees`). */
export function rootOf(main: string): string {
  return `${main}-worktrees`
}

/** Whether a local branch exists. */
export function hasBranch(repo: string, branch: string): boolean {
  try {
    git(repo, 'show-ref', '--verify', '--quiet', `refs/heads/${branch}`)
    return true
  } catch {
    return false
  }
}

/** Registered worktree paths (git worktree list --porcelain). */
export function registered(repo: string): string[] {
  return git(repo, 'worktree', 'list', '--porcelain')
    .split('\n')
    .filter((line) => line.startsWith('worktree '))
    .map((line) => line.slice('worktree '.length))
}

/**
 * Runs `yard ARGS` (bin/dev.js) with `dir` mounted read-only over itself in a private mount
 * namespace (unshare, root only), as a box's read-only mount or an immutable tree would have it;
 * `env` is the whole environment of the run.
 */
export function yardWithReadOnly(
  dir: string,
  args: string[],
  options: {cwd: string; env: Record<string, string | undefined>},
): SpawnSyncReturns<string> {
  const env: NodeJS.ProcessEnv = {...process.env, ...options.env}
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key]
  return spawnSync(
    'unshare',
    [
      '--mount',
      '--propagation',
      'private',
      '--',
      'sh',
      '-c',
      'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"',
      dir,
      process.execPath,
      path.join(projectRoot, 'bin', 'dev.js'),
      ...args,
    ],
    {cwd: options.cwd, env, encoding: 'utf8'},
  )
}
