/**
 * `yard worktree add` without oclif (src/cli/fast-worktree-add.ts): which words it takes
 * (anything oclif adds something to, or would refuse, is left to oclif), and through the built CLI
 * the same result, refusals and exit codes, word for word, as through oclif.
 */
import {expect} from 'chai'
import {execFileSync} from 'node:child_process'
import {existsSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {fastAddRequest} from '../../src/cli/fast-worktree-add.js'
import {builtCli} from '../support/built-cli.js'
import {cleanupTemp, makeRepo, tempDir} from '../support/repo.js'
import {yard} from '../support/yard.js'

describe('yard worktree add without oclif (src/cli/fast-worktree-add.ts)', () => {
  let env: NodeJS.ProcessEnv
  let data: string

  beforeEach(() => {
    data = tempDir('yard-fast-add-data')
    env = {HOME: tempDir('yard-fast-add-home'), YARD_DATA_DIR: data}
  })

  after(() => cleanupTemp())

  const add = (...words: string[]) => fastAddRequest(['worktree', 'add', ...words], env)
  const defaults = {branchTwice: false, fetch: true, submodules: true, untrusted: false, json: false, quiet: false}

  it("takes `worktree add [NAME] [BRANCH]` with the command's own flags, in any order and either spelling", () => {
    expect(add()).to.deep.equal(defaults)
    expect(add('feat')).to.deep.equal({...defaults, name: 'feat'})
    expect(add('feat', 'feature/login', '--no-fetch')).to.deep.equal({
      ...defaults,
      name: 'feat',
      branch: 'feature/login',
      fetch: false,
    })
    expect(
      add('--json', '-b', 'feature/x', '--from=origin/release', '--no-submodules', '--untrusted', '--quiet', '--fetch'),
    ).to.deep.equal({
      ...defaults,
      branch: 'feature/x',
      from: 'origin/release',
      submodules: false,
      untrusted: true,
      json: true,
      quiet: true,
    })
    // Refused by the use case's own words, as the command refuses it.
    expect(add('feat', 'a', '--branch', 'b')).to.deep.include({branch: 'a', branchTwice: true})
  })

  it('leaves to oclif what oclif adds something to or refuses: help, --verbose, unknown flags, a missing or odd value', () => {
    for (const words of [
      ['feat', '--help'],
      ['-h'],
      ['feat', '--verbose'],
      ['feat', 'branch', 'third'],
      ['feat', '--size', '2'],
      ['feat', '--from'],
      ['feat', '--from', '--json'],
      ['feat', '--from', '-x'],
      ['feat', '--from='],
      ['feat', '--branch=--json'],
      ['feat', '--from=-b'],
      ['feat', '-bfeature/x'],
      ['feat', '--branch', 'a', '--branch', 'b'],
      ['feat', '--no-fetch', '--fetch'],
      ['feat', '--json', '--json'],
      ['feat', '--json=yes'],
      ['feat', '--no-json'],
      ['feat', '--no-untrusted'],
      ['--', '-feat'],
      ['-feat'],
    ])
      expect(add(...words), words.join(' ')).to.equal(undefined)
    for (const argv of [['worktree', 'list'], ['worktree'], ['add', 'feat'], ['wt', 'add', 'feat'], []])
      expect(fastAddRequest(argv, env), argv.join(' ')).to.equal(undefined)
  })

  it('leaves to oclif a CLI with a user or linked plugin, DEBUG, YARD_DEBUG, or YARD_CONTENT_TYPE', () => {
    expect(add('feat')).to.not.equal(undefined)
    expect(fastAddRequest(['worktree', 'add', 'feat'], {...env, DEBUG: '*'})).to.equal(undefined)
    expect(fastAddRequest(['worktree', 'add', 'feat'], {...env, YARD_DEBUG: '1'})).to.equal(undefined)
    expect(fastAddRequest(['worktree', 'add', 'feat'], {...env, YARD_CONTENT_TYPE: 'json'})).to.equal(undefined)
    writeFileSync(path.join(data, 'package.json'), JSON.stringify({oclif: {plugins: [{type: 'link', name: 'p'}]}}))
    expect(add('feat')).to.equal(undefined)
  })

  it('the built CLI adds, prints and refuses without oclif, as oclif does', async function () {
    this.timeout(180_000)
    const repo = makeRepo({'yard.toml': '[project]\nprefix = "yardtest-fa"\n\n[ports]\nAPP_PORT = 3000\n'})
    const childEnv = {YARD_STATE_DIR: tempDir('yard-fast-add-state'), YARD_DATA_DIR: data}
    const undo = () => {
      execFileSync('git', ['worktree', 'remove', '--force', path.join(`${repo}-worktrees`, 'feat')], {cwd: repo})
      execFileSync('git', ['branch', '-q', '-D', 'wt/feat'], {cwd: repo})
    }

    // The same add, once through each path, in the same repository: the same output.
    for (const json of [[], ['--json']]) {
      const args = ['worktree', 'add', 'feat', '--no-fetch', ...json]
      const built = builtCli(args, {cwd: repo, env: childEnv})
      expect(built.oclif, args.join(' ')).to.equal(false)
      expect(built.status, built.stderr).to.equal(0)
      expect(existsSync(path.join(`${repo}-worktrees`, 'feat', 'README'))).to.equal(true)
      undo()
      const viaOclif = await yard(args, {cwd: repo, env: childEnv})
      expect(viaOclif.exitCode, viaOclif.stderr).to.equal(0)
      expect({stdout: built.stdout, stderr: built.stderr}, args.join(' ')).to.deep.equal({
        stdout: viaOclif.stdout,
        stderr: viaOclif.stderr,
      })
      if (json.length > 0) expect(JSON.parse(built.stdout)).to.deep.include({name: 'feat', branch: 'wt/feat'})
      else expect(built.stdout).to.match(/^worktree feat at .*\n {2}created branch wt\/feat without upstream\n/)
      undo()
    }

    // Refusals: a bad name, the branch twice, a --from that does not resolve, a name in use.
    execFileSync('git', ['worktree', 'add', '-q', '-b', 'taken', path.join(`${repo}-worktrees`, 'busy')], {cwd: repo})
    for (const words of [['Bad_Name'], ['feat', 'a', '--branch', 'b'], ['feat', '--from', 'no-such-ref'], ['busy']]) {
      for (const json of [[], ['--json']]) {
        const args = ['worktree', 'add', ...words, '--no-fetch', ...json]
        const built = builtCli(args, {cwd: repo, env: childEnv})
        const viaOclif = await yard(args, {cwd: repo, env: childEnv})
        expect(built.oclif, args.join(' ')).to.equal(false)
        expect(built.status, built.stderr).to.be.oneOf([2, 3])
        expect({status: built.status, stdout: built.stdout, stderr: built.stderr}, args.join(' ')).to.deep.equal({
          status: viaOclif.exitCode,
          stdout: viaOclif.stdout,
          stderr: viaOclif.stderr,
        })
      }
    }

    // Two things wrong: the state directory is reported first, as oclif's init does.
    const stateFile = path.join(tempDir('yard-fast-add-file'), 'state')
    writeFileSync(stateFile, '')
    const twice = ['worktree', 'add', 'feat', 'a', '--branch', 'b']
    const builtTwice = builtCli(twice, {cwd: repo, env: {...childEnv, YARD_STATE_DIR: stateFile}})
    const oclifTwice = await yard(twice, {cwd: repo, env: {...childEnv, YARD_STATE_DIR: stateFile}})
    expect(builtTwice).to.deep.include({oclif: false, status: oclifTwice.exitCode, stderr: oclifTwice.stderr})
    expect(builtTwice.stderr).to.include('state directory')

    expect(existsSync(path.join(`${repo}-worktrees`, 'feat'))).to.equal(false)
    // A flag the fast path does not take goes to oclif, which refuses it as it always did.
    const unknown = builtCli(['worktree', 'add', 'feat', '--size', '2'], {cwd: repo, env: childEnv})
    expect(unknown).to.deep.include({status: 2, oclif: true})
    expect(unknown.stderr).to.include('--size')
  })
})
