import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import {existsSync, mkdirSync} from 'node:fs'
import path from 'node:path'

import {addWorktree, cleanupTemp, git, makeRepo, tempDir, writeFile} from '../support/repo.js'
import {projectRoot, yard} from '../support/yard.js'

const clean = {
  WT_OFFSET: undefined,
  YARD_WORKTREE: undefined,
  WORKTREE: undefined,
  YARD_PREFIX: undefined,
  YARD_WORKTREES_ROOT: undefined,
}

describe('which checkout a command targets (DESIGN.md §3.3)', () => {
  afterEach(cleanupTemp)

  it('never takes piped standard input for NAME: `echo feat | yard ports` targets the current checkout', () => {
    const repo = makeRepo({'yard.toml': '[project]\nprefix = "yardtest-stdin"\n\n[ports]\nAPP_PORT = 3000\n'})
    addWorktree(repo, 'feat')
    const env: NodeJS.ProcessEnv = {...process.env, YARD_STATE_DIR: tempDir('state')}
    for (const key of Object.keys(clean)) delete env[key]
    for (const argv of [
      ['ports', '--json'],
      ['env', '--json'],
      ['nuke', '--dry-run', '--json'],
    ]) {
      const run = spawnSync(process.execPath, [path.join(projectRoot, 'bin', 'dev.js'), ...argv], {
        cwd: repo,
        env,
        input: 'feat\n',
        encoding: 'utf8',
        timeout: 60_000,
      })
      expect(run.status, `${argv.join(' ')}: ${run.stderr}`).to.equal(0)
      expect(run.stdout + run.stderr, argv.join(' ')).not.to.include('yardtest-stdin-feat')
    }
  })

  it('refuses a worktree outside the worktrees root instead of passing it off as main', async () => {
    const repo = makeRepo({'yard.toml': '[ports]\nAPP_PORT = 3000\n'})
    const outside = path.join(tempDir('elsewhere'), 'outside')
    git(repo, 'worktree', 'add', '-q', '-b', 'wt/outside', outside)
    const result = await yard(['env', '--json'], {cwd: outside, env: clean})
    expect(result.exitCode).to.equal(2)
    expect(result.json)
      .to.have.nested.property('error.message')
      .that.contains("is a worktree outside yard's worktrees root")
    // Naming the target explicitly still works from there.
    expect((await yard(['ports', '--worktree', 'feat', '--json'], {cwd: outside, env: clean})).json).to.include({
      worktree: 'feat',
    })
  })

  it('targets main from a plain directory of the main checkout, even below a worktrees root inside it', async () => {
    const repo = makeRepo({'yard.toml': '[worktrees]\nroot = "trees"\n'})
    mkdirSync(path.join(repo, 'trees', 'junk', 'x'), {recursive: true})
    const result = await yard(['ports', '--json'], {cwd: path.join(repo, 'trees', 'junk', 'x'), env: clean})
    expect(result.json).to.include({worktree: 'main', offset: 0})
  })

  it('refuses a worktrees root that contains the main checkout', async () => {
    const repo = makeRepo({'yard.toml': '[worktrees]\nroot = ".."\n'})
    const result = await yard(['ports'], {cwd: repo, env: clean})
    expect(result.exitCode).to.equal(2)
    expect(result.stderr).to.contain('contains the main checkout').and.contain('yard.toml [worktrees] root')
  })

  it('refuses a worktrees root that is a file, or inside the git directory, with exit 2', async () => {
    const asFile = makeRepo({'yard.toml': '[worktrees]\nroot = "notes.txt"\n', 'notes.txt': 'x\n'})
    const file = await yard(['ports'], {cwd: asFile, env: clean})
    expect(file.exitCode, file.stderr).to.equal(2)
    expect(file.stderr).to.contain('is not a directory').and.contain('yard.toml [worktrees] root')
    const inGit = makeRepo({'yard.toml': '[worktrees]\nroot = ".git/trees"\n'})
    const git = await yard(['worktree', 'add', 'feat', '--no-fetch'], {cwd: inGit, env: clean})
    expect(git.exitCode, git.stderr).to.equal(2)
    expect(git.stderr).to.contain("inside the repository's git directory")
    expect(existsSync(path.join(inGit, '.git', 'trees'))).to.equal(false)
  })

  it('finds the main checkout of a repository made with --separate-git-dir, and refuses clearly from its worktrees', async () => {
    const dir = tempDir('sep')
    const main = path.join(dir, 'app')
    git(dir, 'init', '-q', '-b', 'main', '--separate-git-dir', path.join(dir, 'store.git'), main)
    git(main, 'commit', '-q', '--allow-empty', '-m', 'initial')
    const feat = path.join(dir, 'app-worktrees', 'feat')
    git(main, 'worktree', 'add', '-q', '-b', 'wt/feat', feat)
    expect((await yard(['ports', '--json'], {cwd: main, env: clean})).json).to.include({
      worktree: 'main',
      project: 'app',
    })
    expect((await yard(['ports', '--worktree', 'feat', '--json'], {cwd: main, env: clean})).json).to.include({
      worktree: 'feat',
      project: 'app-feat',
    })
    // git itself reports the git dir as the main worktree there: refuse clearly rather than guess.
    const fromFeat = await yard(['ports'], {cwd: feat, env: clean})
    expect(fromFeat.exitCode).to.equal(2)
    expect(fromFeat.stderr)
      .to.contain('git cannot tell where the main checkout')
      .and.contain('run yard from the main checkout')
  })

  it('says where it is for a bare repository or a .git directory (exit 2)', async () => {
    const dir = tempDir('bare')
    git(dir, 'init', '-q', '--bare', 'b.git')
    const bare = await yard(['ports'], {cwd: path.join(dir, 'b.git'), env: clean})
    expect(bare.exitCode).to.equal(2)
    expect(bare.stderr).to.contain('inside a .git directory or a bare repository')
    const repo = makeRepo()
    const inGit = await yard(['ports'], {cwd: path.join(repo, '.git'), env: clean})
    expect(inGit.exitCode).to.equal(2)
  })

  it("keeps listing every other checkout when one worktree's yard.toml is broken", async () => {
    const repo = makeRepo({'yard.toml': '[ports]\nAPP_PORT = 3000\n'})
    addWorktree(repo, 'feat')
    const bad = addWorktree(repo, 'bad')
    writeFile(bad, 'yard.toml', '[ports]\nAPP_PORT = "x"\n')
    const result = await yard(['ports', '--all', '--json'], {cwd: repo, env: clean})
    expect(result.exitCode, result.stderr).to.equal(0)
    expect((result.json as Array<{worktree: string}>).map((row) => row.worktree)).to.deep.equal(['main', 'feat'])
    expect(result.stderr).to.match(/warning: skipped worktree bad: .*bad\/yard\.toml: invalid value at ports\.APP_PORT/)
  })

  it('notes that a named worktree does not exist, and still gives its identity', async () => {
    const repo = makeRepo()
    const result = await yard(['ports', '--worktree', 'ghost', '--json'], {cwd: repo, env: clean})
    expect(result.exitCode).to.equal(0)
    expect(result.json).to.include({worktree: 'ghost', project: 'app-ghost'})
    expect(result.stderr).to.contain('note: there is no worktree ghost at')
  })

  it('reports git failures as git failures, not as "not a repository"', async () => {
    const repo = makeRepo()
    const nodeOnly = tempDir('nogit')
    // `yard ports` reads the repository from its files (discover.ts) and needs no git; listing does.
    const result = await yard(['worktree', 'list'], {cwd: repo, env: {...clean, PATH: nodeOnly}})
    expect(result.exitCode).to.equal(1)
    expect(result.stderr).to.contain('git is not installed or not on PATH')
  })

  it('gives hints that fit: main cannot be removed, a missing worktree has no box (no identity note), the variable that chose a backend', async () => {
    const repo = makeRepo()
    const env = {...clean, YARD_STATE_DIR: tempDir('state')}
    const main = await yard(['worktree', 'remove', 'main', '--yes'], {cwd: repo, env})
    expect(main.exitCode).to.equal(2)
    expect(main.stderr).to.contain('main is the main checkout; it is not a worktree yard can remove')
    expect(main.stderr).not.to.contain('main-')
    expect(git(repo, 'worktree', 'list', '--porcelain')).to.contain(`worktree ${repo}`)
    for (const argv of [
      ['shell', 'nosuch'],
      ['exec', 'nosuch', '--', 'true'],
    ]) {
      const missing = await yard(argv, {cwd: repo, env})
      expect(missing.exitCode, argv.join(' ')).to.equal(2)
      expect(missing.stderr).to.contain('there is no worktree nosuch')
      expect(missing.stderr).not.to.contain('the identity it would have')
    }

    // exec also looks for a sandbox of that name, and says so: both lists, both ways to make one.
    const exec = await yard(['exec', 'nosuch', '--', 'true'], {cwd: repo, env})
    expect(exec.stderr).to.contain('and no sandbox is named nosuch')
    expect(exec.stderr).to.contain('`yard sandbox create nosuch --repo URL`')

    const backend = await yard(['machine', 'status'], {cwd: repo, env: {...env, YARD_MACHINE_BACKEND: 'bogus'}})
    expect(backend.exitCode).to.equal(2)
    expect(backend.stderr).to.contain('unknown machine backend "bogus" from YARD_MACHINE_BACKEND')
    expect(backend.stderr).to.contain('fix: set the environment variable YARD_MACHINE_BACKEND to one of:')
    expect(backend.stderr).not.to.contain('in yard.toml')
  })
})
