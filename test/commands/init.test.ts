import {expect} from 'chai'
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import path from 'node:path'
import {parse} from 'smol-toml'

import {yardTomlSchema} from '../../src/core/config/config-schema.js'
import {addWorktree, cleanupTemp, git, makeRepo, tempDir} from '../support/repo.js'
import {yard} from '../support/yard.js'

const clean = {YARD_PREFIX: undefined, YARD_WORKTREE: undefined}

describe('yard init (DESIGN.md §4.1)', () => {
  afterEach(cleanupTemp)

  it('writes a commented yard.toml that the config schema accepts, and gitignores yard.local.toml and .yard/', async () => {
    const repo = makeRepo({'.gitignore': 'node_modules/\n*.log'}, 'My.Shop')
    const run = await yard(['init', '--json'], {cwd: repo, env: clean})
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(run.json).to.deep.equal({
      path: path.join(repo, 'yard.toml'),
      gitignore: {added: ['yard.local.toml', '.yard/']},
    })
    const text = readFileSync(path.join(repo, 'yard.toml'), 'utf8')
    const parsed = parse(text)
    expect(Object.keys(parsed)).to.deep.equal(['project', 'worktrees', 'ports', 'stack', 'box', 'cache', 'cluster'])
    expect(yardTomlSchema.safeParse(parsed).success).to.equal(true)
    expect(text).to.include('# prefix = "my-shop"')
    expect(text).to.include('# root = "../My.Shop-worktrees"')
    expect(text).to.include('# APP_PORT = 3000')
    expect(readFileSync(path.join(repo, '.gitignore'), 'utf8')).to.equal(
      'node_modules/\n*.log\nyard.local.toml\n.yard/\n',
    )
    // git agrees: both are ignored now.
    writeFileSync(path.join(repo, 'yard.local.toml'), '')
    mkdirSync(path.join(repo, '.yard'))
    writeFileSync(path.join(repo, '.yard', 'x'), '')
    expect(git(repo, 'check-ignore', 'yard.local.toml', '.yard/x')).to.equal('yard.local.toml\n.yard/x')
    expect(git(repo, 'status', '--porcelain', '--untracked-files=all').split('\n')).to.deep.equal([
      'M .gitignore',
      '?? yard.toml',
    ])
  })

  it('refuses (exit 3) to overwrite yard.toml; --force replaces it without duplicating .gitignore lines', async () => {
    const repo = makeRepo()
    const first = await yard(['init'], {cwd: repo, env: clean})
    expect(first.exitCode, first.stderr).to.equal(0)
    expect(first.stdout).to.include(`wrote ${path.join(repo, 'yard.toml')}`)
    expect(first.stdout).to.include(
      'commit yard.toml and .gitignore: every worktree and teammate reads the same yard.toml',
    )
    writeFileSync(path.join(repo, 'yard.toml'), '[project]\nprefix = "mine"\n')

    const second = await yard(['init'], {cwd: repo, env: clean})
    expect(second.exitCode).to.equal(3)
    expect(second.stderr).to.include(`${path.join(repo, 'yard.toml')} already exists`)
    expect(second.stderr).to.include('yard init --force')
    expect(readFileSync(path.join(repo, 'yard.toml'), 'utf8')).to.equal('[project]\nprefix = "mine"\n')

    const json = await yard(['init', '--json'], {cwd: repo, env: clean})
    expect(json.exitCode).to.equal(3)
    expect(json.json).to.have.nested.property('error.code', 3)

    const forced = await yard(['init', '--force', '--prefix', 'shop', '--json'], {cwd: repo, env: clean})
    expect(forced.exitCode, forced.stderr).to.equal(0)
    expect(forced.json).to.deep.equal({path: path.join(repo, 'yard.toml'), gitignore: {added: []}})
    expect(parse(readFileSync(path.join(repo, 'yard.toml'), 'utf8'))).to.have.deep.property('project', {prefix: 'shop'})
    expect(readFileSync(path.join(repo, '.gitignore'), 'utf8')).to.equal('yard.local.toml\n.yard/\n')
    expect(readdirTemp(repo)).to.deep.equal([])
  })

  it('refuses an invalid --prefix (exit 2) with a valid suggestion, before writing anything', async () => {
    const repo = makeRepo()
    const bad = await yard(['init', '--prefix', 'My_Shop'], {cwd: repo, env: clean})
    expect(bad.exitCode).to.equal(2)
    expect(bad.stderr).to.include('invalid prefix "My_Shop" from --prefix')
    expect(bad.stderr).to.include('set --prefix to "my-shop"')
    const long = await yard(['init', '--prefix', 'a'.repeat(23), '--json'], {cwd: repo, env: clean})
    expect(long.exitCode).to.equal(2)
    expect(long.json).to.have.nested.property('error.message').that.includes('23 characters, more than 22')
    expect(long.json).to.have.nested.property('error.fix', `set --prefix to "${'a'.repeat(22)}"`)
    const edge = await yard(['init', '--prefix', '-shop'], {cwd: repo, env: clean})
    expect(edge.exitCode).to.equal(2)
    expect(existsSync(path.join(repo, 'yard.toml'))).to.equal(false)
    expect(existsSync(path.join(repo, '.gitignore'))).to.equal(false)
  })

  it('refuses outside a git repository (exit 2) with a fix', async () => {
    const outside = tempDir('not-a-repo')
    const run = await yard(['init'], {cwd: outside, env: {...clean, GIT_CEILING_DIRECTORIES: path.dirname(outside)}})
    expect(run.exitCode).to.equal(2)
    expect(run.stderr).to.include(`${outside} is not inside a git repository`)
    expect(run.stderr).to.include(
      "fix: cd into your repository's main checkout or one of its worktrees (or run `git init` first)",
    )
    expect(existsSync(path.join(outside, 'yard.toml'))).to.equal(false)
  })

  it("writes into the main checkout when run inside a worktree, keeping .gitignore's mode", async () => {
    const repo = makeRepo({'.gitignore': '/yard.local.toml\n'})
    const feat = addWorktree(repo, 'feat')
    const deep = path.join(feat, 'src')
    mkdirSync(deep)
    const run = await yard(['init', '--json'], {cwd: deep, env: clean})
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(run.json).to.deep.equal({path: path.join(repo, 'yard.toml'), gitignore: {added: ['.yard/']}})
    expect(existsSync(path.join(feat, 'yard.toml'))).to.equal(false)
    expect(readFileSync(path.join(repo, '.gitignore'), 'utf8')).to.equal('/yard.local.toml\n.yard/\n')
    expect(statSync(path.join(repo, '.gitignore')).mode & 0o777).to.equal(0o644)
  })

  it('writes nothing when .gitignore or yard.toml is a directory, and says so (no raw errno)', async () => {
    const repo = makeRepo()
    mkdirSync(path.join(repo, '.gitignore'))
    const run = await yard(['init'], {cwd: repo, env: clean})
    expect(run.exitCode).to.equal(2)
    expect(run.stderr).to.contain(`${path.join(repo, '.gitignore')} is not a regular file`)
    expect(existsSync(path.join(repo, 'yard.toml'))).to.equal(false)
    const other = makeRepo()
    mkdirSync(path.join(other, 'yard.toml'))
    const forced = await yard(['init', '--force', '--json'], {cwd: other, env: clean})
    expect(forced.exitCode).to.equal(2)
    expect(forced.json).to.have.nested.property(
      'error.message',
      `${path.join(other, 'yard.toml')} is not a regular file`,
    )
    expect(existsSync(path.join(other, '.gitignore'))).to.equal(false)
  })

  it('keeps a symlinked .gitignore a link and updates the file it points at', async () => {
    const repo = makeRepo()
    writeFileSync(path.join(repo, 'shared.gitignore'), 'node_modules/\n')
    symlinkSync('shared.gitignore', path.join(repo, '.gitignore'))
    const run = await yard(['init'], {cwd: repo, env: clean})
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(lstatSync(path.join(repo, '.gitignore')).isSymbolicLink()).to.equal(true)
    expect(readFileSync(path.join(repo, 'shared.gitignore'), 'utf8')).to.equal(
      'node_modules/\nyard.local.toml\n.yard/\n',
    )
  })
})

/** Leftover temporary files of atomic writes in `dir`. */
function readdirTemp(dir: string): string[] {
  return readdirSync(dir).filter((name) => name.includes('.tmp-'))
}
