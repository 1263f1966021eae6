/**
 * Refs read from the files (src/core/workspace/ref-files.ts) against `git for-each-ref` of the
 * same names (readRefs without the files) on the repositories yard meets: loose refs, symbolic
 * refs (origin/HEAD, a chain, a dangling one), tags, a ref under a directory of refs, packed refs
 * with a loose ref newer than its packed line, a bare cache after `repack` and `pack-refs`, a
 * SHA-256 repository; and what it leaves to git (reftable, a symlinked ref, a file git did not
 * write, a name git refuses).
 */
import {expect} from 'chai'
import {mkdirSync, symlinkSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {createContext} from '../../../src/core/kernel/context.js'
import {readRefs} from '../../../src/core/workspace/git.js'
import {readRefFiles} from '../../../src/core/workspace/ref-files.js'
import {cleanupTemp, git, makeRepo, tempDir, writeFile} from '../../support/repo.js'
import {yard} from '../../support/yard.js'

const {runner} = createContext({env: process.env})

/** Every ref git lists and names that hold nothing: a missing ref, a directory of refs, a dangling symref. */
function namesOf(gitDir: string): string[] {
  const refs = git(gitDir, 'for-each-ref', '--format=%(refname)').split('\n').filter(Boolean)
  return [...new Set([...refs, 'refs/heads/missing', 'refs/heads/wt', 'refs/remotes/origin/HEAD', 'refs/heads/gone'])]
}

/** Asserts that the files answer for `names` exactly as `git for-each-ref` does. */
async function expectSameAsGit(gitDir: string, names = namesOf(gitDir)): Promise<void> {
  const fromFiles = readRefFiles(gitDir, names)
  expect(fromFiles, `the files of ${gitDir} answer`).to.not.equal(undefined)
  const fromGit = await readRefs(runner, gitDir, names)
  expect(fromGit.size, 'git found refs').to.be.greaterThan(2)
  expect(Object.fromEntries(fromFiles!)).to.deep.equal(Object.fromEntries(fromGit))
}

/** A main checkout with an origin, loose branches (one under wt/), tags, symbolic refs and a dangling one. */
function repository(): string {
  const repo = makeRepo()
  const origin = path.join(tempDir(), 'origin.git')
  git(repo, 'clone', '-q', '--bare', '--', repo, origin)
  git(repo, 'remote', 'add', 'origin', origin)
  git(repo, 'fetch', '-q', 'origin')
  git(repo, 'remote', 'set-head', 'origin', 'main')
  git(repo, 'tag', '-a', '-m', 'release one', 'v1')
  git(repo, 'tag', 'light')
  writeFile(repo, 'more', 'more\n')
  git(repo, 'add', 'more')
  git(repo, 'commit', '-q', '-m', 'ahead of origin')
  for (const branch of ['wt/a', 'wt/b', 'feature.x']) git(repo, 'branch', branch)
  git(repo, 'symbolic-ref', 'refs/heads/alias', 'refs/heads/main')
  git(repo, 'symbolic-ref', 'refs/heads/alias2', 'refs/heads/alias')
  git(repo, 'symbolic-ref', 'refs/heads/gone', 'refs/heads/never-made')
  return repo
}

describe('refs read from the files (ref-files.ts) against git for-each-ref', function () {
  this.timeout(60_000)

  after(() => cleanupTemp())

  it('a main checkout: loose branches and tags, origin/HEAD, a symref chain, a dangling symref', async () => {
    const repo = repository()
    await expectSameAsGit(path.join(repo, '.git'))
    expect(readRefFiles(path.join(repo, '.git'), ['refs/heads/alias2'])?.get('refs/heads/alias2')).to.deep.equal({
      oid: git(repo, 'rev-parse', 'main'),
      symref: 'refs/heads/main',
    })
  })

  it('after `git pack-refs --all` (peeled tags), with a loose ref newer than its packed line', async () => {
    const repo = repository()
    git(repo, 'pack-refs', '--all')
    git(repo, 'update-ref', 'refs/heads/wt/a', 'HEAD~1')
    git(repo, 'update-ref', '-d', 'refs/heads/wt/b')
    await expectSameAsGit(path.join(repo, '.git'))
  })

  it('a bare cache as the git-cache backend makes one, after `repack -a -d -k` and `pack-refs`', async () => {
    const origin = repository()
    const cache = path.join(tempDir(), 'cache.git')
    git(origin, 'clone', '-q', '--bare', '--no-local', '--', origin, cache)
    git(cache, 'repack', '-a', '-d', '-k', '-q')
    git(cache, 'pack-refs', '--all')
    await expectSameAsGit(cache)
  })

  it('a SHA-256 repository', async () => {
    const repo = path.join(tempDir(), 'sha256')
    mkdirSync(repo)
    git(repo, 'init', '-q', '--object-format=sha256', '-b', 'main')
    writeFile(repo, 'a', 'a\n')
    git(repo, 'add', 'a')
    git(repo, 'commit', '-q', '-m', 'one')
    git(repo, 'branch', 'wt/a')
    git(repo, 'tag', 'light')
    await expectSameAsGit(path.join(repo, '.git'))
  })

  it('leaves to git what it would read otherwise: reftable, a symlinked ref, a file git did not write, an odd name', () => {
    const repo = repository()
    const gitDir = path.join(repo, '.git')
    expect(readRefFiles(gitDir, ['refs/heads/main'])).to.not.equal(undefined)
    for (const name of ['refs/heads/../../config', 'refs/heads/a..b', 'HEAD', 'refs/heads/x.lock', 'refs/heads/ x'])
      expect(readRefFiles(gitDir, ['refs/heads/main', name]), name).to.equal(undefined)
    symlinkSync(path.join(gitDir, 'refs', 'heads', 'main'), path.join(gitDir, 'refs', 'heads', 'linked'))
    expect(readRefFiles(gitDir, ['refs/heads/linked'])).to.equal(undefined)
    writeFileSync(path.join(gitDir, 'refs', 'heads', 'odd'), 'not an id\n')
    expect(readRefFiles(gitDir, ['refs/heads/odd'])).to.equal(undefined)
    writeFileSync(path.join(gitDir, 'packed-refs'), 'garbage line\n')
    expect(readRefFiles(gitDir, ['refs/heads/never'])).to.equal(undefined)
    mkdirSync(path.join(gitDir, 'reftable'))
    expect(readRefFiles(gitDir, ['refs/heads/main'])).to.equal(undefined)
  })

  it('`yard worktree add --no-fetch` asks git no for-each-ref, check-ref-format or rev-parse (issue 15: five git processes)', async () => {
    const repo = repository()
    const run = await yard(['worktree', 'add', 'feat', '--no-fetch', '--verbose'], {
      cwd: repo,
      env: {YARD_STATE_DIR: tempDir('yard-ref-files-state')},
    })
    expect(run.exitCode, run.stderr).to.equal(0)
    const gits = run.stderr
      .split('\n')
      .filter((line) => line.startsWith('+ git '))
      .map((line) => line.replace(/^\+ git (-c \S+ )*/, '').split(' ', 1)[0])
    expect(gits.sort()).to.deep.equal(['config', 'config', 'ls-files', 'worktree', 'worktree'])
  })
})
