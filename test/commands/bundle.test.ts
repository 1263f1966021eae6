/**
 * The built CLI is bundled (scripts/bundle.mjs): commands load a few files of their own instead
 * of execa's, zod's and yaml's hundreds, and the plugin SDK shares yard's copy of the errors.
 */
import {expect} from 'chai'
import {execFileSync} from 'node:child_process'
import {existsSync, readdirSync, readFileSync} from 'node:fs'
import path from 'node:path'
import {pathToFileURL} from 'node:url'

import {projectRoot} from '../support/oclif-config.js'

const dist = path.join(projectRoot, 'dist')

/** Every .js file under dist/, relative. */
function builtFiles(): string[] {
  return readdirSync(dist, {recursive: true, encoding: 'utf8'}).filter((file) => file.endsWith('.js'))
}

describe('the bundled build (scripts/bundle.mjs)', function () {
  this.timeout(180_000)

  before(() => {
    if (!existsSync(path.join(dist, 'commands', 'ports.js')))
      execFileSync('npm', ['run', '--silent', 'build:cli'], {cwd: projectRoot, stdio: 'ignore'})
  })

  it('inlines execa, nano-spawn, signal-exit, zod, yaml, smol-toml and env-paths and keeps oclif and the large packages external', () => {
    const imports = new Set<string>()
    for (const file of builtFiles()) {
      for (const match of readFileSync(path.join(dist, file), 'utf8').matchAll(
        /(?:^|[;\s])(?:import|export)\s[^"']*?from\s*["']([^"'.][^"']*)["']|import\(\s*["']([^"'.][^"']*)["']\s*\)/gm,
      ))
        imports.add(match[1] ?? match[2])
    }

    const packages = [...imports].filter((name) => !name.startsWith('node:'))
    for (const inlined of ['execa', 'nano-spawn', 'signal-exit', 'zod', 'yaml', 'smol-toml', 'env-paths'])
      expect(packages, inlined).not.to.include(inlined)
    expect(packages).to.include('@oclif/core')
    // Imported lazily by the in-process git reads (src/sdk/git-read.ts), never inlined.
    expect(packages).to.include.members(['isomorphic-git/managers', 'isomorphic-git/models'])
    // tsc's per-module files are gone: only entry points and chunks remain.
    expect(builtFiles().filter((file) => file.startsWith(`core${path.sep}`))).to.deep.equal([])
    expect(builtFiles().some((file) => file.startsWith(`chunks${path.sep}`))).to.equal(true)
  })

  it('never imports an inlined CommonJS package lazily by itself: its chunk would give a default export only', () => {
    // esbuild writes such a chunk as `export default require_x();` (yaml is one): a lazy
    // `import('yaml')` in the bundle has no `stringify`, although it has from source.
    const files = builtFiles()
    const wrappers = files.filter((file) =>
      /^export default require_\w+\(\);$/m.test(readFileSync(path.join(dist, file), 'utf8')),
    )
    for (const file of files) {
      const text = readFileSync(path.join(dist, file), 'utf8')
      for (const wrapper of wrappers)
        expect(text, `${file} imports ${wrapper}`).not.to.include(`import("./${path.basename(wrapper)}")`)
    }
  })

  it("inlines zod's English messages only, not its other locales", () => {
    const sources = builtFiles().flatMap((file) => {
      const map = path.join(dist, `${file}.map`)
      return existsSync(map) ? (JSON.parse(readFileSync(map, 'utf8')) as {sources: string[]}).sources : []
    })
    const locales = sources
      .filter((source) => /zod\/v4\/locales\/[^/]+\.js$/.test(source))
      .map((source) => path.basename(source))
    expect(locales).to.include('en.js')
    expect(locales).not.to.include('ar.js')
    expect(locales).not.to.include('de.js')
  })

  it('gives the package root and the plugin SDK one copy of the error classes', async () => {
    const root = (await import(pathToFileURL(path.join(dist, 'index.js')).href)) as Record<string, unknown>
    const sdk = (await import(pathToFileURL(path.join(dist, 'backend.js')).href)) as Record<string, unknown>
    expect(root.InputError).to.be.a('function')
    expect(sdk.InputError).to.equal(root.InputError)
    expect(sdk.RefusedError).to.equal(root.RefusedError)
  })

  it('runs a command from the bundle: `yard ports --json` in a fresh repository', () => {
    const repo = execFileSync('mktemp', ['-d'], {encoding: 'utf8'}).trim()
    try {
      execFileSync('git', ['init', '-q', '-b', 'main', repo])
      const out = execFileSync(process.execPath, [path.join(projectRoot, 'bin', 'run.js'), 'ports', '--json'], {
        cwd: repo,
        encoding: 'utf8',
        env: {...process.env, NODE_ENV: 'production', YARD_STATE_DIR: path.join(repo, '.state')},
      })
      expect(JSON.parse(out)).to.be.an('object')
    } finally {
      execFileSync('rm', ['-rf', repo])
    }
  })
})
