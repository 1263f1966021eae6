/**
 * `yard worktree remove` in the states where work lives outside the branch and the files git
 * tracks: a HEAD on no branch, submodules, nested repositories, ignored files. Each refuses
 * without --force; with it, the work is back after running exactly what remove printed.
 */
import {expect} from 'chai'
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {cleanupTemp, git} from '../support/repo.js'
import {printedAfter, runPrinted} from '../support/restore.js'
import {cleanEnv, commit, remoteSetup, rootOf} from '../support/worktrees.js'
import {yard} from '../support/yard.js'

describe('yard worktree remove: work outside the branch (DESIGN.md §4.1)', () => {
  afterEach(cleanupTemp)

  it('counts the commits of a detached HEAD no branch holds, refuses, and with --force keeps them in the printed ref, restored by the printed command', async () => {
    const setup = remoteSetup()
    const env = cleanEnv(setup.stateDir)
    expect((await yard(['worktree', 'add', 'feat', '--no-fetch'], {cwd: setup.main, env})).exitCode).to.equal(0)
    const feat = path.join(rootOf(setup.main), 'feat')
    git(feat, 'checkout', '-q', '--detach')
    const lost = commit(feat, 'detached.txt', 'on no branch\n')

    const refused = await yard(['worktree', 'remove', 'feat', '--yes'], {cwd: setup.main, env})
    expect(refused.exitCode).to.equal(3)
    expect(refused.stderr).to.include('1 commit on a detached HEAD that no branch holds')

    const run = await yard(['worktree', 'remove', 'feat', '--force'], {cwd: setup.main, env})
    expect(run.exitCode, run.stderr).to.equal(0)
    const ref = /the detached HEAD \(1 commit on no branch\) saved to (\S+)/.exec(run.stdout)?.[1]
    expect(ref, run.stdout).to.match(/^refs\/yard\/removed\/feat-\d{8}T\d{6}Z$/)
    expect(git(setup.main, 'rev-parse', ref!)).to.equal(lost)
    expect(existsSync(feat)).to.equal(false)

    await runPrinted(printedAfter(run.stdout, 'restore it with:')!, {cwd: setup.main, env})
    expect(git(feat, 'rev-parse', 'HEAD')).to.equal(lost)
    expect(readFileSync(path.join(feat, 'detached.txt'), 'utf8')).to.equal('on no branch\n')
  })

  it('keeps the commits of a rebase stopped at edit, with its uncommitted change, in the printed ref, restored by the printed command', async () => {
    const setup = remoteSetup()
    const env = cleanEnv(setup.stateDir)
    expect((await yard(['worktree', 'add', 'feat', '--no-fetch'], {cwd: setup.main, env})).exitCode).to.equal(0)
    const feat = path.join(rootOf(setup.main), 'feat')
    commit(feat, 'one.txt', 'one\n')
    commit(feat, 'two.txt', 'two\n')
    git(feat, 'push', '-q', 'origin', 'HEAD:refs/heads/wt/feat')
    // Stop at the first commit, reword it by amending, leave a change uncommitted.
    git(feat, '-c', 'sequence.editor=sed -i 1s/^pick/edit/', 'rebase', '-q', '-i', 'HEAD~2')
    writeFileSync(path.join(feat, 'one.txt'), 'one, amended\n')
    git(feat, 'commit', '-q', '-a', '--amend', '-m', 'one, amended')
    const amended = git(feat, 'rev-parse', 'HEAD')
    writeFileSync(path.join(feat, 'wip.txt'), 'not yet committed\n')

    const refused = await yard(['worktree', 'remove', 'feat', '--yes'], {cwd: setup.main, env})
    expect(refused.exitCode).to.equal(3)
    expect(refused.stderr).to.include('1 commit on a detached HEAD that no branch holds')

    const run = await yard(['worktree', 'remove', 'feat', '--force'], {cwd: setup.main, env})
    expect(run.exitCode, run.stderr).to.equal(0)
    const ref = /uncommitted work and the detached HEAD \(1 commit on no branch\) saved to (\S+)/.exec(run.stdout)?.[1]
    expect(ref, run.stdout).to.be.a('string')
    expect(git(setup.main, 'rev-parse', `${ref}~1`)).to.equal(amended)

    await runPrinted(printedAfter(run.stdout, 'restore it with:')!, {cwd: setup.main, env})
    expect(git(feat, 'rev-parse', 'HEAD')).to.equal(amended)
    expect(readFileSync(path.join(feat, 'one.txt'), 'utf8')).to.equal('one, amended\n')
    expect(readFileSync(path.join(feat, 'wip.txt'), 'utf8')).to.equal('not yet committed\n')
  })
})
