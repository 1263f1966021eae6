import {expect} from 'chai'
import {mkdirSync, readFileSync, symlinkSync} from 'node:fs'
import path from 'node:path'

import {addWorktree, cleanupTemp, git, makeRepo, tempDir, writeFile} from '../support/repo.js'
import {yard} from '../support/yard.js'

const PORTS = '[ports]\nAPP_PORT = 3000\nDB_PORT = 5400\n'
const clean = {
  WT_OFFSET: undefined,
  YARD_WORKTREE: undefined,
  WORKTREE: undefined,
  YARD_PREFIX: undefined,
  YARD_WORKTREES_ROOT: undefined,
}

describe('yard ports (DESIGN.md §3.3, §3.4)', () => {
  afterEach(cleanupTemp)

  it('gives feat the same answer with --worktree, from inside it and with YARD_WORKTREE; WORKTREE alone does not retarget', async () => {
    const repo = makeRepo({'yard.toml': PORTS})
    const feat = addWorktree(repo, 'feat')
    mkdirSync(path.join(feat, 'deep', 'er'), {recursive: true})
    const fromFlag = await yard(['ports', '--worktree', 'feat', '--json'], {cwd: repo, env: clean})
    const fromInside = await yard(['ports', '--json'], {cwd: path.join(feat, 'deep', 'er'), env: clean})
    const fromEnv = await yard(['ports', '--json'], {cwd: repo, env: {...clean, YARD_WORKTREE: 'feat'}})
    const fromWorktreeVar = await yard(['ports', '--json'], {cwd: repo, env: {...clean, WORKTREE: 'feat'}})
    expect(fromFlag.exitCode, fromFlag.stderr).to.equal(0)
    expect(fromFlag.json).to.deep.equal({
      worktree: 'feat',
      kind: 'worktree',
      project: 'app-feat',
      offset: 59,
      offsetSource: 'hash',
      ports: {APP_PORT: 3059, DB_PORT: 5459},
      implicitPorts: [],
      clashesWith: [],
      trust: 'trusted',
    })
    expect(fromInside.json).to.deep.equal(fromFlag.json)
    expect(fromEnv.json).to.deep.equal(fromFlag.json)
    expect(fromWorktreeVar.json).to.include({worktree: 'main', offset: 0, offsetSource: 'main'})
  })

  it('applies WT_OFFSET over a pin over the hash, and main is always 0', async () => {
    const repo = makeRepo({'yard.toml': PORTS})
    addWorktree(repo, 'feat')
    const hash = await yard(['ports', '-w', 'feat', '--json'], {cwd: repo, env: clean})
    expect(hash.json).to.include({offset: 59, offsetSource: 'hash'})
    writeFile(repo, 'yard.local.toml', '# mine\n[worktree-offsets]\nfeat = 12\n')
    const pin = await yard(['ports', '-w', 'feat', '--json'], {cwd: repo, env: clean})
    expect(pin.json).to.include({offset: 12, offsetSource: 'pin'})
    const env = await yard(['ports', '-w', 'feat', '--json'], {cwd: repo, env: {...clean, WT_OFFSET: '33'}})
    expect(env.json).to.deep.include({offset: 33, offsetSource: 'env', ports: {APP_PORT: 3033, DB_PORT: 5433}})
    const main = await yard(['ports', '--json'], {cwd: repo, env: {...clean, WT_OFFSET: '33'}})
    expect(main.json).to.deep.include({
      worktree: 'main',
      offset: 0,
      offsetSource: 'main',
      ports: {APP_PORT: 3000, DB_PORT: 5400},
    })
  })

  it('ignores WT_OFFSET with a note in --all and reports clashes', async () => {
    const repo = makeRepo({'yard.toml': PORTS})
    addWorktree(repo, 'feat')
    addWorktree(repo, 'alpha')
    addWorktree(repo, 'review')
    const all = await yard(['ports', '--all', '--json'], {cwd: repo, env: {...clean, WT_OFFSET: '5'}})
    expect(all.exitCode, all.stderr).to.equal(0)
    expect(all.stderr).to.contain('WT_OFFSET is ignored')
    const rows = all.json as Array<{worktree: string; offset: number; clashesWith: string[]; kind: string}>
    expect(rows.map((row) => row.worktree)).to.deep.equal(['main', 'alpha', 'feat', 'review'])
    expect(rows.find((row) => row.worktree === 'feat')).to.deep.include({offset: 59, clashesWith: ['alpha']})
    expect(rows.find((row) => row.worktree === 'alpha')).to.deep.include({offset: 59, clashesWith: ['feat']})
    expect(rows.find((row) => row.worktree === 'review')).to.deep.include({offset: 61, clashesWith: []})
    const one = await yard(['ports', '-w', 'alpha', '--json'], {cwd: repo, env: clean})
    expect(one.json).to.deep.include({clashesWith: ['feat']})
  })

  const badOffsets: Array<[string, Record<string, string> | undefined, string | undefined, RegExp]> = [
    ['WT_OFFSET=abc', {WT_OFFSET: 'abc'}, undefined, /env WT_OFFSET/],
    ['WT_OFFSET=0', {WT_OFFSET: '0'}, undefined, /env WT_OFFSET/],
    ['WT_OFFSET=90', {WT_OFFSET: '90'}, undefined, /env WT_OFFSET/],
    ['WT_OFFSET=-1', {WT_OFFSET: '-1'}, undefined, /env WT_OFFSET/],
    ['pin = true', undefined, 'feat = true', /\[worktree-offsets\] feat/],
    ['pin = 1.5', undefined, 'feat = 1.5', /\[worktree-offsets\] feat/],
    ['pin = "7"', undefined, 'feat = "7"', /\[worktree-offsets\] feat/],
    ['pin = 0', undefined, 'feat = 0', /\[worktree-offsets\] feat/],
  ]
  for (const [label, env, pin, source] of badOffsets) {
    it(`exits 2 for ${label}, naming the source and the fix, and writes nothing`, async () => {
      const repo = makeRepo({'yard.toml': PORTS})
      addWorktree(repo, 'feat')
      if (pin) writeFile(repo, 'yard.local.toml', `# personal\n[worktree-offsets]\n${pin}\n`)
      const before = git(repo, 'status', '--porcelain', '--ignored')
      const localBefore = pin ? readFileSync(path.join(repo, 'yard.local.toml'), 'utf8') : undefined
      const result = await yard(['ports', '--worktree', 'feat'], {cwd: repo, env: {...clean, ...env}})
      expect(result.exitCode).to.equal(2)
      expect(result.stderr).to.match(source)
      expect(result.stderr).to.match(/fix: .*(WT_OFFSET|1 to 89)/)
      expect(git(repo, 'status', '--porcelain', '--ignored')).to.equal(before)
      if (pin) expect(readFileSync(path.join(repo, 'yard.local.toml'), 'utf8')).to.equal(localBefore)
    })
  }

  it("ignores a pin in a worktree's own yard.local.toml", async () => {
    const repo = makeRepo({'yard.toml': PORTS})
    const feat = addWorktree(repo, 'feat')
    writeFile(feat, 'yard.local.toml', '[worktree-offsets]\nfeat = 3\n')
    const result = await yard(['ports', '--json'], {cwd: feat, env: clean})
    expect(result.json).to.include({offset: 59, offsetSource: 'hash'})
  })

  it("uses a worktree's own [ports], and only warns about its own [project] prefix", async () => {
    const repo = makeRepo({'yard.toml': PORTS})
    const feat = addWorktree(repo, 'feat')
    writeFile(feat, 'yard.toml', '[project]\nprefix = "other"\n[ports]\nWEB_PORT = 8000\n')
    const result = await yard(['ports', '--json'], {cwd: feat, env: clean})
    expect(result.exitCode, result.stderr).to.equal(0)
    expect(result.json).to.deep.include({project: 'app-feat', ports: {WEB_PORT: 8059}})
    expect(result.stderr).to.match(/warning: .*feat\/yard\.toml sets \[project\] differently/)
    const main = await yard(['ports', '--json'], {cwd: repo, env: clean})
    expect(main.json).to.deep.include({ports: {APP_PORT: 3000, DB_PORT: 5400}})
  })

  it('refuses invalid --worktree names with exit 2 and a suggestion', async () => {
    const repo = makeRepo({'yard.toml': PORTS})
    for (const name of ['Feature.Auth', 'default', 'worktrees', 'a/b', '..', 'a'.repeat(41)]) {
      const result = await yard(['ports', '--worktree', name], {cwd: repo, env: clean})
      expect(result.exitCode, name).to.equal(2)
      expect(result.stderr, name).to.match(/invalid worktree name/)
      expect(result.stderr, name).to.match(/fix: use "[a-z0-9-]+"/)
    }
  })

  it('derives the prefix from the directory: My.App → my-app, 30 characters cut to 22', async () => {
    const dotted = makeRepo({}, 'My.App')
    const long = makeRepo({}, 'abcdefghijklmnopqrstuvwxyz1234')
    expect((await yard(['ports', '--json'], {cwd: dotted, env: clean})).json).to.include({project: 'my-app'})
    expect((await yard(['ports', '--json'], {cwd: long, env: clean})).json).to.include({
      project: 'abcdefghijklmnopqrstuv',
    })
    expect((await yard(['ports', '-w', 'x1', '--json'], {cwd: long, env: clean})).json).to.include({
      project: 'abcdefghijklmnopqrstuv-x1',
      offset: 73,
    })
  })

  it('computes offsets natively: works with only git on PATH', async () => {
    const repo = makeRepo({'yard.toml': PORTS})
    const bin = tempDir('bin')
    symlinkSync(execPath('git'), path.join(bin, 'git'))
    const result = await yard(['ports', '-w', 'login-page', '--json'], {cwd: repo, env: {...clean, PATH: bin}})
    expect(result.exitCode, result.stderr).to.equal(0)
    expect(result.json).to.include({offset: 20})
  })

  it('exits 2 outside a git repository', async () => {
    const result = await yard(['ports'], {cwd: tempDir('norepo'), env: clean})
    expect(result.exitCode).to.equal(2)
    expect(result.stderr).to.contain('not inside a git repository')
  })
})

function execPath(command: string): string {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    try {
      const candidate = path.join(dir, command)
      readFileSync(candidate)
      return candidate
    } catch {}
  }

  throw new Error(`${command} not found`)
}
