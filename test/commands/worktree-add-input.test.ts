import {expect} from 'chai'
import {existsSync, mkdirSync} from 'node:fs'
import path from 'node:path'

import {cleanupTemp, git, makeRepo, tempDir, writeFile} from '../support/repo.js'
import {cleanEnv, hasBranch, registered, remoteSetup, rootOf} from '../support/worktrees.js'
import {yard} from '../support/yard.js'

describe('worktree add: branches, offsets and paths yard refuses (exit 2, nothing created)', () => {
  afterEach(cleanupTemp)

  it('refuses HEAD as a branch, as BRANCH and as --branch (origin/HEAD exists, so git itself would fail with exit 1)', async () => {
    const setup = remoteSetup()
    const env = cleanEnv(setup.stateDir)
    const before = git(setup.main, 'for-each-ref')
    for (const args of [
      ['worktree', 'add', 'b1', 'HEAD'],
      ['worktree', 'add', '--branch', 'HEAD'],
    ]) {
      const run = await yard([...args, '--no-fetch'], {cwd: setup.main, env})
      expect(run.exitCode, `${args.join(' ')}: ${run.stderr}`).to.equal(2)
      expect(run.stderr).to.contain('invalid branch name "HEAD"')
    }

    expect(git(setup.main, 'for-each-ref')).to.equal(before)
    expect(registered(setup.main)).to.deep.equal([setup.main])
  })

  it("refuses a BRANCH that is a remote-tracking branch's short name, or @, suggesting --from", async () => {
    const setup = remoteSetup()
    const env = cleanEnv(setup.stateDir)
    git(setup.main, 'remote', 'add', 'up/stream', setup.origin)
    git(setup.main, 'fetch', '-q', 'up/stream')
    for (const branch of ['origin/main', 'origin/HEAD', 'up/stream/develop']) {
      const run = await yard(['worktree', 'add', 'x', branch, '--no-fetch'], {cwd: setup.main, env})
      expect(run.exitCode, `${branch}: ${run.stderr}`).to.equal(2)
      expect(run.stderr).to.contain(
        `invalid branch "${branch}": it is the name of the remote-tracking branch ${branch}`,
      )
      expect(run.stderr).to.contain(`yard worktree add x --from ${branch}`)
      expect(hasBranch(setup.main, branch)).to.equal(false)
    }

    const at = await yard(['worktree', 'add', 'x', '@', '--no-fetch'], {cwd: setup.main, env})
    expect(at.exitCode, at.stderr).to.equal(2)
    expect(at.stderr).to.contain('invalid branch name "@"')
    expect(git(setup.main, 'for-each-ref', '--format=%(refname)', 'refs/heads')).to.equal(
      'refs/heads/develop\nrefs/heads/main\nrefs/heads/wip',
    )
    expect(existsSync(rootOf(setup.main))).to.equal(false)
    // A branch of that name made by hand is checked out as it is.
    git(setup.main, 'branch', '-q', 'origin/main', 'origin/main')
    const existing = await yard(['worktree', 'add', 'x', 'origin/main', '--no-fetch', '--json'], {cwd: setup.main, env})
    expect(existing.exitCode, existing.stderr).to.equal(0)
    expect(existing.json).to.deep.include({branch: 'origin/main', branchSource: 'existing'})
  })

  it('refuses <remote>/HEAD before git remote set-head made it, and a BRANCH starting with refs/', async () => {
    const repo = makeRepo()
    const env = cleanEnv(tempDir('state'))
    git(repo, 'remote', 'add', 'upstream', tempDir('nowhere'))
    const before = git(repo, 'for-each-ref')
    const head = await yard(['worktree', 'add', 'x', 'upstream/HEAD', '--no-fetch'], {cwd: repo, env})
    expect(head.exitCode, head.stderr).to.equal(2)
    expect(head.stderr).to.contain(
      'invalid branch "upstream/HEAD": it is the name of the remote-tracking branch upstream/HEAD',
    )
    for (const branch of ['refs/heads/x', 'refs/remotes/upstream/main']) {
      const run = await yard(['worktree', 'add', 'x', '--branch', branch, '--no-fetch'], {cwd: repo, env})
      expect(run.exitCode, `${branch}: ${run.stderr}`).to.equal(2)
      expect(run.stderr).to.contain(`invalid branch name "${branch}"`)
    }

    expect(git(repo, 'for-each-ref')).to.equal(before)
    expect(existsSync(rootOf(repo))).to.equal(false)
  })

  it('escapes an escape sequence in a path it prints (the worktrees root), so it cannot drive the terminal', async () => {
    const repo = makeRepo()
    const root = path.join(tempDir('roots'), 'a\u001B]0;owned\u0007b')
    const env = {...cleanEnv(tempDir('state')), YARD_WORKTREES_ROOT: root}
    const run = await yard(['worktree', 'add', 'feat'], {cwd: repo, env})
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(existsSync(path.join(root, 'feat'))).to.equal(true)
    expect(run.stdout).to.contain(String.raw`a\x1b]0;owned\x07b`)
    expect(run.stdout).not.to.match(/[\u001B\u0007]/)
  })

  it('refuses a float pin (a = 3.0 is no integer), and says "out of range" for WT_OFFSET=-1', async () => {
    const repo = makeRepo()
    const env = cleanEnv(tempDir('state'))
    writeFile(repo, 'yard.local.toml', '[worktree-offsets]\na = 3.0\n')
    const pinned = await yard(['ports', '--worktree', 'a'], {cwd: repo, env})
    expect(pinned.exitCode, pinned.stderr).to.equal(2)
    expect(pinned.stderr).to.contain(
      `invalid offset 3.0 from ${path.join(repo, 'yard.local.toml')} [worktree-offsets] a: a float`,
    )
    writeFile(repo, 'yard.local.toml', '')
    const negative = await yard(['ports', '--worktree', 'a'], {cwd: repo, env: {...env, WT_OFFSET: '-1'}})
    expect(negative.exitCode, negative.stderr).to.equal(2)
    expect(negative.stderr).to.contain('invalid offset "-1" from env WT_OFFSET: out of range (1 to 89)')
  })

  it('refuses an invalid WT_OFFSET also when the target is main (its offset stays 0 for a valid one)', async () => {
    const repo = makeRepo()
    const env = cleanEnv(tempDir('state'))
    const invalid = await yard(['ports'], {cwd: repo, env: {...env, WT_OFFSET: 'abc'}})
    expect(invalid.exitCode, invalid.stderr).to.equal(2)
    expect(invalid.stderr).to.contain('invalid offset "abc" from env WT_OFFSET: not an integer')
    const valid = await yard(['ports', '--json'], {cwd: repo, env: {...env, WT_OFFSET: '7'}})
    expect(valid.exitCode, valid.stderr).to.equal(0)
    expect(valid.json).to.deep.include({offset: 0, offsetSource: 'main'})
  })

  it('refuses a main checkout whose path holds a newline, clearly, instead of misreading it', async () => {
    const parent = path.join(tempDir('newline'), 'my\napp')
    mkdirSync(parent)
    const repo = makeRepo()
    git(parent, 'clone', '-q', repo, 'app')
    const main = path.join(parent, 'app')
    const run = await yard(['worktree', 'add', 'feat', '--no-fetch'], {cwd: main, env: cleanEnv(tempDir('state'))})
    expect(run.exitCode, run.stderr).to.equal(2)
    expect(run.stderr).to.contain('the path of this repository holds a newline')
    expect(existsSync(path.join(parent, 'app-worktrees'))).to.equal(false)
  })
})
