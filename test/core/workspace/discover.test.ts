/**
 * git's repository discovery read from the files (src/core/workspace/discover.ts) against `git
 * rev-parse --git-common-dir --git-dir --show-toplevel` in every layout yard meets: where it
 * answers it answers as git does, it answers for the two common layouts, and it leaves the rest to
 * git.
 */
import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import {mkdirSync, realpathSync, symlinkSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {type DiscoveredRepository, discoverFromFiles} from '../../../src/core/workspace/discover.js'
import {addWorktree, cleanupTemp, git, makeRepo, tempDir} from '../../support/repo.js'

/** git's own answer in `cwd`, as real paths; undefined where rev-parse fails. */
function gitAnswer(cwd: string, env: NodeJS.ProcessEnv = process.env): DiscoveredRepository | undefined {
  const result = spawnSync('git', ['rev-parse', '--git-common-dir', '--git-dir', '--show-toplevel'], {
    cwd,
    env,
    encoding: 'utf8',
  })
  if (result.status !== 0) return undefined
  const [commonDir, gitDir, checkoutPath] = result.stdout
    .trim()
    .split('\n')
    .map((line) => realpathSync(path.resolve(cwd, line)))
  return {commonDir, gitDir, checkoutPath}
}

describe('repository discovery from the files (discover.ts)', () => {
  after(cleanupTemp)

  const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('GIT_')))

  it('answers as git does in a main checkout and a linked worktree, at the top and below', () => {
    const repo = makeRepo({'src/deep/file.txt': 'x\n'})
    const worktree = addWorktree(repo, 'feat')
    // A worktree added from a subdirectory of main, and one whose admin dir name differs from its directory's.
    const fromSub = path.join(tempDir('yard-discover'), 'sub-added')
    git(path.join(repo, 'src'), 'worktree', 'add', '-q', '-b', 'wt/sub', fromSub)
    const renamed = path.join(tempDir('yard-discover'), 'feat')
    git(repo, 'worktree', 'add', '-q', '-b', 'wt/renamed', renamed)
    for (const cwd of [
      repo,
      path.join(repo, 'src'),
      path.join(repo, 'src', 'deep'),
      worktree,
      path.join(worktree, 'src', 'deep'),
      fromSub,
      renamed,
    ]) {
      const found = discoverFromFiles(cwd, cleanEnv)
      expect(found, cwd).to.not.equal(undefined)
      expect(found, cwd).to.deep.equal(gitAnswer(cwd, cleanEnv))
    }

    // Through a symbolic link to the checkout: real paths, as the caller makes git's.
    const link = path.join(tempDir('yard-discover'), 'link')
    symlinkSync(path.join(worktree, 'src'), link)
    expect(discoverFromFiles(link, cleanEnv)).to.deep.equal(gitAnswer(link, cleanEnv))
    // A nested repository inside a checkout is its own.
    const nested = path.join(repo, 'vendor', 'inner')
    mkdirSync(nested, {recursive: true})
    git(nested, 'init', '-q', '-b', 'main')
    expect(discoverFromFiles(nested, cleanEnv)).to.deep.equal(gitAnswer(nested, cleanEnv))
  })

  it('leaves to git what it does not read: git variables, core.worktree, includes, bare, a .git link, inside .git', () => {
    const repo = makeRepo()
    expect(discoverFromFiles(repo, cleanEnv)).to.not.equal(undefined)
    for (const variable of ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_CEILING_DIRECTORIES', 'GIT_CONFIG_PARAMETERS'])
      expect(discoverFromFiles(repo, {...cleanEnv, [variable]: '/elsewhere'}), variable).to.equal(undefined)
    // Inside the git dir, git refuses (no work tree): so does nothing here but git.
    expect(discoverFromFiles(path.join(repo, '.git', 'refs'), cleanEnv)).to.equal(undefined)
    expect(gitAnswer(path.join(repo, '.git', 'refs'), cleanEnv)).to.equal(undefined)

    for (const [key, value] of [
      ['core.worktree', '/tmp'],
      ['core.bare', 'true'],
      ['extensions.worktreeConfig', 'true'],
      ['include.path', '/nowhere'],
    ]) {
      const other = makeRepo()
      git(other, 'config', key, value)
      expect(discoverFromFiles(other, cleanEnv), key).to.equal(undefined)
    }

    // A submodule's .git file names a git dir with no commondir (and core.worktree).
    const upstream = makeRepo({'lib.txt': 'lib\n'}, 'lib')
    const superproject = makeRepo({}, 'super')
    git(superproject, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', upstream, 'lib')
    expect(discoverFromFiles(path.join(superproject, 'lib'), cleanEnv)).to.equal(undefined)
    expect(gitAnswer(path.join(superproject, 'lib'), cleanEnv)?.checkoutPath).to.equal(path.join(superproject, 'lib'))

    // --separate-git-dir: a .git file naming a whole git dir.
    const separate = path.join(tempDir('yard-discover'), 'separate')
    git(tempDir('yard-discover'), 'init', '-q', '--separate-git-dir', path.join(separate + '-git'), separate)
    expect(discoverFromFiles(separate, cleanEnv)).to.equal(undefined)
    // The bare layout: `.git` naming `./.bare`.
    const layout = path.join(tempDir('yard-discover'), 'layout')
    mkdirSync(layout)
    git(layout, 'init', '-q', '--bare', '.bare')
    writeFileSync(path.join(layout, '.git'), 'gitdir: ./.bare\n')
    expect(discoverFromFiles(layout, cleanEnv)).to.equal(undefined)
    // A .git symbolic link to a git dir.
    const linked = path.join(tempDir('yard-discover'), 'linked')
    mkdirSync(linked)
    symlinkSync(path.join(repo, '.git'), path.join(linked, '.git'))
    expect(discoverFromFiles(linked, cleanEnv)).to.equal(undefined)
    // Outside any repository.
    expect(discoverFromFiles(tempDir('yard-discover'), cleanEnv)).to.equal(undefined)
  })
})
