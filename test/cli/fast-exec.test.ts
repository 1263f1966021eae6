/**
 * `yard exec NAME -- CMD` without oclif (src/cli/fast-exec.ts): which words it takes (anything
 * oclif adds something to is left to oclif), and the registry it builds holds what oclif's gives
 * for the CLI alone. The run itself, through bin/run.js into a real box: box.test.ts.
 */
import {expect} from 'chai'
import {mkdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {fastExecRequest} from '../../src/cli/fast-exec.js'
import {builtinRegistry} from '../../src/core/registry/builtin.js'
import {loadRegistry} from '../../src/core/registry/registry.js'
import {loadTestConfig} from '../support/oclif-config.js'
import {cleanupTemp, tempDir} from '../support/repo.js'

describe('yard exec without oclif (src/cli/fast-exec.ts)', () => {
  let env: NodeJS.ProcessEnv
  let data: string

  beforeEach(() => {
    data = tempDir('yard-fast-exec-data')
    env = {HOME: tempDir('yard-fast-exec-home'), YARD_DATA_DIR: data}
  })

  after(() => cleanupTemp())

  it('takes `exec [NAME] -- CMD…` alone', () => {
    expect(fastExecRequest(['exec', 'feat', '--', 'git', 'status'], env)).to.deep.equal({
      name: 'feat',
      command: ['git', 'status'],
    })
    expect(fastExecRequest(['exec', 'sbx/work', '--', 'sh', '-c', 'exit 0'], env)).to.deep.equal({
      name: 'sbx/work',
      command: ['sh', '-c', 'exit 0'],
    })
    expect(fastExecRequest(['exec', '--', 'true'], env)).to.deep.equal({name: undefined, command: ['true']})
    // Words after `--` are the command's, flags included.
    expect(fastExecRequest(['exec', 'feat', '--', 'ls', '--help', '--'], env)?.command).to.deep.equal([
      'ls',
      '--help',
      '--',
    ])
  })

  it('leaves to oclif what oclif adds something to: flags, help, errors of the words, DEBUG', () => {
    for (const argv of [
      ['exec', '--worktree', 'feat', '--', 'true'],
      ['exec', '-w', 'feat', '--', 'true'],
      ['exec', 'feat', '--verbose', '--', 'true'],
      ['exec', '--help'],
      ['exec', 'feat', 'true'],
      ['exec', 'feat', '--'],
      ['exec', 'a', 'b', '--', 'true'],
      ['ports', '--', 'true'],
      [],
    ])
      expect(fastExecRequest(argv, env), argv.join(' ')).to.equal(undefined)
    expect(fastExecRequest(['exec', 'feat', '--', 'true'], {...env, DEBUG: '*'})).to.equal(undefined)
    expect(fastExecRequest(['exec', 'feat', '--', 'true'], {...env, YARD_DEBUG: '1'})).to.equal(undefined)
  })

  it('leaves to oclif a CLI with a user or linked plugin, or a plugin list it cannot read', () => {
    const pluginsFile = path.join(data, 'package.json')
    const request = () => fastExecRequest(['exec', 'feat', '--', 'true'], env)
    expect(request()).to.not.equal(undefined)
    writeFileSync(pluginsFile, JSON.stringify({oclif: {plugins: []}, dependencies: {}}))
    expect(request()).to.not.equal(undefined)
    writeFileSync(pluginsFile, JSON.stringify({oclif: {plugins: [{type: 'user', name: 'yard-backend-x'}]}}))
    expect(request()).to.equal(undefined)
    writeFileSync(pluginsFile, JSON.stringify({oclif: {plugins: [{type: 'link', name: 'x', root: '/x'}]}}))
    expect(request()).to.equal(undefined)
    writeFileSync(pluginsFile, '{not json')
    expect(request()).to.equal(undefined)
  })

  it("finds oclif's data directory as oclif does: YARD_DATA_DIR, XDG_DATA_HOME/yard, ~/.local/share/yard", () => {
    const xdg = tempDir('yard-fast-exec-xdg')
    mkdirSync(path.join(xdg, 'yard'))
    writeFileSync(
      path.join(xdg, 'yard', 'package.json'),
      JSON.stringify({oclif: {plugins: [{type: 'user', name: 'p'}]}}),
    )
    expect(fastExecRequest(['exec', '--', 'true'], {HOME: env.HOME, XDG_DATA_HOME: xdg})).to.equal(undefined)
    const home = env.HOME!
    mkdirSync(path.join(home, '.local', 'share', 'yard'), {recursive: true})
    writeFileSync(
      path.join(home, '.local', 'share', 'yard', 'package.json'),
      JSON.stringify({oclif: {plugins: [{type: 'user', name: 'p'}]}}),
    )
    expect(fastExecRequest(['exec', '--', 'true'], {HOME: home})).to.equal(undefined)
    expect(fastExecRequest(['exec', '--', 'true'], {HOME: tempDir('yard-fast-exec-empty-home')})).to.not.equal(
      undefined,
    )
  })

  it("builds the registry oclif's hooks give for the CLI alone", async function () {
    this.timeout(60_000)
    const viaOclif = await loadRegistry(await loadTestConfig())
    const own = await builtinRegistry()
    expect(own.entries()).to.deep.equal(viaOclif.entries())
    expect(own.entries().map((entry) => entry.status)).to.deep.equal(own.entries().map(() => 'ok'))
    for (const kind of ['machine', 'stack', 'cache', 'sandbox'] as const)
      expect(own.ids(kind)).to.deep.equal(viaOclif.ids(kind))
  })
})
