/**
 * The plugin guide's route for a plugin outside the repository (docs/plugins.md, DESIGN.md §7):
 * with no SDK on a registry, `npm pack` of a yard checkout is the SDK. The example plugin's
 * sources, copied out of the repository, install the packed tarball, build against it, install
 * into the built CLI, and `yard backends` lists the backend ok.
 */
import {expect} from 'chai'
import {execFile} from 'node:child_process'
import {cpSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {promisify} from 'node:util'

import type {BackendEntry} from '../../src/core/registry/registry.js'

import {builtPackage} from '../support/built-package.js'
import {cleanupTemp, tempDir} from '../support/repo.js'
import {freshHomes, yardIn} from './support.js'

const run = promisify(execFile)

describe('a plugin built outside the repository against the packed SDK (docs/plugins.md)', function () {
  this.timeout(180_000)
  let root: string

  before(async function () {
    this.timeout(300_000)
    root = await builtPackage()
  })

  afterEach(cleanupTemp)

  it('npm pack of the checkout, npm install of the tarball, build, plugins install: backends lists it ok', async () => {
    const outside = tempDir('yard-outside')
    // The checkout (built) is packed as npm would publish it; its prepack build already ran.
    await run('npm', ['pack', '--ignore-scripts', '--pack-destination', outside], {cwd: root})
    const tarball = readdirSync(outside).find((name) => name.endsWith('.tgz'))
    expect(tarball).to.match(/^yard-dev-cli-\d+\.\d+\.\d+\.tgz$/)
    const plugin = path.join(outside, 'my-backend')
    for (const entry of ['src', 'tsconfig.json', 'package.json', '.npmrc'])
      cpSync(path.join(root, 'examples', 'procfile-stack', entry), path.join(plugin, entry), {recursive: true})
    const manifest = JSON.parse(readFileSync(path.join(plugin, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>
    }
    manifest.dependencies['@yard-dev/cli'] = `file:../${tarball}`
    writeFileSync(path.join(plugin, 'package.json'), JSON.stringify(manifest, null, 2))
    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], {
      cwd: plugin,
      maxBuffer: 16 * 1024 * 1024,
    })
    await run('npm', ['run', 'build'], {cwd: plugin})

    const homes = freshHomes()
    yardIn(root, homes, ['plugins', 'install', plugin, '--yes'])
    const entries = yardIn(root, homes, ['backends', '--json']).json as BackendEntry[]
    expect(entries.find((entry) => entry.id === 'procfile-stack')).to.deep.equal({
      id: 'procfile-stack',
      kind: 'stack',
      plugin: 'procfile-stack',
      version: '1.0.0',
      contract: 1,
      status: 'ok',
    })
    expect(yardIn(root, homes, ['backends']).stdout).to.match(/^procfile-stack +stack .* ok/m)
  })
})
