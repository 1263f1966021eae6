/**
 * `yard sandbox create NAME --repo …` without oclif (src/cli/fast-create.ts): which words it takes
 * (anything oclif adds something to, or would refuse, is left to oclif), and through the built CLI
 * the same refusals, word for word, as oclif's. A warm create through it on real podman:
 * test/plugins/k8s-sandbox/pool.test.ts.
 */
import {expect} from 'chai'
import {writeFileSync} from 'node:fs'
import path from 'node:path'

import {fastCreateRequest} from '../../src/cli/fast-create.js'
import {builtCli} from '../support/built-cli.js'
import {cleanupTemp, makeRepo, tempDir} from '../support/repo.js'
import {yard} from '../support/yard.js'

describe('yard sandbox create without oclif (src/cli/fast-create.ts)', () => {
  let env: NodeJS.ProcessEnv
  let data: string

  beforeEach(() => {
    data = tempDir('yard-fast-create-data')
    env = {HOME: tempDir('yard-fast-create-home'), YARD_DATA_DIR: data}
  })

  after(() => cleanupTemp())

  const create = (...words: string[]) => fastCreateRequest(['sandbox', 'create', ...words], env)

  it("takes `sandbox create NAME` with the command's own flags, in any order and either spelling", () => {
    expect(create('feat', '--repo', 'https://example.com/a.git')).to.deep.equal({
      name: 'feat',
      repos: ['https://example.com/a.git'],
      json: false,
      quiet: false,
    })
    expect(
      create(
        '--json',
        'feat',
        '--repo=lib=/srv/lib.git#develop',
        '--repo',
        '/srv/app.git',
        '--branch',
        'feat/login',
        '--runtime=kubernetes',
        '--image',
        'localhost/img:1',
        '--quiet',
      ),
    ).to.deep.equal({
      name: 'feat',
      repos: ['lib=/srv/lib.git#develop', '/srv/app.git'],
      branch: 'feat/login',
      runtime: 'kubernetes',
      image: 'localhost/img:1',
      json: true,
      quiet: true,
    })
  })

  it('leaves to oclif what oclif adds something to or refuses: help, --verbose, unknown flags, a missing or ambiguous value', () => {
    for (const words of [
      ['feat'],
      ['--repo', '/srv/a.git'],
      ['feat', 'other', '--repo', '/srv/a.git'],
      ['feat', '--repo', '/srv/a.git', '--help'],
      ['feat', '--repo', '/srv/a.git', '-h'],
      ['feat', '--repo', '/srv/a.git', '--verbose'],
      ['feat', '--repo', '/srv/a.git', '--size', '2'],
      ['feat', '--repo'],
      ['feat', '--repo', '--json'],
      ['feat', '--repo', '/srv/a.git', '--branch', '-x'],
      ['feat', '--repo', '/srv/a.git', '--branch', 'a', '--branch', 'b'],
      ['feat', '--repo', '/srv/a.git', '--json', '--json'],
      ['feat', '--repo', '/srv/a.git', '--json=yes'],
      ['feat', '--repo', '/srv/a.git', '--runtime', 'docker'],
      ['--repo', '/srv/a.git', '--', '-feat'],
      // oclif's --repo (multiple) takes the plain words after it as more repositories.
      ['--repo', '/srv/a.git', 'feat'],
      ['--repo=/srv/a.git', 'feat'],
      ['--repo', '/srv/a.git', '--quiet', 'feat'],
      ['--repo', '/srv/a.git', '--branch', 'b', 'feat'],
    ])
      expect(create(...words), words.join(' ')).to.equal(undefined)
    for (const argv of [
      ['sandbox', 'attach', 'feat', '--repo', 'x'],
      ['sandbox'],
      ['create', 'feat', '--repo', 'x'],
      [],
    ])
      expect(fastCreateRequest(argv, env), argv.join(' ')).to.equal(undefined)
  })

  it('leaves to oclif a CLI with a user or linked plugin, DEBUG, or YARD_CONTENT_TYPE', () => {
    const words = ['feat', '--repo', '/srv/a.git']
    expect(create(...words)).to.not.equal(undefined)
    expect(fastCreateRequest(['sandbox', 'create', ...words], {...env, DEBUG: '*'})).to.equal(undefined)
    expect(fastCreateRequest(['sandbox', 'create', ...words], {...env, YARD_DEBUG: '1'})).to.equal(undefined)
    expect(fastCreateRequest(['sandbox', 'create', ...words], {...env, YARD_CONTENT_TYPE: 'json'})).to.equal(undefined)
    writeFileSync(path.join(data, 'package.json'), JSON.stringify({oclif: {plugins: [{type: 'user', name: 'p'}]}}))
    expect(create(...words)).to.equal(undefined)
  })

  it('the built CLI refuses bad input without oclif, with the words and exit code oclif gives', async function () {
    this.timeout(180_000)
    const repo = makeRepo({'yard.toml': '[project]\nprefix = "yardtest-fc"\n'})
    const childEnv = {YARD_STATE_DIR: tempDir('yard-fast-create-state'), YARD_DATA_DIR: data}
    for (const words of [
      ['Bad_Name', '--repo', '/srv/a.git'],
      ['feat', '--repo', 'app=/srv/a.git', '--repo', 'app=/srv/b.git'],
      ['feat', '--repo', '/srv/a.git', '--branch', 'a..b'],
      ['feat', '--repo', '/srv/a.git', '--image', 'not an image'],
    ]) {
      for (const json of [[], ['--json']]) {
        const args = ['sandbox', 'create', ...words, ...json]
        const built = builtCli(args, {cwd: repo, env: childEnv})
        const viaOclif = await yard(args, {cwd: repo, env: childEnv})
        expect(built.oclif, args.join(' ')).to.equal(false)
        expect(built.status, built.stderr).to.equal(2)
        expect({status: built.status, stdout: built.stdout, stderr: built.stderr}, args.join(' ')).to.deep.equal({
          status: viaOclif.exitCode,
          stdout: viaOclif.stdout,
          stderr: viaOclif.stderr,
        })
      }
    }

    // A flag the fast path does not take goes to oclif, which refuses it as it always did.
    const unknown = builtCli(['sandbox', 'create', 'feat', '--repo', '/srv/a.git', '--size', '2'], {
      cwd: repo,
      env: childEnv,
    })
    expect(unknown).to.deep.include({status: 2, oclif: true})
    expect(unknown.stderr).to.include('--size')
    // A failure that is no YardError (here the state directory's locks/ is a file) reads as oclif's.
    const broken = tempDir('yard-fast-create-broken')
    writeFileSync(path.join(broken, 'locks'), '')
    const brokenEnv = {YARD_STATE_DIR: broken, YARD_DATA_DIR: data}
    const words = ['sandbox', 'create', 'feat', '--repo', '/srv/a.git']
    const plain = builtCli(words, {cwd: repo, env: brokenEnv})
    expect(plain).to.deep.include({status: 1, oclif: true, stdout: ''})
    // oclif's pretty print: indented, wrapped to the width, with the error's code.
    expect(plain.stderr).to.match(/^ {4}Error: EEXIST: /)
    expect(plain.stderr).to.match(/\n {4}Code: EEXIST\n$/)
    const json = builtCli([...words, '--json'], {cwd: repo, env: brokenEnv})
    const jsonViaOclif = await yard([...words, '--json'], {cwd: repo, env: brokenEnv})
    expect(json).to.deep.include({status: 1, oclif: false})
    expect(JSON.parse(json.stdout)).to.deep.equal(jsonViaOclif.json)
    expect(jsonViaOclif.json).to.have.nested.property('error.code', 'EEXIST')

    // So does a NAME after --repo, which oclif reads as a second repository: no name, refused.
    const late = builtCli(['sandbox', 'create', '--repo', '/srv/a.git', 'feat', '--quiet'], {cwd: repo, env: childEnv})
    expect(late).to.deep.include({status: 2, oclif: true})
    expect(late.stderr).to.include('Missing 1 required arg')
  })
})
