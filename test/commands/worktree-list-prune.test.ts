import {expect} from 'chai'
import {renameSync, rmSync} from 'node:fs'
import path from 'node:path'

import {cleanupTemp, git, makeRepo, tempDir, writeFile} from '../support/repo.js'
import {cleanEnv, commit, registered, remoteSetup, rootOf} from '../support/worktrees.js'
import {yard} from '../support/yard.js'

describe('yard worktree list (DESIGN.md §4.1, Appendix A)', () => {
  afterEach(cleanupTemp)

  it('lists main first, then the worktrees under the root, with dirty counts, ahead/behind, missing and locked', async () => {
    const setup = remoteSetup({'yard.toml': '[ports]\nAPP_PORT = 3000\n'})
    const env = cleanEnv(setup.stateDir)
    for (const name of ['feat', 'alpha', 'gone', 'held'])
      expect((await yard(['worktree', 'add', name, '--no-fetch'], {cwd: setup.main, env})).exitCode).to.equal(0)
    const root = rootOf(setup.main)
    const feat = path.join(root, 'feat')
    commit(feat, 'one.txt', '1\n')
    commit(feat, 'two.txt', '2\n')
    writeFile(feat, 'develop.txt', 'changed\n')
    writeFile(feat, 'new/a.txt', 'a\n')
    writeFile(feat, 'new/b.txt', 'b\n')
    git(setup.other, 'checkout', '-q', 'develop')
    commit(setup.other, 'upstream.txt', 'u\n')
    git(setup.other, 'push', '-q', 'origin', 'develop')
    git(setup.main, 'fetch', '-q', 'origin')
    rmSync(path.join(root, 'gone'), {recursive: true, force: true})
    git(setup.main, 'worktree', 'lock', path.join(root, 'held'))
    git(setup.main, 'worktree', 'add', '-q', '-b', 'elsewhere', path.join(tempDir('outside'), 'x'))

    const run = await yard(['worktree', 'list', '--json'], {cwd: feat, env})
    expect(run.exitCode, run.stderr).to.equal(0)
    const rows = run.json as Array<Record<string, unknown>>
    expect(rows.map((row) => row.name)).to.deep.equal(['main', 'alpha', 'feat', 'gone', 'held'])
    for (const row of rows)
      expect(Object.keys(row)).to.deep.equal([
        'name',
        'branch',
        'path',
        'head',
        'base',
        'offset',
        'offsetSource',
        'project',
        'dirty',
        'ahead',
        'behind',
        'missing',
        'locked',
        'trust',
      ])
    expect(rows[0]).to.deep.include({
      name: 'main',
      branch: 'wip',
      path: setup.main,
      head: setup.wip,
      base: null,
      offset: 0,
      offsetSource: 'main',
      project: 'app',
      missing: false,
      locked: false,
      trust: 'trusted',
    })
    expect(rows[0]).to.deep.include({ahead: null, behind: null})
    const byName = Object.fromEntries(rows.map((row) => [row.name, row]))
    expect(byName.feat).to.deep.include({
      branch: 'wt/feat',
      path: feat,
      base: 'origin/develop',
      offset: 59,
      offsetSource: 'hash',
      project: 'app-feat',
      dirty: {modified: 1, untracked: 2},
      ahead: 2,
      behind: 1,
      missing: false,
      locked: false,
    })
    expect(byName.alpha).to.deep.include({
      offset: 1,
      offsetSource: 'pin',
      dirty: {modified: 0, untracked: 0},
      ahead: 0,
      behind: 1,
    })
    expect(byName.gone).to.deep.include({missing: true, dirty: null, ahead: 0, behind: 1})
    expect(byName.held).to.deep.include({locked: true, missing: false})

    const text = await yard(['worktree', 'list'], {cwd: setup.main, env})
    expect(text.stdout.split('\n', 1)[0]).to.match(
      /^NAME\s+BRANCH\s+OFFSET\s+DIRTY\s+AHEAD\/BEHIND\s+STACK\s+BOX\s+STATE\s+PATH$/,
    )
    // STACK and BOX: `-` (nothing runs), or `unknown` where the engine cannot be asked.
    expect(text.stdout).to.match(/\nfeat\s+wt\/feat\s+59 hash\s+1M 2U\s+\+2 -1\s+(-|unknown)\s+\1\s+ok\s+/)
    expect(text.stdout).to.match(/\ngone\s+wt\/gone\s+\d+ \w+\s+-\s+\+0 -1\s+(-|unknown)\s+\1\s+missing\s+/)
  })
})

describe('yard worktree prune (DESIGN.md §4.1)', () => {
  afterEach(cleanupTemp)

  it('unregisters only worktrees under the root whose directories are gone, one by one, keeping locked ones and those elsewhere', async () => {
    const repo = makeRepo()
    const env = cleanEnv(tempDir('state'))
    for (const name of ['a', 'b', 'c', 'held'])
      expect((await yard(['worktree', 'add', name], {cwd: repo, env})).exitCode).to.equal(0)
    const root = rootOf(repo)
    const outside = path.join(tempDir('outside'), 'x')
    git(repo, 'worktree', 'add', '-q', '-b', 'elsewhere', outside)
    git(repo, 'worktree', 'lock', path.join(root, 'held'))
    for (const gone of [path.join(root, 'a'), path.join(root, 'b'), path.join(root, 'held'), outside])
      rmSync(gone, {recursive: true, force: true})
    const before = registered(repo)

    const dry = await yard(['worktree', 'prune', '--dry-run', '--json'], {cwd: repo, env})
    expect(dry.exitCode, dry.stderr).to.equal(0)
    expect(dry.json).to.deep.equal([
      {name: 'a', path: path.join(root, 'a'), branch: 'wt/a', action: 'would prune'},
      {name: 'b', path: path.join(root, 'b'), branch: 'wt/b', action: 'would prune'},
      {name: 'held', path: path.join(root, 'held'), branch: 'wt/held', action: 'kept (locked)'},
    ])
    expect(registered(repo)).to.deep.equal(before)

    const run = await yard(['worktree', 'prune'], {cwd: repo, env})
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(run.stdout).to.equal(
      `pruned a (${path.join(root, 'a')})\npruned b (${path.join(root, 'b')})\nkept (locked) held (${path.join(root, 'held')})\n`,
    )
    expect(registered(repo)).to.have.members([repo, path.join(root, 'c'), path.join(root, 'held'), outside])

    const again = await yard(['worktree', 'prune'], {cwd: repo, env})
    expect(again.stdout).to.equal(`kept (locked) held (${path.join(root, 'held')})\n`)
  })

  it('keeps a worktree whose directory is back after a move', async () => {
    const repo = makeRepo()
    const env = cleanEnv(tempDir('state'))
    expect((await yard(['worktree', 'add', 'b'], {cwd: repo, env})).exitCode).to.equal(0)
    const b = path.join(rootOf(repo), 'b')
    const away = path.join(tempDir('unmounted'), 'b')
    renameSync(b, away)
    renameSync(away, b)
    const run = await yard(['worktree', 'prune'], {cwd: repo, env})
    expect(run.stdout).to.include('nothing to prune')
    expect(registered(repo)).to.deep.equal([repo, b])
  })
})
