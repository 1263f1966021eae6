/**
 * `yard plugins install` from a path or a git url asks first (DESIGN.md §7, Appendix B): driven
 * through the built CLI with a temporary XDG_DATA_HOME, without a terminal and on one (`script`
 * gives the child a pseudo-terminal).
 */
import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import {existsSync, readFileSync} from 'node:fs'
import path from 'node:path'

import type {BackendEntry} from '../../src/core/registry/registry.js'

import {freshHomes, type Homes, killRecorded, userPlugins, yardIn} from '../examples/support.js'
import {builtPackage} from '../support/built-package.js'
import {cleanupTemp} from '../support/repo.js'

const quote = (word: string) => `'${word.replaceAll("'", String.raw`'\''`)}'`

/** Runs the built yard on a pseudo-terminal, typing `input`; the exit code and what the terminal showed. */
function onTerminal(root: string, homes: Homes, args: string[], input: string): {status: number; screen: string} {
  const command = [process.execPath, path.join(root, 'bin', 'run.js'), ...args].map(quote).join(' ')
  const env = {...process.env, ...homes.env}
  delete env.NODE_ENV
  for (const [key, value] of Object.entries(homes.env)) if (value === undefined) delete env[key]
  const child = spawnSync('script', ['--quiet', '--return', '--command', command, '/dev/null'], {
    input,
    env,
    encoding: 'utf8',
    timeout: 60_000,
  })
  return {status: child.status ?? -1, screen: child.stdout + child.stderr}
}

/** The plugins recorded in the data directory's package.json (none when it was never written). */
function recorded(homes: Homes): unknown[] {
  const file = path.join(homes.data, 'yard', 'package.json')
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as {oclif: {plugins: unknown[]}}).oclif.plugins : []
}

describe('yard plugins install (DESIGN.md §7, Appendix B)', function () {
  this.timeout(120_000)
  let root: string
  let example: string

  before(async function () {
    this.timeout(300_000)
    root = await builtPackage()
    example = path.join(root, 'examples', 'procfile-stack')
  })

  afterEach(() => {
    killRecorded()
    cleanupTemp()
  })

  it('refuses a path or a git url without a terminal and without --yes (exit 3) and installs nothing', () => {
    const homes = freshHomes()
    for (const source of [
      example,
      'git+https://example.invalid/acme/yard-nomad.git',
      `procfile@file:${example}`,
      'procfile@npm:left-pad@1.3.0',
      'procfile@https://example.invalid/p.tgz',
    ]) {
      const refused = yardIn(root, homes, ['plugins', 'install', source], {expected: 3})
      expect(refused.stderr).to.include('note: a plugin is code that runs with your permissions every time yard runs')
      expect(refused.stderr).to.match(
        /^refused to install from the (local path \S+|git repository \S+|npm package left-pad@1\.3\.0 under the name procfile|package at \S+) without confirmation$/m,
      )
      expect(refused.stderr).to.include('fix: run again with --yes if you trust it')
    }

    expect(recorded(homes)).to.deep.equal([])
    const missing = yardIn(root, homes, ['plugins', 'install', './no-such-plugin'], {expected: 2})
    expect(missing.stderr).to.include('no-such-plugin: no such file or directory')
  })

  it('installs from a path with --yes, without asking; the backend is then ok, and uninstall removes it', () => {
    const homes = freshHomes()
    const installed = yardIn(root, homes, ['plugins', 'install', '--yes', example])
    expect(installed.stderr).to.include('note: a plugin is code that runs')
    expect(installed.stderr).to.not.include('[y/N]')
    expect(userPlugins(yardIn(root, homes, ['plugins', '--json']).json)).to.deep.equal([['procfile-stack', 'user']])
    const entries = yardIn(root, homes, ['backends', '--json']).json as BackendEntry[]
    expect(entries.find((entry) => entry.id === 'procfile-stack')).to.include({plugin: 'procfile-stack', status: 'ok'})
    yardIn(root, homes, ['plugins', 'uninstall', 'procfile-stack'])
    expect(userPlugins(yardIn(root, homes, ['plugins', '--json']).json)).to.deep.equal([])
  })

  it('asks on a terminal: no refuses (exit 3) and installs nothing, yes installs', () => {
    const homes = freshHomes()
    const declined = onTerminal(root, homes, ['plugins', 'install', example], 'n\n')
    expect(declined.status, declined.screen).to.equal(3)
    expect(declined.screen).to.include(`Install and run code from the local path ${example}? [y/N]`)
    expect(declined.screen).to.include(`refused: nothing installed from the local path ${example}`)
    expect(recorded(homes)).to.deep.equal([])
    const accepted = onTerminal(root, homes, ['plugins', 'install', example], 'y\n')
    expect(accepted.status, accepted.screen).to.equal(0)
    expect(userPlugins(yardIn(root, homes, ['plugins', '--json']).json)).to.deep.equal([['procfile-stack', 'user']])
  })

  it('links without asking, also without a terminal', () => {
    const homes = freshHomes()
    const linked = yardIn(root, homes, ['plugins', 'link', '--no-install', example])
    expect(linked.stderr).to.not.include('refused')
    expect(userPlugins(yardIn(root, homes, ['plugins', '--json']).json)).to.deep.equal([['procfile-stack', 'link']])
  })
})
