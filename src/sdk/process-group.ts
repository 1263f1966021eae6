/**
 * Process groups of children that outlive yard (DESIGN.md §3.4, "Locks"): the process adapter
 * runs budgeted children in their own group (so a budget kills grandchildren too), which also
 * means a `kill -9` of yard leaves them running. A lock records such a group so the next holder
 * can tell a live orphan from a recycled id, and end it before it cleans up after it.
 * Linux reads /proc; elsewhere a group is only probed with signal 0.
 */
import {readdirSync, readFileSync} from 'node:fs'

const sleep = async (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The fields of /proc/<pid>/stat after the command name (state is the first), or undefined. */
function statFields(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return text.slice(text.lastIndexOf(')') + 2).split(' ')
  } catch {
    return undefined
  }
}

/** Whether this system has /proc (Linux): then groups are checked member by member. */
function hasProc(): boolean {
  return statFields(process.pid) !== undefined
}

/**
 * The start time of process `pid` (clock ticks since boot, proc(5) field 22), which tells a
 * process from a later one that got the same id; undefined without /proc or when it is gone.
 */
export function processStart(pid: number): string | undefined {
  return statFields(pid)?.[19]
}

/** This process's group id (proc(5) field 5; Node has no getpgid); its pid where there is no /proc. */
export function ownGroup(): number {
  const group = Number(statFields(process.pid)?.[2])
  return Number.isInteger(group) && group > 1 ? group : process.pid
}

/**
 * Whether a process of group `pgid` other than this one runs whose name (proc(5) `comm`) starts
 * with `prefix` (`git`: git, git-lfs, git-remote-*). Where there is no /proc, whether anything of
 * the group runs (signal 0; EPERM counts).
 */
export function groupRuns(pgid: number, prefix: string): boolean {
  if (!hasProc()) {
    try {
      process.kill(-pgid, 0)
      return true
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'EPERM'
    }
  }

  return liveMembers(pgid).some((pid) => {
    if (pid === process.pid) return false
    try {
      return readFileSync(`/proc/${pid}/comm`, 'utf8').startsWith(prefix)
    } catch {
      return false
    }
  })
}

/** The processes of group `pgid` that still run (zombies excluded; Linux only). */
function liveMembers(pgid: number): number[] {
  const members: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    const fields = statFields(Number(name))
    if (fields && fields[2] === String(pgid) && fields[0] !== 'Z' && fields[0] !== 'X') members.push(Number(name))
  }

  return members
}

/** What is known of a recorded group now. */
export type GroupState =
  /** Nothing of it runs any more. */
  | 'gone'
  /**
   * It runs and is provably the group recorded: its leader has the recorded start time, or the
   * leader exited and members remain (Linux never reuses an id while a group holds it).
   */
  | 'orphan'
  /** Something runs in a group with that id, but it cannot be told apart from a recycled id. */
  | 'unknown'

/**
 * The state of group `pgid` whose leader started at `leaderStart` (processStart when recorded).
 */
export function groupState(pgid: number, leaderStart: string | undefined): GroupState {
  if (!hasProc()) {
    try {
      process.kill(-pgid, 0)
      return 'unknown'
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'EPERM' ? 'unknown' : 'gone'
    }
  }

  if (liveMembers(pgid).length === 0) return 'gone'
  const start = processStart(pgid)
  if (start === undefined) return 'orphan'
  if (leaderStart === undefined) return 'unknown'
  return start === leaderStart ? 'orphan' : 'gone'
}

/**
 * Kills every process of group `pgid` (SIGKILL) and waits until none runs, at most `waitMs`.
 * @returns whether the group is gone.
 */
export async function endGroup(pgid: number, waitMs = 5000): Promise<boolean> {
  try {
    process.kill(-pgid, 'SIGKILL')
  } catch {
    return true
  }

  const deadline = Date.now() + waitMs
  while (Date.now() < deadline) {
    if (hasProc() ? liveMembers(pgid).length === 0 : !signalReaches(pgid)) return true
    await sleep(20)
  }

  return false
}

function signalReaches(pgid: number): boolean {
  try {
    process.kill(-pgid, 0)
    return true
  } catch {
    return false
  }
}

/**
 * The process groups (other than this process's own) of processes whose argv holds `path` as one
 * of its words — on Linux, from /proc/<pid>/cmdline; elsewhere none. For a lock taker: a child a
 * killed holder started in the instant before it could record its group still writes there.
 */
export function groupsWritingTo(path: string): number[] {
  const own = ownGroup()
  const groups = new Set<number>()
  let pids: string[]
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name))
  } catch {
    return []
  }

  for (const pid of pids) {
    let argv: string[]
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
    } catch {
      continue
    }

    if (!argv.includes(path)) continue
    const pgid = Number(statFields(Number(pid))?.[2])
    if (Number.isInteger(pgid) && pgid > 0 && pgid !== own) groups.add(pgid)
  }

  return [...groups]
}
