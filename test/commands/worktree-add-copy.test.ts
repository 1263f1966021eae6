import {expect} from 'chai'
import {existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, symlinkSync} from 'node:fs'
import path from 'node:path'

import {cleanupTemp, git, makeRepo, tempDir, writeFile} from '../support/repo.js'
import {cleanEnv, rootOf} from '../support/worktrees.js'
import {yard} from '../support/yard.js'

describe('yard worktree add: [worktrees] copy (docs/configuration.md)', () => {
  afterEach(cleanupTemp)

  it("copies the main checkout's gitignored .env into the new worktree by default, naming it", async () => {
    const repo = makeRepo({'.gitignore': '.env\n*.local\n'})
    writeFile(repo, '.env', 'TOKEN=from-main\n')
    writeFile(repo, 'notes.txt', 'untracked, not ignored\n')
    const env = cleanEnv(tempDir('state'))
    const run = await yard(['worktree', 'add', 'feat'], {cwd: repo, env})
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(run.stdout).to.include('copied from the main checkout ([worktrees] copy): .env')
    const feat = path.join(rootOf(repo), 'feat')
    expect(readFileSync(path.join(feat, '.env'), 'utf8')).to.equal('TOKEN=from-main\n')
    expect(existsSync(path.join(feat, 'notes.txt'))).to.equal(false)
  })

  it('copies what the configured patterns pick, only when git ignores it', async () => {
    const repo = makeRepo({
      '.gitignore': '.env\n*.local\n',
      'yard.toml': '[worktrees]\ncopy = ["*.local", "settings.json"]\n',
    })
    writeFile(repo, '.env', 'not in the list\n')
    writeFile(repo, 'config/db.local', 'db=main\n')
    writeFile(repo, 'settings.json', 'untracked but not ignored\n')
    const env = cleanEnv(tempDir('state'))
    const run = await yard(['worktree', 'add', 'feat', '--json'], {cwd: repo, env})
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(run.json).to.have.property('copied').that.deep.equals(['config/db.local'])
    const feat = path.join(rootOf(repo), 'feat')
    expect(readFileSync(path.join(feat, 'config/db.local'), 'utf8')).to.equal('db=main\n')
    expect(existsSync(path.join(feat, '.env'))).to.equal(false)
    expect(existsSync(path.join(feat, 'settings.json'))).to.equal(false)
  })

  it('copies a symbolic link as the link, never what it points at outside the checkout', async () => {
    const repo = makeRepo({'.gitignore': '.env\n'})
    const outside = path.join(tempDir('outside'), 'secret')
    writeFile(path.dirname(outside), 'secret', 'SECRET\n')
    symlinkSync(outside, path.join(repo, '.env'))
    const env = cleanEnv(tempDir('state'))
    const run = await yard(['worktree', 'add', 'feat'], {cwd: repo, env})
    expect(run.exitCode, run.stderr).to.equal(0)
    const copied = path.join(rootOf(repo), 'feat', '.env')
    expect(lstatSync(copied).isSymbolicLink()).to.equal(true)
    expect(readlinkSync(copied)).to.equal(outside)
  })

  it('writes nothing through a directory of the branch that is a symbolic link out of the worktree', async () => {
    const repo = makeRepo({
      '.gitignore': '',
      'conf/.gitignore': '*.env\n',
      'yard.toml': '[worktrees]\ncopy = ["conf/a.env"]\n',
    })
    const outside = tempDir('outside')
    git(repo, 'checkout', '-q', '-b', 'linked')
    git(repo, 'rm', '-rq', 'conf')
    symlinkSync(outside, path.join(repo, 'conf'))
    git(repo, 'add', 'conf')
    git(repo, 'commit', '-qm', 'conf is a link')
    git(repo, 'checkout', '-q', 'main')
    mkdirSync(path.join(repo, 'conf'), {recursive: true})
    writeFile(repo, 'conf/a.env', 'X=1\n')
    const env = cleanEnv(tempDir('state'))
    const run = await yard(['worktree', 'add', 'feat', 'linked'], {cwd: repo, env})
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(existsSync(path.join(outside, 'a.env'))).to.equal(false)
    expect(run.stderr).to.include('did not copy conf/a.env')
  })
})
