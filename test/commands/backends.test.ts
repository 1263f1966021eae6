import {runCommand} from '@oclif/test'
import {expect} from 'chai'

import type {BackendEntry} from '../../src/core/registry/registry.js'

import {loadTestConfig} from '../support/oclif-config.js'

const badAndGood = ['good', 'throwing', 'malformed', 'future']

const rootPlugin = '@yard-dev/cli'

describe('yard backends', () => {
  it('--json lists the good fixture as ok and the bad ones as broken or incompatible, with reasons', async () => {
    const {stdout, error, result} = await runCommand<BackendEntry[]>(
      ['backends', '--json'],
      await loadTestConfig(badAndGood),
    )
    expect(error).to.equal(undefined)
    const listed = JSON.parse(stdout) as BackendEntry[]
    expect(listed).to.deep.equal(result)
    const fixtures = listed.filter((entry) => entry.plugin !== rootPlugin)
    expect(
      fixtures.map((entry) => [entry.plugin, entry.id, entry.kind, entry.contract, entry.status, entry.error ?? null]),
    ).to.deep.equal([
      ['yard-fixture-good', 'fixture-machine', 'machine', 1, 'ok', null],
      ['yard-fixture-good', 'fixture-stack', 'stack', '1.x', 'ok', null],
      ['yard-fixture-throwing', null, null, null, 'broken', 'its yard:backends hook threw: license server unreachable'],
      ['yard-fixture-throwing', null, null, null, 'broken', 'its yard:backends hook threw: no licence key configured'],
      [
        'yard-fixture-malformed',
        'fixture-db',
        'database',
        1,
        'broken',
        'malformed backend factory: kind: must be one of machine, stack, cache, sandbox, got "database"',
      ],
      [
        'yard-fixture-malformed',
        'fixture-cache',
        'cache',
        1,
        'broken',
        'malformed backend factory: create: must be a function, got undefined',
      ],
      [
        'yard-fixture-malformed',
        'Fixture_Stack',
        'stack',
        'one',
        'broken',
        'malformed backend factory: id: must be lowercase letters, digits and dashes, starting with a letter or digit, got "Fixture_Stack"; contract: must be a contract version such as 1, "1" or "1.x", got "one"',
      ],
      ['yard-fixture-malformed', null, null, null, 'broken', 'backend factory #4 is null, not an object'],
      [
        'yard-fixture-malformed',
        null,
        null,
        null,
        'broken',
        'its yard:backends hook returned an object, not an array of backend factories',
      ],
      [
        'yard-fixture-future',
        'future-machine',
        'machine',
        '2.0',
        'incompatible',
        'implements backend contract 2, but this yard supports contract 1: install a release of yard-fixture-future made for contract 1, or a yard that supports contract 2',
      ],
    ])
    expect(fixtures[0]).to.deep.equal({
      id: 'fixture-machine',
      kind: 'machine',
      plugin: 'yard-fixture-good',
      version: '1.2.3',
      contract: 1,
      status: 'ok',
    })
  })

  it('prints a table with a header and one row per entry, "-" for what a plugin did not give', async () => {
    const {stdout, error} = await runCommand(['backends'], await loadTestConfig(badAndGood))
    expect(error).to.equal(undefined)
    const rows = stdout
      .trimEnd()
      .split('\n')
      .map((line) => line.split(/ {2,}/))
    expect(rows[0]).to.deep.equal(['ID', 'KIND', 'PLUGIN', 'VERSION', 'CONTRACT', 'STATUS', 'ERROR'])
    const fixtureRows = rows.slice(1).filter((row) => row[2].startsWith('yard-fixture-'))
    expect(fixtureRows).to.have.length(10)
    expect(fixtureRows[0]).to.deep.equal(['fixture-machine', 'machine', 'yard-fixture-good', '1.2.3', '1', 'ok', '-'])
    expect(fixtureRows[2]).to.deep.equal([
      '-',
      '-',
      'yard-fixture-throwing',
      '0.1.0',
      '-',
      'broken',
      'its yard:backends hook threw: license server unreachable',
    ])
    expect(fixtureRows[9].slice(0, 6)).to.deep.equal([
      'future-machine',
      'machine',
      'yard-fixture-future',
      '2.0.0',
      '2.0',
      'incompatible',
    ])
  })

  it('lists only the CLI’s own backends, all ok, when no other plugin is linked', async () => {
    const {stdout, error} = await runCommand(['backends', '--json'], await loadTestConfig())
    expect(error).to.equal(undefined)
    const listed = JSON.parse(stdout) as BackendEntry[]
    expect(listed.filter((entry) => entry.plugin !== rootPlugin || entry.status !== 'ok')).to.deep.equal([])
  })

  it('leaves other commands working while bad plugins are installed', async () => {
    const version = await runCommand(['--version'], await loadTestConfig(badAndGood))
    expect(version.error).to.equal(undefined)
    expect(version.stdout).to.match(/^@yard-dev\/cli\/0\.1\.0 /)
    const help = await runCommand(['help', 'backends'], await loadTestConfig(badAndGood))
    expect(help.error).to.equal(undefined)
    expect(help.stdout).to.include('yard backends [--json]')
  })
})
