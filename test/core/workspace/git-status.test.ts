/**
 * dirtyCountsMany (core/workspace/git.ts): the counts of many checkouts from batched `git for-each-repo`
 * runs equal `dirtyCounts` of each, in order; a checkout whose status fails is reported as its
 * own failure, and the index is never rewritten.
 */
import {expect} from 'chai'
import {renameSync, statSync, unlinkSync} from 'node:fs'
import path from 'node:path'

import {dirtyCounts, dirtyCountsMany} from '../../../src/core/workspace/git.js'
import {OperationError} from '../../../src/sdk/errors.js'
import {ProcessRunner} from '../../../src/sdk/process.js'
import {addWorktree, cleanupTemp, git, makeRepo, tempDir, writeFile} from '../../support/repo.js'

describe('dirtyCountsMany (git status of many checkouts in batches)', () => {
  const runner = new ProcessRunner()
  let checkouts: string[]

  before(() => {
    const repo = makeRepo({'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n'})
    checkouts = [repo, ...['one', 'two', 'three', 'four', 'five', 'six'].map((name) => addWorktree(repo, name))]
    writeFile(checkouts[1], 'a.txt', 'changed\n')
    writeFile(checkouts[1], 'new/deep/file.txt', 'untracked\n')
    writeFile(checkouts[1], 'new/other.txt', 'untracked\n')
    git(checkouts[2], 'mv', 'b.txt', 'renamed.txt')
    unlinkSync(path.join(checkouts[3], 'c.txt'))
    git(checkouts[4], 'rm', '-q', 'a.txt')
    writeFile(checkouts[4], 'keep.txt', 'x\n')
    git(checkouts[4], 'add', 'keep.txt')
    renameSync(path.join(checkouts[5], 'a.txt'), path.join(checkouts[5], 'moved.txt'))
  })

  after(() => cleanupTemp())

  it('gives, in order, the counts dirtyCounts gives for each checkout, whatever the number of batches', async () => {
    const one = await Promise.all(checkouts.map(async (checkout) => dirtyCounts(runner, checkout)))
    expect(one.map((counts) => counts.modified + counts.untracked).filter((total) => total > 0)).to.have.length(5)
    for (const batches of [1, 2, 3, 4, 10])
      expect(await dirtyCountsMany(runner, checkouts, batches), `${batches} batches`).to.deep.equal(one)
    expect(await dirtyCountsMany(runner, [])).to.deep.equal([])
  })

  it("reports a checkout whose status fails as that checkout's failure, whichever batch it is in", async () => {
    const notRepository = tempDir('yard-not-a-repo')
    for (const at of [0, 3, checkouts.length]) {
      const listed = [...checkouts.slice(0, at), notRepository, ...checkouts.slice(at)]
      const failure = await dirtyCountsMany(runner, listed, 2).then(
        () => undefined,
        (error: Error) => error,
      )
      expect(failure, `at ${at}`).to.be.instanceOf(OperationError)
      expect(failure!.message).to.include('git status')
      expect(failure!.message).not.to.include('for-each-repo')
    }
  })

  it('leaves the index as it was (no optional locks)', async () => {
    const index = path.join(git(checkouts[3], 'rev-parse', '--absolute-git-dir'), 'index')
    const before = statSync(index).mtimeMs
    // A file touched after the index was written makes a plain `git status` refresh and rewrite it.
    writeFile(checkouts[3], 'b.txt', 'b\n')
    await new Promise((resolve) => setTimeout(resolve, 20))
    await dirtyCountsMany(runner, [checkouts[3]])
    expect(statSync(index).mtimeMs).to.equal(before)
  })
})
