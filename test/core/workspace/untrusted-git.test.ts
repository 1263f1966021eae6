/**
 * git in an untrusted worktree goes through the repository's own record of it (git-link.ts
 * untrustedGit), never through the checkout's `.git`: its box can swap that file after yard
 * checked it and before git reads it, and git would obey the config of the directory it names
 * (here a clean filter, which `git status` and `git add` run on a stat-dirty file). Each reader is
 * called with the link already swapped, as the race leaves it.
 */
import {expect} from 'chai'
import {existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {adminDirOf, untrustedGit} from '../../../src/core/workspace/git-link.js'
import {dirtyCounts} from '../../../src/core/workspace/git.js'
import {findOutsideWork} from '../../../src/core/worktree/removal-archive.js'
import {snapshotWorktree} from '../../../src/core/worktree/snapshot.js'
import {RefusedError} from '../../../src/sdk/errors.js'
import {ProcessRunner} from '../../../src/sdk/process.js'
import {addWorktree, cleanupTemp, git, makeRepo, tempDir, writeFile} from '../../support/repo.js'

describe("untrusted worktrees: host git never reads the checkout's .git", () => {
  const runner = new ProcessRunner()
  let repo: string
  let checkout: string
  let commonDir: string
  let marker: string
  let original: string

  /** What the box writes: a repository of its own with a filter that runs a command, the link pointing at it. */
  function swapLink(): void {
    const evil = path.join(checkout, '.evil')
    for (const dir of ['objects', 'refs']) mkdirSync(path.join(evil, dir), {recursive: true})
    writeFileSync(path.join(evil, 'HEAD'), 'ref: refs/heads/main\n')
    writeFileSync(path.join(evil, 'config'), '[core]\n\trepositoryformatversion = 0\n')
    // Its index holds a.txt, so that git compares the file in the checkout with it.
    git(checkout, `--git-dir=${evil}`, `--work-tree=${checkout}`, 'add', 'a.txt')
    writeFileSync(
      path.join(evil, 'config'),
      `[core]\n\trepositoryformatversion = 0\n\tattributesFile = ${path.join(checkout, '.attrs')}\n[filter "x"]\n\tclean = "sh -c 'touch ${marker}; cat'"\n`,
    )
    writeFileSync(path.join(checkout, '.attrs'), '* filter=x\n')
    // Stat-dirty: git must read the file again (through the filter) to compare it.
    const old = new Date('2001-01-01T00:00:00Z')
    utimesSync(path.join(checkout, 'a.txt'), old, old)
    writeFileSync(path.join(checkout, '.git'), `gitdir: ${evil}\n`)
  }

  before(() => {
    repo = makeRepo({'a.txt': 'a\n', 'b.txt': 'b\n'})
    checkout = addWorktree(repo, 'pr-1')
    commonDir = path.join(repo, '.git')
    marker = path.join(tempDir('untrusted-git'), 'ran')
    original = readFileSync(path.join(checkout, '.git'), 'utf8')
    writeFile(checkout, 'new.txt', 'untracked\n')
    swapLink()
  })

  after(() => {
    writeFileSync(path.join(checkout, '.git'), original)
    cleanupTemp()
  })

  it("finds the worktree's administrative directory from the repository's side", () => {
    expect(adminDirOf(commonDir, checkout)).to.equal(path.join(commonDir, 'worktrees', 'pr-1'))
    expect(untrustedGit(commonDir, checkout).slice(0, 2)).to.deep.equal([
      `--git-dir=${path.join(commonDir, 'worktrees', 'pr-1')}`,
      `--work-tree=${checkout}`,
    ])
    expect(() => untrustedGit(commonDir, repo)).to.throw(RefusedError, 'no worktree of')
  })

  it('status, the removal listing and the snapshot read the real repository and run no filter of the box', async () => {
    // a.txt is unchanged in the real repository; new.txt, .attrs and the box's files are untracked.
    const counts = await dirtyCounts(runner, checkout, {untrusted: {commonDir}})
    const admin = path.join(commonDir, 'worktrees', 'pr-1')
    const real = git(checkout, `--git-dir=${admin}`, `--work-tree=${checkout}`, 'status', '--porcelain', '-uall')
    expect(counts).to.deep.equal({modified: 0, untracked: real.split('\n').length})
    expect(real).to.include('?? new.txt')
    const outside = await findOutsideWork(runner, checkout, ['*.keep'], repo, {untrusted: {commonDir}})
    expect(outside.uninspected).to.deep.equal([])
    const context = {runner, env: process.env, warn() {}, log() {}} as unknown as Parameters<typeof snapshotWorktree>[0]
    const ref = await snapshotWorktree(context, checkout, 'pr-1', {changes: true, untrusted: {commonDir}})
    expect(git(repo, 'show', '--format=%s', '-s', ref)).to.include('uncommitted work of worktree pr-1')
    expect(git(repo, 'show', `${ref}:new.txt`)).to.equal('untracked')
    expect(existsSync(marker), "git ran the box's filter").to.equal(false)
  })

  it('the same status without the pinning would have run it (the test can fail)', async () => {
    await dirtyCounts(runner, checkout).catch(() => undefined)
    expect(existsSync(marker)).to.equal(true)
  })
})
