import {run} from '@oclif/core'
import {captureOutput} from '@oclif/test'
import {expect} from 'chai'
import {existsSync, readFileSync} from 'node:fs'
import path from 'node:path'

import type {CacheAddResult, CacheFetchResult, CacheStatus} from '../../src/sdk/cache.js'

import {cacheSettings} from '../../src/core/cache/cache.js'
import {createContext} from '../../src/core/kernel/context.js'
import {withoutCredentials} from '../../src/sdk/repo-url.js'
import {commitTo, makeUpstream} from '../plugins/git-cache/support.js'
import {cleanupTemp, makeRepo, tempDir, writeFile} from '../support/repo.js'
import {testConfig, yard} from '../support/yard.js'

const vectors = JSON.parse(readFileSync(new URL('../../../shared/vectors/identity.json', import.meta.url), 'utf8')) as {
  cases: Array<{url: string; scheme: string; identity: string; key: string}>
  refused: string[]
}

/**
 * Runs `yard <argv>` with argv exactly as given (runCommand joins and re-splits on spaces, so
 * "" and words with spaces would not arrive whole).
 */
async function yardArgv(
  argv: string[],
  options: {cwd: string; env: Record<string, string>},
): Promise<{exitCode: number; stdout: string; stderr: string}> {
  const config = await testConfig()
  const saved = {cwd: process.cwd(), env: {...process.env}, exitCode: process.exitCode}
  try {
    process.chdir(options.cwd)
    Object.assign(process.env, options.env)
    const result = await captureOutput(async () => run(argv, config))
    const {error} = result
    return {exitCode: error ? (error.oclif?.exit ?? 1) : 0, stdout: result.stdout, stderr: result.stderr}
  } finally {
    process.chdir(saved.cwd)
    for (const key of Object.keys(options.env)) delete process.env[key]
    Object.assign(process.env, saved.env)
    process.exitCode = saved.exitCode
  }
}

