/**
 * Shared parts of the procfile-stack plugin tests: a temporary XDG_DATA_HOME and state directory
 * per test, a repository whose Procfile runs a small HTTP server, free ports, and the sweep that
 * kills every process group the plugin recorded (also when a test fails).
 */
import {existsSync, readdirSync, readFileSync} from 'node:fs'
import net from 'node:net'
import path from 'node:path'

import {isPortFree} from '../../src/sdk/port-probe.js'
import {builtYard, type CliRun} from '../support/built-package.js'
import {addWorktree, makeRepo, tempDir} from '../support/repo.js'

/** feat's hash offset (DESIGN.md §3.4; the same value the ports tests check). */
export const FEAT_OFFSET = 59

/** An HTTP server answering `web of <WORKTREE or main> on <port>`; it names its port on stdout. */
const SERVER = String.raw`import http from 'node:http'
const port = Number(process.argv[2])
http.createServer((request, response) => response.end('web of ' + (process.env.WORKTREE ?? 'main') + ' on ' + port + '\n'))
  .listen(port, '127.0.0.1', () => console.log('listening on ' + port))
process.on('SIGTERM', () => process.exit(0))
`

/** `web` serves HTTP on APP_PORT; `worker` is a shell loop with children of its own. */
export const PROCFILE = `# the example's services
web: exec node server.mjs $APP_PORT
worker: while true; do echo tick; sleep 1; done
`

/** One test's homes: plugins under `data`, yard's state under `state`. */
export interface Homes {
  data: string
  state: string
  env: Record<string, string | undefined>
}

const homes: Homes[] = []

/** Fresh XDG_DATA_HOME and YARD_STATE_DIR, and an environment without targeting variables. */
export function freshHomes(): Homes {
  const data = tempDir('yard-data')
  const state = tempDir('yard-state')
  const made = {
    data,
    state,
    env: {
      XDG_DATA_HOME: data,
      YARD_STATE_DIR: state,
      YARD_WORKTREE: undefined,
      WT_OFFSET: undefined,
      WORKTREE: undefined,
      YARD_PREFIX: undefined,
      YARD_WORKTREES_ROOT: undefined,
    },
  }
  homes.push(made)
  return made
}

/** A main checkout `app` selecting procfile-stack, with the server and Procfile, and worktree feat. */
export function procfileRepo(base: number): {repo: string; feat: string} {
  const toml = `[ports]\nAPP_PORT = ${base}\n\n[stack]\nbackend = "procfile-stack"\nfiles = ["Procfile"]\n`
  const repo = makeRepo({'yard.toml': toml, 'server.mjs': SERVER, Procfile: PROCFILE})
  return {repo, feat: addWorktree(repo, 'feat')}
}

/** A base port whose main and feat ports (base, base + 59) are both free now. */
export async function freePortBase(): Promise<number> {
  for (let tries = 0; tries < 50; tries++) {
    const base = 20_000 + Math.floor(Math.random() * 20_000)
    if ((await isPortFree(base)) && (await isPortFree(base + FEAT_OFFSET))) return base
  }

  throw new Error('no free pair of ports found')
}

/**
 * Whether a process of the group `pgid` still runs: a member that is not a zombie (this
 * machine's init reaps exited orphans only after seconds).
 */
export function groupAlive(pgid: number): boolean {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    let stat: string
    try {
      stat = readFileSync(path.join('/proc', entry, 'stat'), 'utf8')
    } catch {
      continue
    }

    const [state, , group] = stat.slice(stat.lastIndexOf(')') + 2).split(' ', 3)
    if (Number(group) === pgid && state !== 'Z') return true
  }

  return false
}

/** The pids recorded in a state directory's procfile-stack state files, by project. */
export function recordedPids(state: string): Record<string, number[]> {
  const root = path.join(state, 'procfile-stack')
  if (!existsSync(root)) return {}
  const pids: Record<string, number[]> = {}
  for (const project of readdirSync(root)) {
    const file = path.join(root, project, 'state.json')
    if (!existsSync(file)) continue
    const recorded = JSON.parse(readFileSync(file, 'utf8')) as {services: Record<string, {pid: number}>}
    pids[project] = Object.values(recorded.services).map((service) => service.pid)
  }

  return pids
}

/** Kills every process group recorded under the homes made so far; call in afterEach. */
export function killRecorded(): void {
  for (const made of homes.splice(0)) {
    for (const pids of Object.values(recordedPids(made.state))) {
      for (const pid of pids) if (groupAlive(pid)) process.kill(-pid, 'SIGKILL')
    }
  }
}

/**
 * GET http://127.0.0.1:<port>/ and its body, trimmed. `yard up` returns once the processes are
 * started, not once they listen (as `compose up -d`): a refused connection is retried for 15 s.
 */
export async function httpText(port: number): Promise<string> {
  const deadline = Date.now() + 15_000
  for (;;) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/`, {signal: AbortSignal.timeout(5000)})
      return (await response.text()).trim()
    } catch (error) {
      const code = (error as {cause?: {code?: string}}).cause?.code
      if (code !== 'ECONNREFUSED' || Date.now() > deadline) throw error
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
}

/** Whether a TCP connection to 127.0.0.1:<port> is refused (nothing listens). */
export async function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({port, host: '127.0.0.1'})
    socket.once('connect', () => {
      socket.destroy()
      resolve(false)
    })
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'))
  })
}

/** The user-installed and linked plugins, as `yard plugins --json` lists them: `[name, type]`. */
export function userPlugins(listed: unknown): Array<[string, string]> {
  return (listed as Array<{name: string; type: string}>)
    .filter((plugin) => plugin.type === 'user' || plugin.type === 'link')
    .map((plugin) => [plugin.name, plugin.type])
}

/** `yard` from the built package with these homes; throws with its output unless it exits `expected`. */
export function yardIn(
  root: string,
  made: Homes,
  args: string[],
  options: {cwd?: string; expected?: number; input?: string} = {},
): CliRun {
  const result = builtYard(root, args, {cwd: options.cwd, env: made.env, input: options.input})
  const expected = options.expected ?? 0
  if (result.status !== expected) {
    throw new Error(
      `yard ${args.join(' ')} exited ${result.status}, expected ${expected}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`,
    )
  }

  return result
}
