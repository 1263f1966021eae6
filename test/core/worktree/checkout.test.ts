import {expect} from 'chai'
import {existsSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {createContext} from '../../../src/core/kernel/context.js'
import {checkOutSparse, gitBool, mainSparse, readCheckoutConfig} from '../../../src/core/worktree/checkout.js'
import {cleanupTemp, git, makeRepo} from '../../support/repo.js'

describe('checkOutSparse (git-sparse-checkout(1), worktrees)', () => {
  afterEach(cleanupTemp)

  it("gives a worktree that git gave no patterns main's, then checks out only the sparse set", async () => {
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

describe('readCheckoutConfig (one git config read for worktree add)', () => {
  afterEach(cleanupTemp)

  it('answers as `git remote`, the promisor keys and `git config --type=bool` do', async () => {
    const main = makeRepo()
    git(main, 'remote', 'add', 'origin', 'https://example.invalid/a.git')
    git(main, 'remote', 'add', 'up.stream', 'https://example.invalid/b.git')
    git(main, 'config', 'remote.Mixed.fetch', '+refs/heads/*:refs/remotes/Mixed/*')
    git(main, 'config', 'remote.up.stream.promisor', 'yes')
    git(main, 'config', 'remote.origin.promisor', 'off')
    // A key of the remote section itself names no remote.
    git(main, 'config', 'remote.pushDefault', 'origin')
    git(main, 'config', 'extensions.partialClone', 'origin2')
    // A valueless key is true (git-config(1), "Values"); cone mode "0" is false.
    writeFileSync(
      path.join(main, '.git', 'config'),
      readFileSync(path.join(main, '.git', 'config'), 'utf8') + '[core]\n\tsparseCheckout\n\tsparseCheckoutCone = 0\n',
    )
    const config = await readCheckoutConfig(createContext({cwd: main}), main)
    expect([...config.remotes].sort()).to.deep.equal(git(main, 'remote').split('\n').sort())
    expect([...config.promisors].sort()).to.deep.equal(['origin2', 'up.stream'])
    expect(git(main, 'config', '--type=bool', 'core.sparseCheckout')).to.equal('true')
    expect(config.sparse).to.deep.equal({cone: false})
    expect(await readCheckoutConfig(createContext({cwd: main}), makeRepo())).to.deep.equal({remotes: [], promisors: []})
  })

  it('reads booleans as git does', () => {
    for (const [text, value] of [
      [null, true],
      ['Yes', true],
      ['on', true],
      ['1', true],
      ['2k', true],
      ['', false],
      ['OFF', false],
      ['0', false],
      ['maybe', undefined],
    ] as const) {
      expect(gitBool(text), String(text)).to.equal(value)
    }
  })
})
