/**
 * Host processes and the files that remember them. Each service runs as `sh -c <command>` in a
 * session of its own (its process group id is its pid), so stopping it signals the whole group
 * and leaves no child behind. Per project, under `<state dir>/procfile-stack/<project>/`:
 * `state.json` (owner, checkout, every service's pid and start), `<service>.pid` and
 * `<service>.log` (stdout and stderr, appended).
 */
import {spawn} from 'node:child_process'
import {closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync} from 'node:fs'
import path from 'node:path'

/** What is remembered of one started service. */
export interface ServiceRecord {
  pid: number
  command: string
  /** ISO-8601 time it was started. */
  started: string
  /** The process's start time in clock ticks (Linux `/proc/<pid>/stat`), to tell a reused pid; null elsewhere. */
  startTicks: number | null
  /** The `[ports]` its command names, for `yard ps`. */
  ports: Array<{key: string; port: number}>
}

/** `state.json` of one project. */
export interface ProjectState {
  project: string
  /** The Target's owner: the main checkout that started it. */
  owner: string
  checkout: string
  services: Record<string, ServiceRecord>
}

/** The directory of one project's files (not created here). */
export function projectDir(stateDir: string, project: string): string {
  return path.join(stateDir, 'procfile-stack', project)
}

/** The project's state, or undefined when it has none (never started, or torn down). */
export function readState(dir: string): ProjectState | undefined {
  const file = path.join(dir, 'state.json')
  if (!existsSync(file)) return undefined
  return JSON.parse(readFileSync(file, 'utf8')) as ProjectState
}

/** Writes `state.json` and one `<service>.pid` per service, each through a rename (never half-written). */
export function writeState(dir: string, state: ProjectState): void {
  mkdirSync(dir, {recursive: true})
  for (const [name, record] of Object.entries(state.services)) atomicWrite(path.join(dir, `${name}.pid`), `${record.pid}\n`)
  atomicWrite(path.join(dir, 'state.json'), JSON.stringify(state, null, 2) + '\n')
}

/** Removes the state and pid files; logs stay (like a compose project's volumes after `down`). */
export function clearState(dir: string, state: ProjectState): void {
  for (const name of Object.keys(state.services)) rmSync(path.join(dir, `${name}.pid`), {force: true})
  rmSync(path.join(dir, 'state.json'), {force: true})
}

function atomicWrite(file: string, text: string): void {
  const temporary = `${file}.${process.pid}.tmp`
  writeFileSync(temporary, text)
  renameSync(temporary, file)
}

/** A service's log file. */
export function logFile(dir: string, service: string): string {
  return path.join(dir, `${service}.log`)
}

/**
 * Starts `sh -c <command>` in `cwd` with `env`, detached in a session of its own, stdout and
 * stderr appended to `log`. Resolves with its pid once it is spawned; the process outlives yard.
 * @throws Error when the process cannot be spawned at all.
 */
export function startProcess(command: string, options: {cwd: string; env: Record<string, string | undefined>; log: string}): Promise<number> {
  const fd = openSync(options.log, 'a')
  try {
    const child = spawn('sh', ['-c', command], {cwd: options.cwd, env: options.env, detached: true, stdio: ['ignore', fd, fd]})
    return new Promise((resolve, reject) => {
      child.once('error', reject)
      child.once('spawn', () => {
        child.unref()
        resolve(child.pid as number)
      })
    })
  } finally {
    closeSync(fd)
  }
}

/** The start time of `pid` in clock ticks since boot (Linux), or null when unknown. */
export function startTicks(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Field 22; the command name (field 2) may hold spaces and parentheses, so count after its ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return Number(fields[19])
  } catch {
    return null
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pid, signal)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * Whether a process of the group still runs. A zombie (exited, waiting to be reaped by init,
 * which can take seconds) does not count; where there is no `/proc`, any member does.
 */
function groupRuns(pgid: number): boolean {
  if (!signalGroup(pgid, 0)) return false
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return true
  }
  return entries.some((entry) => {
    if (!/^\d+$/.test(entry)) return false
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      // After the command name: state (field 3), ppid, pgrp (field 5).
      const [state, , group] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      return Number(group) === pgid && state !== 'Z'
    } catch {
      return false
    }
  })
}

/**
 * Whether the service's process group still runs. A group outlives its leader only while one of
 * its processes does, and a pid is not handed out again while it names a group; when the leader
 * is there, its start time must match the record (otherwise the pid was reused).
 */
export function isRunning(record: ServiceRecord): boolean {
  if (!groupRuns(record.pid)) return false
  if (record.startTicks === null) return true
  const now = startTicks(record.pid)
  return now === null || now === record.startTicks
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Stops a service's whole process group: SIGTERM, then SIGKILL after `graceMs`. Resolves true
 * when it had to be killed. Resolves at once when the group is already gone.
 */
export async function stopProcess(record: ServiceRecord, graceMs = 10_000): Promise<boolean> {
  if (!isRunning(record)) return false
  signalGroup(record.pid, 'SIGTERM')
  const deadline = Date.now() + graceMs
  while (Date.now() < deadline) {
    if (!groupRuns(record.pid)) return false
    await sleep(50)
  }
  signalGroup(record.pid, 'SIGKILL')
  for (let tries = 0; tries < 40 && groupRuns(record.pid); tries++) await sleep(50)
  return true
}
