import {expect} from 'chai'
import {existsSync, readFileSync} from 'node:fs'
import path from 'node:path'

import {cleanupTemp, makeRepo, tempDir, writeFile} from '../support/repo.js'
import {cleanEnv, rootOf} from '../support/worktrees.js'
import {yard} from '../support/yard.js'

describe('yard worktree add: [worktrees] copy (docs/configuration.md)', () => {
  afterEach(cleanupTemp)

  it('copies the main checkout\'s gitignored .env into the new worktree by default, naming it', async () => {
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
    const repo = makeRepo({'.gitignore': '.env\n*.local\n', 'yard.toml': '[worktrees]\ncopy = ["*.local", "settings.json"]\n'})
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
})
