import {expect} from 'chai'
import {existsSync, readdirSync} from 'node:fs'
import path from 'node:path'

import {createContext} from '../../src/core/context.js'
import {checkOutSparse, mainSparse} from '../../src/core/worktree-checkout.js'
import {cleanupTemp, git, makeRepo} from '../support/repo.js'

describe('checkOutSparse (git-sparse-checkout(1), worktrees)', () => {
  afterEach(cleanupTemp)

  it('gives a worktree that git gave no patterns main\'s, then checks out only the sparse set', async () => {
    const main = makeRepo({'a/x.txt': 'x\n', 'b/y.txt': 'y\n', 'top.txt': 't\n'})
    // Added from a linked worktree that is not sparse, git copies nothing (as gits before 2.36 never do).
    const plain = path.join(path.dirname(main), 'plain')
    git(main, 'worktree', 'add', '-q', '--detach', plain)
    git(main, 'sparse-checkout', 'set', '--no-cone', '/a/')
    const target = path.join(path.dirname(main), 'new')
    git(plain, 'worktree', 'add', '-q', '--no-checkout', '-b', 'new', target, 'main')
    expect(existsSync(path.join(main, '.git', 'worktrees', 'new', 'info', 'sparse-checkout'))).to.equal(false)
    const context = createContext({cwd: main})
    const sparse = await mainSparse(context, main)
    expect(sparse).to.deep.equal({cone: false})
    await checkOutSparse(context, main, target, sparse!)
    expect(readdirSync(target).sort()).to.deep.equal(['.git', 'a'])
    expect(git(target, 'sparse-checkout', 'list')).to.equal('/a/')
    expect(git(target, 'status', '--porcelain')).to.equal('')
    // The plain worktree and main's own mode are untouched.
    expect(readdirSync(plain).sort()).to.deep.equal(['.git', 'README', 'a', 'b', 'top.txt'])
  })
})
