/**
 * Fixtures for git-cache tests: local bare upstreams (no network) whose commits are made with
 * plumbing (a few milliseconds each), and GitCache instances whose runner records every argv.
 */
import {execFileSync} from 'node:child_process'
import {createHash} from 'node:crypto'
import {mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {crc32, deflateSync} from 'node:zlib'

import type {BackendContext} from '../../../src/sdk/target.js'

import {GitCache} from '../../../src/plugins/git-cache/cache.js'
import {cachePaths, type CachePaths} from '../../../src/plugins/git-cache/layout.js'
import {type CacheBudgets, DEFAULT_BUDGETS} from '../../../src/plugins/git-cache/repository.js'
import {ProcessRunner} from '../../../src/sdk/process.js'
import {repoIdentity} from '../../../src/sdk/repo-identity.js'
import {tempDir} from '../../support/repo.js'

export const gitEnv = {
  ...process.env,
  GIT_TERMINAL_PROMPT: '0',
  LC_ALL: 'C',
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 't@example.com',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 't@example.com',
}

/** Runs git in `cwd` (input on stdin); returns trimmed stdout. */
export function git(cwd: string, args: string[], input?: string): string {
  return execFileSync('git', args, {cwd, input, encoding: 'utf8', env: gitEnv, stdio: ['pipe', 'pipe', 'pipe']}).trim()
}

/** Whether `git cat-file -e` finds the object in `repo`. */
export function hasObject(repo: string, oid: string): boolean {
  try {
    execFileSync('git', ['cat-file', '-e', oid], {cwd: repo, env: gitEnv, stdio: 'ignore'})
    return true
  } catch {
    return false
  }
}

/** The ids among `oids` that `repo` cannot read (one `git cat-file --batch-check`). */
export function missingObjects(repo: string, oids: string[]): string[] {
  const lines = git(repo, ['cat-file', '--batch-check=%(objectname)'], oids.join('\n') + '\n').split('\n')
  return lines.filter((line) => line.endsWith(' missing')).map((line) => line.split(' ', 1)[0])
}

/**
 * A commit on `branch` of a bare repository, made with plumbing: one file `<name>` with
 * `content`, on top of `parent` (default: the branch's tip, none when the branch is new).
 * @returns the commit's id.
 */
export function commitTo(bare: string, branch: string, name: string, content: string, parent?: string | null): string {
  const blob = git(bare, ['hash-object', '-w', '--stdin'], content)
  const tree = git(bare, ['mktree'], `100644 blob ${blob}\t${name}\n`)
  let base = parent
  if (base === undefined) {
    try {
      base = git(bare, ['rev-parse', '--verify', '-q', `refs/heads/${branch}`])
    } catch {
      base = null
    }
  }

  const commit = git(bare, [
    'commit-tree',
    tree,
    ...(base ? ['-p', base] : []),
    '-m',
    `${name}: ${content.slice(0, 20)}`,
  ])
  git(bare, ['update-ref', `refs/heads/${branch}`, commit])
  return commit
}

/**
 * `count` commits in a chain on top of `parent`, each changing one tiny file, written with one
 * `git fast-import` under `refs/pending/chain` (outside the cache's refspecs): moving a branch
 * to the next one later costs one `update-ref`.
 * @returns the commit ids, oldest first.
 */
export function chainCommits(bare: string, parent: string, count: number): string[] {
  const marks = path.join(bare, 'chain-marks')
  let stream = ''
  for (let index = 1; index <= count; index++) {
    const content = `${index}\n`
    stream += `blob\nmark :${2 * index - 1}\ndata ${Buffer.byteLength(content)}\n${content}\n`
    stream += `commit refs/pending/chain\nmark :${2 * index}\ncommitter Test <t@example.com> ${1_700_000_000 + index} +0000\ndata 8\ncounter\n`
    stream += index === 1 ? `from ${parent}\n` : ''
    stream += `M 100644 :${2 * index - 1} counter\n\n`
  }

  git(bare, ['fast-import', '--quiet', `--export-marks=${marks}`], stream)
  const ids = new Map(
    readFileSync(marks, 'utf8')
      .trim()
      .split('\n')
      .map((line) => line.slice(1).split(' ') as [string, string]),
  )
  return Array.from({length: count}, (_, index) => ids.get(String(2 * index + 2))!)
}

/** A bare upstream `<tmp>/<name>.git` with one commit on main (HEAD → main). */
export function makeUpstream(name = 'app'): string {
  const bare = path.join(tempDir('yard-upstream'), `${name}.git`)
  mkdirSync(bare)
  git(bare, ['init', '-q', '--bare', '-b', 'main'])
  commitTo(bare, 'main', 'README', 'first\n', null)
  return bare
}

export interface Harness {
  cache: GitCache
  root: string
  /** Every argv the cache's runner ran, in order. */
  argvs: string[][]
  warnings: string[]
  /** The paths of the cache of `url` under this root. */
  paths(url: string): CachePaths
}

/** A GitCache over a fresh root, recording argv and warnings; budgets may be shortened. */
export function harness(
  options: {
    budgets?: Partial<CacheBudgets>
    env?: Record<string, string>
    root?: string
    onSpawn?: (argv: string[]) => void
    Runner?: typeof ProcessRunner
  } = {},
): Harness {
  const argvs: string[][] = []
  const warnings: string[] = []
  const root = options.root ?? path.join(tempDir('yard-caches'), 'caches')
  const runner = new (options.Runner ?? ProcessRunner)({
    env: {...gitEnv, ...options.env},
    onSpawn(argv) {
      argvs.push(argv)
      options.onSpawn?.(argv)
    },
  })
  const context: BackendContext = {
    runner,
    env: {...gitEnv, ...options.env},
    stateDir: path.dirname(root),
    warn: (message) => warnings.push(message),
  }
  const cache = new GitCache(context, {...DEFAULT_BUDGETS, ...options.budgets})
  return {cache, root, argvs, warnings, paths: (url) => cachePaths(root, repoIdentity(url).key)}
}

/** `git config --local --list` of a repository as `key=value` lines (keys as git prints them). */
export function localConfig(repo: string): string[] {
  return git(repo, ['config', '--local', '--list']).split('\n')
}

export const PIN_LINES = [
  'gc.auto=0',
  'gc.pruneexpire=never',
  'maintenance.auto=false',
  'protocol.version=2',
  'repack.writebitmaps=false',
  'remote.origin.fetch=+refs/heads/*:refs/heads/*',
  'remote.origin.fetch=+refs/tags/*:refs/tags/*',
]

/** Writes a loose blob straight into `repo`'s object directory (as git would); returns its id. */
export function writeLooseBlob(repo: string, content: string): string {
  const body = Buffer.concat([Buffer.from(`blob ${Buffer.byteLength(content)}\0`), Buffer.from(content)])
  const oid = createHash('sha1').update(body).digest('hex')
  const dir = path.join(repo, 'objects', oid.slice(0, 2))
  mkdirSync(dir, {recursive: true})
  writeFileSync(path.join(dir, oid.slice(2)), deflateSync(body))
  return oid
}

/**
 * Writes a pack holding one blob, and its version-2 index, straight into `repo`'s
 * `objects/pack/` (the formats of gitformat-pack(5)); returns the blob's id.
 */
export function writeBlobPack(repo: string, content: string): string {
  const data = Buffer.from(content)
  const oid = createHash('sha1')
    .update(Buffer.concat([Buffer.from(`blob ${data.length}\0`), data]))
    .digest()
  // Object header: type 3 (blob) and the size, 4 bits then 7 bits per byte.
  const header: number[] = []
  let size = data.length
  let byte = (3 << 4) | (size & 0x0f)
  size >>= 4
  while (size > 0) {
    header.push(byte | 0x80)
    byte = size & 0x7f
    size >>= 7
  }

  header.push(byte)
  const entry = Buffer.concat([Buffer.from(header), deflateSync(data)])
  const packHead = Buffer.alloc(12)
  packHead.write('PACK', 0)
  packHead.writeUInt32BE(2, 4)
  packHead.writeUInt32BE(1, 8)
  const packBody = Buffer.concat([packHead, entry])
  const packSum = createHash('sha1').update(packBody).digest()
  const fanout = Buffer.alloc(256 * 4)
  for (let index = oid[0]; index < 256; index++) fanout.writeUInt32BE(1, index * 4)
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(entry) >>> 0)
  const offset = Buffer.alloc(4)
  offset.writeUInt32BE(12)
  const idxBody = Buffer.concat([Buffer.from([0xff, 0x74, 0x4f, 0x63, 0, 0, 0, 2]), fanout, oid, crc, offset, packSum])
  const name = path.join(repo, 'objects', 'pack', `pack-${packSum.toString('hex')}`)
  mkdirSync(path.dirname(name), {recursive: true})
  writeFileSync(`${name}.pack`, Buffer.concat([packBody, packSum]))
  writeFileSync(`${name}.idx`, Buffer.concat([idxBody, createHash('sha1').update(idxBody).digest()]))
  return oid.toString('hex')
}
