/**
 * The in-process reader (src/sdk/git-read.ts) against the git CLI on every kind of repository
 * yard's tests build: loose refs, packed refs (`pack-refs --all`, a loose ref over its packed
 * one), symbolic refs, annotated and lightweight tags, a bare cache as the git-cache backend
 * makes one (`clone --bare --no-local`, its refspecs) after `repack -a -d -k`, a `clone --shared`
 * workspace (alternates), the main checkout of a repository with linked worktrees; and what it
 * refuses (a linked worktree's git dir, includes, per-worktree config, negative refspecs).
 */
import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import {appendFileSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {createContext} from '../../src/core/kernel/context.js'
import {branchConfig} from '../../src/core/workspace/git.js'
import {listWorktrees} from '../../src/core/worktree/list.js'
import {openGitReader, readableConfig, trackingRef} from '../../src/sdk/git-read.js'
import {addWorktree, cleanupTemp, git, makeRepo, tempDir, writeFile} from '../support/repo.js'
import {projectRoot} from '../support/yard.js'

/** What git answers for `name` (`rev-parse --verify --quiet`: no peeling), or undefined. */
function gitResolve(gitDir: string, name: string): string | undefined {
  try {
    return git(gitDir, 'rev-parse', '--verify', '--quiet', name) || undefined
  } catch {
    return undefined
  }
}

/** Every ref git lists, HEAD, and the short names git's rules expand (and two that name nothing). */
function namesOf(gitDir: string): string[] {
  const refs = git(gitDir, 'for-each-ref', '--format=%(refname)').split('\n').filter(Boolean)
  const short = refs.map((ref) => ref.replace(/^refs\/(heads|tags|remotes)\//, ''))
  return [
    ...new Set([
      'HEAD',
      ...refs,
      ...short,
      'origin',
      'refs/heads/missing',
      'no/such/ref',
      git(gitDir, 'rev-parse', 'HEAD'),
    ]),
  ]
}

/** `%(upstream)` of every local branch that has one. */
function gitUpstreams(gitDir: string): Map<string, string> {
  const lines = git(gitDir, 'for-each-ref', '--format=%(refname:lstrip=2)%00%(upstream)', 'refs/heads/').split('\n')
  return new Map(lines.map((line) => line.split('\0') as [string, string]).filter(([, upstream]) => upstream))
}

/** Asserts that the reader of `gitDir` answers as git does for refs, branch config and upstreams. */
async function expectSameAsGit(gitDir: string): Promise<void> {
  const reader = await openGitReader(gitDir)
  expect(reader, `a reader of ${gitDir}`).to.not.equal(undefined)
  for (const name of namesOf(gitDir))
    expect(await reader!.resolve(name), `resolve ${name}`).to.equal(gitResolve(gitDir, name))
  const {runner} = createContext({env: process.env})
  for (const key of ['yardBase', 'merge', 'remote']) {
    expect(Object.fromEntries(await reader!.branchConfig(key)), `branch.*.${key}`).to.deep.equal(
      Object.fromEntries(await branchConfig(runner, gitDir, key.toLowerCase())),
    )
  }

  const branches = git(gitDir, 'for-each-ref', '--format=%(refname:lstrip=2)', 'refs/heads/')
    .split('\n')
    .filter(Boolean)
  expect(Object.fromEntries((await reader!.upstreams(branches))!), 'upstreams').to.deep.equal(
    Object.fromEntries(gitUpstreams(gitDir)),
  )
}

/**
 * A main checkout with an origin, `origin/HEAD`, branches ahead and behind, tags of both kinds, a
 * symbolic branch, and branch config of every shape the readers meet.
 */
function richRepo(): {repo: string; origin: string} {
  const repo = makeRepo({'yard.toml': '[project]\nprefix = "gitread"\n'})
  const origin = path.join(path.dirname(repo), 'origin.git')
  git(repo, 'clone', '-q', '--bare', '--', repo, origin)
  git(repo, 'remote', 'add', 'origin', origin)
  git(repo, 'fetch', '-q', 'origin')
  git(repo, 'remote', 'set-head', 'origin', 'main')
  git(repo, 'tag', '-a', '-m', 'release one', 'v1')
  git(repo, 'tag', 'light')
  writeFile(repo, 'more', 'more\n')
  git(repo, 'add', 'more')
  git(repo, 'commit', '-q', '-m', 'ahead of origin')
  for (const branch of [
    'wt/a',
    'feature.x',
    'dot',
    'no-remote',
    'short-merge',
    'ghost-remote',
    'gone-upstream',
    'MiXed',
  ])
    git(repo, 'branch', branch)
  git(repo, 'symbolic-ref', 'refs/heads/alias', 'refs/heads/main')
  git(repo, 'config', 'branch.main.remote', 'origin')
  git(repo, 'config', 'branch.main.merge', 'refs/heads/main')
  git(repo, 'config', 'branch.wt/a.yardBase', 'refs/remotes/origin/main')
  git(repo, 'config', 'branch.feature.x.yardBase', 'refs/heads/main')
  git(repo, 'config', 'branch.feature.x.remote', 'origin')
  git(repo, 'config', 'branch.feature.x.merge', 'refs/heads/feature.x')
  git(repo, 'config', 'branch.dot.remote', '.')
  git(repo, 'config', 'branch.dot.merge', 'refs/heads/main')
  git(repo, 'config', 'branch.no-remote.merge', 'refs/heads/main')
  git(repo, 'config', 'branch.short-merge.remote', 'origin')
  git(repo, 'config', 'branch.short-merge.merge', 'main')
  git(repo, 'config', 'branch.ghost-remote.remote', 'nowhere')
  git(repo, 'config', 'branch.ghost-remote.merge', 'refs/heads/main')
  git(repo, 'config', 'branch.gone-upstream.remote', 'origin')
  git(repo, 'config', 'branch.gone-upstream.merge', 'refs/heads/never-pushed')
  // Keys as people type them: mixed case, quoted, with a comment, given twice (the last wins).
  appendFileSync(
    path.join(repo, '.git', 'config'),
    '[branch "MiXed"]\n\tYardBase = "refs/heads/main" ; recorded by hand\n\tyardbase = refs/remotes/origin/main\n',
  )
  // A second fetch refspec before the usual one: the first that matches wins.
  git(repo, 'config', '--add', 'remote.origin.fetch', '+refs/heads/feat*.x:refs/remotes/origin/special/*')
  return {repo, origin}
}

describe('in-process git reads (isomorphic-git) against the git CLI', function () {
  this.timeout(30_000)

  afterEach(cleanupTemp)

  it('a main checkout with loose refs, symbolic refs, tags and branch config', async () => {
    const {repo} = richRepo()
    await expectSameAsGit(path.join(repo, '.git'))
  })

  it('the same after `git pack-refs --all` (peeled tags), with a loose ref newer than its packed one', async () => {
    const {repo} = richRepo()
    git(repo, 'pack-refs', '--all')
    git(repo, 'update-ref', 'refs/heads/wt/a', 'HEAD~1')
    await expectSameAsGit(path.join(repo, '.git'))
  })

  it('a bare cache made as the git-cache backend makes one, after `repack -a -d -k` and pack-refs', async () => {
    const {origin} = richRepo()
    const cache = path.join(tempDir(), 'cache.git')
    git(origin, 'clone', '-q', '--bare', '--no-local', '--', origin, cache)
    git(cache, 'config', '--replace-all', 'remote.origin.fetch', '+refs/heads/*:refs/heads/*')
    git(cache, 'config', '--add', 'remote.origin.fetch', '+refs/tags/*:refs/tags/*')
    git(cache, 'fetch', '-q', 'origin')
    git(cache, 'repack', '-a', '-d', '-k', '-q')
    git(cache, 'pack-refs', '--all')
    await expectSameAsGit(cache)
  })

  it('a `clone --shared` workspace (objects through alternates): refs and config are its own', async () => {
    const {origin} = richRepo()
    const workspace = path.join(tempDir(), 'default')
    git(origin, 'clone', '-q', '--shared', '--', origin, workspace)
    git(workspace, 'config', 'branch.main.yardBase', 'refs/remotes/origin/main')
    await expectSameAsGit(path.join(workspace, '.git'))
  })

  it("the main checkout of a repository with linked worktrees; a linked worktree's git dir is refused", async () => {
    const {repo} = richRepo()
    const linked = addWorktree(repo, 'one')
    git(linked, 'commit', '-q', '--allow-empty', '-m', 'in the worktree')
    await expectSameAsGit(path.join(repo, '.git'))
    expect(await openGitReader(git(linked, 'rev-parse', '--absolute-git-dir'))).to.equal(undefined)
  })

  it('refuses what it would read otherwise than git: includes, continued lines, [section.sub], worktree config', async () => {
    for (const text of [
      '[include]\n\tpath = other\n',
      '[includeIf "gitdir:/x/"]\n\tpath = other\n',
      '[branch "a"]\n\tyardBase = refs/heads/\\\nmain\n',
      '[branch.a]\n\tyardBase = x\n',
      '[Branch "a"]\n\tyardBase = x\n',
      '[branch "a"] yardBase = x\n',
    ]) {
      expect(readableConfig(text), text).to.equal(false)
    }

    expect(
      readableConfig('# comment\n[core]\n\tbare = false\n[branch "wt/a"] # note\n\tyardBase = "refs/heads/main"\n'),
    ).to.equal(true)
    const {repo} = richRepo()
    git(repo, 'config', 'extensions.worktreeConfig', 'true')
    expect(await openGitReader(path.join(repo, '.git'))).to.equal(undefined)
  })

  it('leaves upstreams to git when a remote has a negative refspec', async () => {
    const {repo} = richRepo()
    git(repo, 'config', '--add', 'remote.origin.fetch', '^refs/heads/main')
    expect(await (await openGitReader(path.join(repo, '.git')))!.upstreams()).to.equal(undefined)
  })

  it('maps a branch to its remote-tracking ref by the first matching refspec (remote.c query_refspecs)', () => {
    expect(trackingRef(['+refs/heads/*:refs/remotes/origin/*'], 'refs/heads/a/b')).to.equal('refs/remotes/origin/a/b')
    expect(
      trackingRef(['+refs/heads/m*n:refs/remotes/o/x*y', '+refs/heads/*:refs/remotes/origin/*'], 'refs/heads/main'),
    ).to.equal('refs/remotes/o/xaiy')
    expect(trackingRef(['refs/heads/main:refs/remotes/origin/main'], 'refs/heads/other')).to.equal(undefined)
    expect(trackingRef(['refs/heads/main'], 'refs/heads/main')).to.equal(undefined)
  })

  it('worktree list reads the same in process as through git (at base, ahead, behind its upstream)', async () => {
    const {repo} = richRepo()
    const atBase = addWorktree(repo, 'at-base')
    git(repo, 'config', 'branch.wt/at-base.yardBase', 'refs/heads/main')
    const ahead = addWorktree(repo, 'ahead')
    git(repo, 'config', 'branch.wt/ahead.yardBase', 'refs/heads/main')
    git(ahead, 'commit', '-q', '--allow-empty', '-m', 'ahead')
    const behind = addWorktree(repo, 'behind')
    git(repo, 'config', 'branch.wt/behind.remote', '.')
    git(repo, 'config', 'branch.wt/behind.merge', 'refs/heads/main')
    git(behind, 'reset', '-q', '--hard', 'HEAD~1')
    writeFileSync(path.join(atBase, 'untracked'), 'x\n')
    const context = createContext({
      env: {...process.env, YARD_WORKTREE: undefined, WT_OFFSET: undefined},
      cwd: repo,
      warn() {},
    })
    const throughGit = await listWorktrees(context)
    const inProcess = await listWorktrees(context, {inProcess: true})
    expect(inProcess).to.deep.equal(throughGit)
    const byName = new Map(inProcess.map((row) => [row.name, row]))
    expect([byName.get('at-base')?.ahead, byName.get('ahead')?.ahead, byName.get('behind')?.behind]).to.deep.equal([
      0, 1, 1,
    ])
  })

  it('a one-shot listing of many checkouts at their base runs rev-list only for the others', async () => {
    const {repo} = richRepo()
    for (let index = 0; index < 9; index++) {
      addWorktree(repo, `at-${index}`)
      git(repo, 'config', `branch.wt/at-${index}.yardBase`, 'refs/heads/main')
    }

    const ahead = addWorktree(repo, 'ahead')
    git(repo, 'config', 'branch.wt/ahead.yardBase', 'refs/heads/main')
    git(ahead, 'commit', '-q', '--allow-empty', '-m', 'ahead')
    const argvs: string[] = []
    const context = createContext({
      env: {...process.env, YARD_WORKTREE: undefined, WT_OFFSET: undefined},
      cwd: repo,
      warn() {},
      verbose: true,
      log: (line) => argvs.push(line),
    })
    const rows = await listWorktrees(context)
    expect(rows.filter((row) => row.name.startsWith('at-')).map((row) => [row.ahead, row.behind])).to.deep.equal(
      Array.from({length: 9}, () => [0, 0]),
    )
    expect(rows.find((row) => row.name === 'ahead')).to.include({ahead: 1, behind: 0})
    // main (ahead of origin/main) and the worktree ahead of its base.
    expect(argvs.filter((line) => line.startsWith('+ git rev-list'))).to.have.length(2)
  })

  it('one-shot commands never load isomorphic-git: `worktree list` and `worktree add` ask git', () => {
    const {repo} = richRepo()
    const record = path.join(tempDir('yardtest-git-read-imports'), 'imports.txt')
    const env = {
      ...process.env,
      YARD_STATE_DIR: tempDir('yardtest-git-read-state'),
      YARD_WORKTREE: undefined,
      WT_OFFSET: undefined,
      RECORD_IMPORTS_FILE: record,
    }
    for (const args of [
      ['worktree', 'list', '--json'],
      ['worktree', 'add', 'lazy', '--no-fetch'],
    ]) {
      const run = spawnSync(
        process.execPath,
        [
          '--import',
          path.join(projectRoot, 'test', 'support', 'record-imports.mjs'),
          path.join(projectRoot, 'bin', 'dev.js'),
          ...args,
        ],
        {cwd: repo, env, encoding: 'utf8'},
      )
      expect(run.status, run.stderr).to.equal(0)
    }

    const loaded = readFileSync(record, 'utf8').split('\n')
    expect(
      loaded.some((url) => url.includes('/src/core/worktree/list.ts')),
      'the commands were recorded',
    ).to.equal(true)
    expect(loaded.filter((url) => url.includes('/node_modules/isomorphic-git/'))).to.deep.equal([])
  })
})
