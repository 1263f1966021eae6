/**
 * kill -9 points during `yard cache add` (DESIGN.md §3.4 "Locks", §5.1): real yard processes
 * (bin/dev.js) killed at chosen moments of a clone, then the same command run again; the state it
 * leaves is compared with a clean run's. Shared by test/plugins/git-cache/kill.test.ts (a few MB,
 * a few points) and bench/kill-points.ts (≈ 500 MB, ten points).
 */
import {execFileSync, spawn} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

import {repoIdentity} from '../../src/sdk/repo-identity.js'

const devJs = path.join(path.dirname(path.dirname(path.dirname(fileURLToPath(import.meta.url)))), 'bin', 'dev.js')
const gitEnv = {...process.env, LC_ALL: 'C', GIT_TERMINAL_PROMPT: '0'}
const sleep = async (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function git(cwd: string, args: string[], input?: string | Buffer): string {
  return execFileSync('git', args, {cwd, input, env: gitEnv, maxBuffer: 1 << 26, stdio: ['pipe', 'pipe', 'pipe']})
    .toString()
    .trim()
}

/**
 * A bare repository `<dir>/bulky.git` whose history holds about `megabytes` MB of random (so
 * incompressible) blobs in `commits` commits on main, written by one `git fast-import`.
 */
export function makeBulkyUpstream(dir: string, megabytes: number, commits = 10): string {
  const bare = path.join(dir, 'bulky.git')
  mkdirSync(bare, {recursive: true})
  git(bare, ['init', '-q', '--bare', '-b', 'main'])
  const perCommit = Math.ceil((megabytes * 1024 * 1024) / commits)
  const blobSize = Math.min(perCommit, 8 * 1024 * 1024)
  const blobsPerCommit = Math.ceil(perCommit / blobSize)
  // One stream per commit keeps the pipe's memory bounded for large repositories.
  for (let commit = 0; commit < commits; commit++) {
    const parts: Buffer[] = [
      Buffer.from(
        `commit refs/heads/main\ncommitter Test <t@example.com> ${1_700_000_000 + commit} +0000\ndata 9\ncommit ${commit % 10}\n${commit === 0 ? '' : 'from refs/heads/main^0\n'}`,
      ),
    ]
    for (let blob = 0; blob < blobsPerCommit; blob++) {
      const data = randomBytes(blobSize)
      parts.push(
        Buffer.from(`M 100644 inline data/${commit}-${blob}.bin\ndata ${data.length}\n`),
        data,
        Buffer.from('\n'),
      )
    }

    parts.push(Buffer.from('\n'))
    git(bare, ['fast-import', '--quiet'], Buffer.concat(parts))
  }

  return bare
}

/**
 * A fake ssh (`GIT_SSH`, variant simple) that runs the upload-pack it is asked for on this host
 * and passes its output on in chunks, each after the delay in ms written in `<dir>/delay-ms`
 * when it started (0 without the file), logging its arguments to `<dir>/argv.log`: a killed clone
 * can be made to outlive the restart of
 * yard while the rerun clones at full speed. Returns its path and a setter of the delay.
 */
export function throttledSsh(dir: string): {ssh: string; setDelay(ms: number): void} {
  const file = path.join(dir, 'throttled-ssh.cjs')
  const delayFile = path.join(dir, 'delay-ms')
  writeFileSync(
    file,
    String.raw`#!${process.execPath}
const {spawn} = require('node:child_process')
const {appendFileSync, readFileSync} = require('node:fs')
appendFileSync(${JSON.stringify(path.join(dir, 'argv.log'))}, JSON.stringify(process.argv.slice(2)) + '\n')
let delay = 0
try { delay = Number(readFileSync(${JSON.stringify(delayFile)}, 'utf8')) } catch {}
const match = /^git-upload-pack '(.*)'$/.exec(process.argv[process.argv.length - 1])
const child = spawn('git', ['upload-pack', match[1]], {stdio: ['pipe', 'pipe', 'inherit']})
process.stdin.pipe(child.stdin)
child.stdout.on('data', (chunk) => {
  if (delay === 0) return process.stdout.write(chunk)
  child.stdout.pause()
  process.stdout.write(chunk, () => setTimeout(() => child.stdout.resume(), delay))
})
child.on('close', (code) => process.stdout.write('', () => process.exit(code ?? 1)))
`,
  )
  chmodSync(file, 0o755)
  return {ssh: file, setDelay: (ms) => writeFileSync(delayFile, String(ms))}
}

export interface YardProcess {
  pid: number
  done: Promise<{code: number | null; stderr: string}>
}

/** Starts `yard cache add URL` as its own process (the TypeScript sources). */
export function startCacheAdd(url: string, env: Record<string, string>): YardProcess {
  const child = spawn(process.execPath, [devJs, 'cache', 'add', '--', url], {
    env: {...process.env, ...env},
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const done = new Promise<{code: number | null; stderr: string}>((resolve) =>
    child.on('close', (code) => resolve({code, stderr})),
  )
  return {pid: child.pid!, done}
}

/** Runs `yard cache add URL` to its end; resolves its exit code, stderr and wall-clock ms. */
export async function runCacheAdd(
  url: string,
  env: Record<string, string>,
): Promise<{code: number | null; stderr: string; ms: number}> {
  const started = Date.now()
  const result = await startCacheAdd(url, env).done
  return {...result, ms: Date.now() - started}
}

/** What a cache add leaves, without the times: root entries, leases, record, refs, config. */
export function cacheState(root: string, url: string): Record<string, unknown> {
  const {key} = repoIdentity(url)
  const repo = path.join(root, key)
  const record = JSON.parse(readFileSync(path.join(root, `${key}.json`), 'utf8')) as Record<string, unknown>
  return {
    entries: readdirSync(root).sort(),
    leases: readdirSync(path.join(root, `${key}.leases`)).sort(),
    record: {
      ...record,
      added: typeof record.added,
      lastAttempt: typeof record.lastAttempt,
      lastFetched: typeof record.lastFetched,
    },
    head: git(repo, ['symbolic-ref', 'HEAD']),
    refs: git(repo, ['for-each-ref', '--format=%(refname) %(objectname)']),
    config: git(repo, ['config', '--local', '--list']).split('\n').sort(),
    objects: git(repo, ['rev-list', '--objects', '--all']).split('\n').length,
  }
}

/** Processes (not zombies) whose command line names `text` (a cache's path), from /proc. */
export function processesNaming(text: string): number[] {
  const found: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(text)) found.push(Number(name))
    } catch {
      // gone meanwhile
    }
  }

  return found
}

