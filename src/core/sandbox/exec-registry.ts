/**
 * One agent per sandbox workspace (docs/sandboxes.md, "One agent per workspace"): two agents in
 * one worktree share its index, HEAD and working files, and each undoes the other's work. yard
 * cannot see what runs inside a pod, but it sees its own `yard exec`s: each one into a sandbox
 * worktree is recorded under `<state>/execs/` while it runs, so the next one can warn.
 */
import {mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import path from 'node:path'

/** A `yard exec` recorded as running: its process id, its command, when it started (ISO 8601). */
export interface RunningExec {
  pid: number
  argv: string[]
  started: string
}

/** Where one sandbox worktree's execs are recorded: the sandbox, its slot and the branch directory. */
export interface ExecTarget {
  sandbox: string
  slot: string
  directory: string
}

/**
 * git subcommands that only read (git-status(1) refreshes the index's stat cache at most, which
 * no other command loses work to). Every other command — an agent, a shell, a build that may run
 * git — counts as one that may write.
 */
const READ_ONLY_GIT = new Set([
  'status',
  'log',
  'diff',
  'show',
  'rev-parse',
  'ls-files',
  'ls-tree',
  'blame',
  'grep',
  'describe',
  'cat-file',
  'shortlog',
  'rev-list',
  'name-rev',
  'for-each-ref',
  'version',
  'help',
])
const READ_ONLY_TOOLS = new Set([
  'ls',
  'cat',
  'pwd',
  'echo',
  'true',
  'false',
  'test',
  'head',
  'tail',
  'wc',
  'env',
  'printenv',
  'id',
  'whoami',
  'uname',
  'date',
  'sleep',
  'stat',
  'du',
  'df',
])

/**
 * True when argv only reads: a read-only git subcommand (options before it, such as `-C DIR`,
 * skipped) or a plain file-reading tool. Anything else may write the worktree.
 */
export function readsOnly(argv: string[]): boolean {
  const tool = path.basename(argv[0] ?? '')
  if (READ_ONLY_TOOLS.has(tool)) return true
  if (tool !== 'git') return false
  let index = 1
  while (index < argv.length && argv[index].startsWith('-'))
    index += ['--git-dir', '--work-tree', '-C', '-c'].includes(argv[index]) ? 2 : 1
  const subcommand = argv[index]
  return subcommand === undefined || READ_ONLY_GIT.has(subcommand)
}

/**
 * `<state>/execs/<sandbox>/<slot>/<branch directory>`, each part percent-encoded (a path, not a
 * hash: hashing would load node:crypto into every exec).
 */
function targetDir(state: string, target: ExecTarget): string {
  return path.join(
    state,
    'execs',
    ...[target.sandbox, target.slot, target.directory].map((part) => encodeURIComponent(part).replaceAll('.', '%2E')),
  )
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** The execs recorded for `target` whose process still runs; records of ended ones are removed. */
export function runningExecs(state: string, target: ExecTarget): RunningExec[] {
  const directory = targetDir(state, target)
  let names: string[]
  try {
    names = readdirSync(directory).filter((name) => name.endsWith('.json'))
  } catch {
    return []
  }

  const running: RunningExec[] = []
  for (const name of names) {
    const file = path.join(directory, name)
    try {
      const record = JSON.parse(readFileSync(file, 'utf8')) as RunningExec
      if (Number.isInteger(record.pid) && Array.isArray(record.argv) && alive(record.pid)) running.push(record)
      else rmSync(file, {force: true})
    } catch {
      rmSync(file, {force: true})
    }
  }

  return running
}

/**
 * Records this process's exec into `target` and returns the other running execs that may write
 * (see readsOnly), when this one may write too; an exec that only reads is recorded and warned
 * about by nobody. `release` removes the record (call it when the command ends). A state
 * directory that cannot be written records nothing: the warning is advice, never a failure.
 */
export function recordExec(
  state: string,
  target: ExecTarget,
  argv: string[],
  now = new Date(),
): {writers: RunningExec[]; release: () => void} {
  const others = runningExecs(state, target).filter((other) => other.pid !== process.pid)
  const writers = readsOnly(argv) ? [] : others.filter((other) => !readsOnly(other.argv))
  const file = path.join(targetDir(state, target), `${process.pid}.json`)
  try {
    mkdirSync(path.dirname(file), {recursive: true, mode: 0o700})
    writeFileSync(file, JSON.stringify({pid: process.pid, argv, started: now.toISOString()} satisfies RunningExec), {
      mode: 0o600,
    })
  } catch {
    return {writers, release() {}}
  }

  return {writers, release: () => rmSync(file, {force: true})}
}