describe('yard cache', function () {
  this.timeout(60_000)
  let cwd: string
  let root: string
  let env: Record<string, string>

  beforeEach(() => {
    cwd = tempDir('yard-cwd')
    root = path.join(tempDir('yard-root'), 'caches')
    env = {YARD_CACHE_ROOT: root}
  })

  afterEach(() => cleanupTemp())

  it('identity --json gives url, scheme, identity and key for every vector', async () => {
    for (const vector of vectors.cases) {
      const run = await yard(['cache', 'identity', '--json', '--', vector.url], {cwd, env})
      expect(run.exitCode, run.stderr).to.equal(0)
      expect(run.json).to.deep.equal({
        url: withoutCredentials(vector.url.trim()),
        scheme: vector.scheme,
        identity: vector.identity,
        key: vector.key,
      })
    }

    const text = await yard(['cache', 'identity', 'git@github.com:Acme/App.git'], {cwd, env})
    expect(text.stdout).to.equal('identity  github.com/Acme/App\nkey       app-dff7d0d2\nscheme    ssh\n')
  })

  it('identity exits 2 with a reason for every refused input, and touches nothing', async () => {
    for (const url of vectors.refused) {
      const refused = await yardArgv(['cache', 'identity', '--', url], {cwd, env})
      expect(refused.exitCode, `${JSON.stringify(url)}: ${refused.stderr}`).to.equal(2)
      expect(refused.stderr)
        .to.include(`invalid repository url ${JSON.stringify(url)}`)
        .and.include('why:')
    }

    expect(existsSync(root)).to.equal(false)
  })

  it('add of a remote-helper url (ext::, fd::) exits 2 before anything is written or run', async () => {
    const pwned = path.join(tempDir('yard-pwned'), 'pwned')
    for (const url of [`ext::sh -c touch% ${pwned}`, 'fd::7', 'EXT::sh -c true']) {
      const refused = await yardArgv(['cache', 'add', '--', url], {cwd, env})
      expect(refused.exitCode, refused.stderr).to.equal(2)
      expect(refused.stderr)
        .to.include(`invalid repository url ${JSON.stringify(url)}`)
        .and.include('remote-helper url')
    }

    const identity = await yardArgv(['cache', 'identity', '--json', '--', `ext::sh -c touch% ${pwned}`], {cwd, env})
    expect(identity.exitCode).to.equal(2)
    expect(existsSync(pwned)).to.equal(false)
    expect(existsSync(root)).to.equal(false)
  })

  it('add of an option-like url creates nothing and runs nothing', async () => {
    const pwned = path.join(tempDir('yard-pwned'), 'pwned')
    for (const url of [`--upload-pack=touch ${pwned}`, `--upload-pack=touch ${pwned} #@github.com:o/r`]) {
      const refused = await yardArgv(['cache', 'add', '--', url], {cwd, env})
      expect(refused.exitCode).to.equal(2)
      expect(refused.stderr).to.include('starts with "-"')
    }

    expect(existsSync(pwned)).to.equal(false)
    expect(existsSync(root)).to.equal(false)
  })

  it('add, list --json (Appendix A shape), fetch and fetch --all', async () => {
    const upstream = makeUpstream()
    const added = await yard(['cache', 'add', upstream, '--json'], {cwd, env})
    expect(added.exitCode, added.stderr).to.equal(0)
    const result = added.json as CacheAddResult
    expect(result).to.deep.include({action: 'cloned', identity: upstream.replace(/\.git$/, ''), url: upstream})
    expect(result.path).to.equal(path.join(root, result.key))

    const again = await yard(['cache', 'add', `file://${upstream}`, '--json'], {cwd, env})
    expect((again.json as CacheAddResult).action).to.equal('adopted')

    const listed = (await yard(['cache', 'list', '--json'], {cwd, env})).json as CacheStatus[]
    expect(listed).to.have.length(1)
    expect(Object.keys(listed[0]).sort()).to.deep.equal([
      'borrowers',
      'identity',
      'key',
      'lastError',
      'lastFetched',
      'looseObjects',
      'packs',
      'path',
      'present',
      'sizeBytes',
      'stale',
      'url',
    ])
    expect(listed[0]).to.deep.include({
      key: result.key,
      url: upstream,
      present: true,
      stale: false,
      lastError: null,
      packs: 1,
      looseObjects: 0,
      borrowers: [],
    })
    expect(listed[0].sizeBytes).to.be.greaterThan(0)

    commitTo(upstream, 'main', 'b', 'two\n')
    const fetched = await yard(['cache', 'fetch', '--all', '--json'], {cwd, env})
    expect(fetched.exitCode, fetched.stderr).to.equal(0)
    expect((fetched.json as CacheFetchResult[]).map((row) => [row.key, row.fetched])).to.deep.equal([
      [result.key, true],
    ])
    const table = await yard(['cache', 'list'], {cwd, env})
    expect(table.stdout.split('\n', 1)[0].split(/ {2,}/)).to.deep.equal([
      'KEY',
      'IDENTITY',
      'STATE',
      'PACKS',
      'LOOSE',
      'SIZE',
      'BORROWERS',
    ])

    const neither = await yard(['cache', 'fetch'], {cwd, env})
    expect(neither.exitCode).to.equal(2)
    expect(neither.stderr).to.include('give a URL or --all')
  })

  it('list reads for people (fresh 3s, 26 KiB), a failed add leaves a row with its error, and adding a cached url says so and fetches', async () => {
    const upstream = makeUpstream()
    expect((await yard(['cache', 'add', upstream], {cwd, env})).exitCode).to.equal(0)
    const missing = path.join(tempDir('gone'), 'nothing.git')
    const failed = await yard(['cache', 'add', missing], {cwd, env})
    expect(failed.exitCode).to.equal(1)
    const table = (await yard(['cache', 'list'], {cwd, env})).stdout.split('\n')
    expect(table[0].split(/ {2,}/)).to.deep.equal([
      'KEY',
      'IDENTITY',
      'STATE',
      'PACKS',
      'LOOSE',
      'SIZE',
      'BORROWERS',
      'ERROR',
    ])
    const good = table.find((line) => line.includes(upstream.replace(/\.git$/, '')))!
    expect(good).to.match(/ fresh \d+s +1 +0 +\d+(\.\d)? (B|KiB|MiB) /)
    expect(good).not.to.match(/\d{4}-\d\d-\d\dT/)
    const bad = table.find((line) => line.includes(missing.replace(/\.git$/, '')))!
    expect(bad).to.match(/ failed +0 +0 +0 B +- +\S.*(does not exist|not a git repository|not found)/i)

    commitTo(upstream, 'main', 'c', 'three\n')
    const again = await yard(['cache', 'add', upstream, '--json'], {cwd, env})
    expect(again.exitCode, again.stderr).to.equal(0)
    expect(again.json).to.deep.include({action: 'adopted', cached: true})
    expect((again.json as {fetch: CacheFetchResult}).fetch).to.deep.include({fetched: true, stale: false})
    const text = await yard(['cache', 'add', upstream], {cwd, env})
    expect(text.stdout).to.match(/is already cached in .*: fetched$/m)
  })

  it('takes the root from [cache] root of the main checkout, else YARD_CACHE_ROOT, else the state dir', async () => {
    const repo = makeRepo({'yard.toml': '[cache]\nroot = "../shared-caches"\n'})
    const inRepo = await cacheSettings(createContext({cwd: repo, env: {...process.env, YARD_CACHE_ROOT: undefined}}))
    expect(inRepo).to.deep.equal({
      backend: 'git-cache',
      sandboxBackend: 'k8s-sandbox',
      root: path.join(path.dirname(repo), 'shared-caches'),
    })
    writeFile(repo, 'yard.toml', '[cache]\nbackend = "nope"\n')
    const unknown = await yard(['cache', 'list'], {cwd: repo, env: {YARD_CACHE_ROOT: undefined}})
    expect(unknown.exitCode).to.equal(2)
    expect(unknown.stderr).to.include('unknown cache backend "nope"')
    const outside = await cacheSettings(
      createContext({cwd, env: {...process.env, YARD_CACHE_ROOT: undefined, YARD_STATE_DIR: '/var/tmp/yard-state'}}),
    )
    expect(outside).to.deep.equal({
      backend: 'git-cache',
      sandboxBackend: 'k8s-sandbox',
      root: '/var/tmp/yard-state/caches',
    })
  })

  it('refuses a root that holds other files without the marker (exit 3), and a bad --interval (exit 2)', async () => {
    writeFile(root, 'notes.txt', 'mine\n')
    const run = await yard(['cache', 'add', makeUpstream()], {cwd, env})
    expect(run.exitCode).to.equal(3)
    expect(run.stderr).to.include('is not a yard cache root')
    const interval = await yard(['cache', 'agent', '--once', '--interval', 'soon'], {cwd, env})
    expect(interval.exitCode).to.equal(2)
    expect(interval.stderr).to.include('invalid --interval "soon"')
  })
})