export interface KillPoint {
  /** ms after the clone's marker appeared when yard was killed. */
  afterMarkerMs: number
  /** Whether yard had exited on its own before the kill landed. */
  exitedFirst: boolean
  /** Processes naming the cache (git clone) still running right after the kill. */
  orphans: number
  /** The rerun: exit code, stderr, ms. */
  rerun: {code: number | null; stderr: string; ms: number}
  /** The rerun left the state a clean run leaves. */
  sameState: boolean
  /** No process of the killed run is left after the rerun. */
  orphansGone: boolean
}

/**
 * Kills `yard cache add URL` (kill -9 of yard alone, as a crash would) `afterMarkerMs` after its
 * `<key>.cloning` marker appeared, in a fresh root under `dir`, then runs the same command again
 * and compares the state with `clean` (cacheState of a clean run).
 */
export async function killPoint(
  dir: string,
  url: string,
  env: Record<string, string>,
  afterMarkerMs: number,
  clean: Record<string, unknown>,
  hooks: {beforeRerun?: () => void; rerun?: typeof runCacheAdd} = {},
): Promise<KillPoint> {
  const root = path.join(dir, 'caches')
  const {key} = repoIdentity(url)
  const runEnv = {...env, YARD_CACHE_ROOT: root}
  const yard = startCacheAdd(url, runEnv)
  let exited = false
  void yard.done.then(() => (exited = true))
  const marker = path.join(root, `${key}.cloning`)
  while (!existsSync(marker) && !exited) await sleep(5)
  await sleep(afterMarkerMs)
  const exitedFirst = exited
  if (!exited) process.kill(yard.pid, 'SIGKILL')
  await yard.done
  const orphaned = processesNaming(path.join(root, key))
  hooks.beforeRerun?.()
  const rerun = await (hooks.rerun ?? runCacheAdd)(url, runEnv)
  let sameState: boolean
  try {
    sameState = JSON.stringify(cacheState(root, url)) === JSON.stringify(clean)
  } catch {
    sameState = false
  }

  const left = processesNaming(path.join(root, key))
  return {
    afterMarkerMs,
    exitedFirst,
    orphans: orphaned.length,
    rerun,
    sameState,
    orphansGone: orphaned.every((pid) => !left.includes(pid)),
  }
}
