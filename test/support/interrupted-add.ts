/**
 * `yard worktree add` killed with SIGKILL at chosen points, for the suite's fault test and
 * bench/worktree-add-kill.ts: the CLI runs as a child in its own process group (git's checkout is
 * in that group too), the parent watches the file system and kills the whole group the moment a
 * point is reached. And the state a run leaves, with the main checkout's path normalised, so a
 * rerun after a kill can be compared with a clean run in a twin clone.
 */
import {execFileSync, spawn} from 'node:child_process'
import {existsSync, readdirSync, readFileSync} from 'node:fs'
import path from 'node:path'

/**
 * Where in an add to kill it: a path that appears (relative to the main checkout, `<target>` for
 * the worktree), or a delay.
 */
export type KillPoint = {label: string; appears: string} | {label: string; afterMs: number}

export interface KillOutcome {
  /** The point was reached and the group killed (false: the run ended first, with `exitCode`). */
  killed: boolean
  exitCode: number | null
  elapsedMs: number
}

/**
 * Runs `argv` (node + script + yard args) in `cwd` with `env`, in a new process group, and kills
 * the group with SIGKILL when `point` is reached.
 */
export async function killAt(
  argv: string[],
  options: {
    cwd: string
    env: NodeJS.ProcessEnv
    point: KillPoint
    target: string
    pollMs?: number
    /** Sent instead of SIGKILL to the group: to the CLI's process alone, as `kill -INT PID` does. */
    signal?: NodeJS.Signals
  },
): Promise<KillOutcome> {
  const started = Date.now()
  const child = spawn(argv[0], argv.slice(1), {cwd: options.cwd, env: options.env, detached: true, stdio: 'ignore'})
  let exitCode: number | null = null
  let exited = false
  const done = new Promise<void>((resolve) =>
    child.on('exit', (code) => {
      exited = true
      exitCode = code
      resolve()
    }),
  )
  const {point} = options
  const watched = 'appears' in point ? point.appears.replace('<target>', options.target) : undefined
  const reached = () =>
    watched === undefined
      ? Date.now() - started >= (point as {afterMs: number}).afterMs
      : existsSync(path.resolve(options.cwd, watched))
  let killed = false
  while (!exited) {
    if (reached()) {
      try {
        if (options.signal) process.kill(child.pid!, options.signal)
        else process.kill(-child.pid!, 'SIGKILL')
        killed = true
      } catch {
        // The group is gone already: the run ended on its own.
      }

      break
    }

    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 1))
  }

  await done
  return {killed: killed && exitCode === null, exitCode, elapsedMs: Date.now() - started}
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, {cwd, encoding: 'utf8', env: {...process.env, LC_ALL: 'C'}}).trimEnd()

/**
 * What an add leaves, as text, with `main` written `<main>`: local and remote refs, every
 * `branch.*` config key, git's worktree list and administrative ids (and any lock in them),
 * yard's journals, the pin file, and for the worktree NAME its HEAD, tracked-file count and
 * `git status`.
 */
export function addState(main: string, name: string): Record<string, string> {
  const target = path.join(`${main}-worktrees`, name)
  const normalise = (text: string) => text.replaceAll(main, '<main>')
  const adminRoot = path.join(main, '.git', 'worktrees')
  const admin = existsSync(adminRoot)
    ? readdirSync(adminRoot)
        .sort()
        .map((id) => `${id}${existsSync(path.join(adminRoot, id, 'locked')) ? ' locked' : ''}`)
    : []
  const journals = path.join(main, '.git', 'yard', 'adding')
  const config = git(main, 'config', '--local', '--list')
    .split('\n')
    .filter((line) => line.startsWith('branch.'))
    .sort()
  const present = existsSync(path.join(target, '.git'))
  return {
    refs: git(main, 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads', 'refs/remotes'),
    config: config.join('\n'),
    worktrees: normalise(git(main, 'worktree', 'list', '--porcelain')),
    admin: admin.join('\n'),
    journals: existsSync(journals) ? readdirSync(journals).join('\n') : '',
    pins: existsSync(path.join(main, 'yard.local.toml'))
      ? readFileSync(path.join(main, 'yard.local.toml'), 'utf8')
      : '(none)',
    head: present ? git(target, 'rev-parse', 'HEAD') : '(no worktree)',
    files: present ? String(git(target, 'ls-files').split('\n').length) : '0',
    status: present ? git(target, 'status', '--porcelain', '--untracked-files=all') : '',
  }
}
