/**
 * The config cache (src/core/config/config-cache.ts): a file unchanged since it was validated is
 * not parsed again; any change, a racy file, an invalid one or an unwritable cache directory
 * never gives a stale or half-written result.
 */
import {expect} from 'chai'
import {existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {RACY_MS} from '../../../src/core/config/config-cache.js'
import {configCachePath, loadConfig} from '../../../src/core/config/config.js'
import {InputError} from '../../../src/sdk/errors.js'
import {cleanupTemp, tempDir, writeFile} from '../../support/repo.js'

/** A main checkout with a `.git` directory and the given files, and its cache in a state directory of its own. */
function checkout(files: Record<string, string>): {main: string; cache: string} {
  const main = path.join(tempDir('config-cache'), 'app')
  mkdirSync(path.join(main, '.git'), {recursive: true})
  for (const [name, content] of Object.entries(files)) writeFile(main, name, content)
  return {main, cache: configCachePath({YARD_STATE_DIR: tempDir('state')}, path.join(main, '.git'))}
}

const load = async (main: string, cache: string, checkoutPath?: string) =>
  loadConfig({
    mainPath: main,
    env: {YARD_STATE_DIR: '/state'},
    cache,
    ...(checkoutPath && {checkout: {path: checkoutPath, name: 'feat'}}),
  })

/** Past the racy window, so what is validated now is kept. */
const age = async () => new Promise((resolve) => setTimeout(resolve, RACY_MS + 100))

interface Stored {
  entries: Record<string, {tables: {tables: Record<string, Record<string, unknown>>}}>
}

describe('config cache (DESIGN.md §9 "Start-up")', function () {
  this.timeout(30_000)
  // The checkouts are made first and aged once: what is validated in the tests is then kept.
  let fixtures: Record<string, {main: string; cache: string}>

  before(async () => {
    fixtures = {
      kept: checkout({
        'yard.toml': '[project]\nprefix = "shop"\n\n[ports]\nAPP_PORT = 3000\n',
        'yard.local.toml': '[worktree-offsets]\nfeat = 7\n',
      }),
      changed: checkout({'yard.toml': '[project]\nprefix = "aaaa"\n'}),
      worktree: checkout({'yard.toml': '[ports]\nAPP_PORT = 3000\n'}),
      invalid: checkout({'yard.toml': '[ports]\nAPP_PORT = "x"\n'}),
      unreadable: checkout({'yard.toml': '[project]\nprefix = "shop"\n'}),
      blocked: checkout({'yard.toml': '[project]\nprefix = "blocked"\n', 'in-the-way': ''}),
      shapes: checkout({
        'yard.toml': '[project]\nprefix = "shop"\n',
        'yard.local.toml': '[worktree-offsets]\nfeat = 7\n',
      }),
    }
    writeFile(
      path.join(path.dirname(fixtures.worktree.main), 'app-worktrees', 'feat'),
      'yard.toml',
      '[ports]\nAPP_PORT = 4000\n',
    )
    await age()
  })

  after(cleanupTemp)

  it('keeps what an unchanged file gave and uses it: the kept tables answer while the signature holds', async () => {
    const {main, cache} = fixtures.kept
    const first = await load(main, cache)
    expect(existsSync(cache)).to.equal(true)
    const stored = JSON.parse(readFileSync(cache, 'utf8')) as Stored
    expect(Object.keys(stored.entries).sort()).to.deep.equal([
      path.join(main, 'yard.local.toml'),
      path.join(main, 'yard.toml'),
    ])
    // A bigint (a pin) comes back a bigint.
    const second = await load(main, cache)
    expect(second).to.deep.equal(first)
    expect(second.pins.feat).to.equal(7n)
    // What answers is the kept entry, not the file: an entry edited in place is believed.
    stored.entries[path.join(main, 'yard.toml')].tables.tables.project.prefix = 'kept'
    writeFileSync(cache, JSON.stringify(stored))
    expect((await load(main, cache)).project.prefix).to.equal('kept')
  })

  it('reads a file again once it changed, even to the same size at once', async () => {
    const {main, cache} = fixtures.changed
    expect((await load(main, cache)).project.prefix).to.equal('aaaa')
    writeFile(main, 'yard.toml', '[project]\nprefix = "bbbb"\n')
    expect((await load(main, cache)).project.prefix).to.equal('bbbb')
    // Changed within the racy window: read, not kept; so the next edit is read too.
    writeFile(main, 'yard.toml', '[project]\nprefix = "cccc"\n')
    expect((await load(main, cache)).project.prefix).to.equal('cccc')
    const stored = JSON.parse(readFileSync(cache, 'utf8')) as Stored
    expect(stored.entries[path.join(main, 'yard.toml')].tables.tables.project.prefix).to.equal('aaaa')
  })

  it("keeps a worktree's own yard.toml apart from main's", async () => {
    const {main, cache} = fixtures.worktree
    const feat = path.join(path.dirname(main), 'app-worktrees', 'feat')
    expect((await load(main, cache, feat)).ports).to.deep.equal({APP_PORT: 4000})
    expect((await load(main, cache)).ports).to.deep.equal({APP_PORT: 3000})
    expect((await load(main, cache, feat)).ports).to.deep.equal({APP_PORT: 4000})
  })

  it('never keeps an invalid file: it is refused on every load', async () => {
    const {main, cache} = fixtures.invalid
    for (let run = 0; run < 2; run++) {
      const error = await load(main, cache).catch((error: unknown) => error)
      expect(error).to.be.instanceOf(InputError)
      expect((error as InputError).message).to.contain('invalid value at ports.APP_PORT')
    }

    expect(existsSync(cache)).to.equal(false)
  })

  it('reads a file again when its kept entry is not of the shape yard writes (a cache edited by hand)', async () => {
    const {main, cache} = fixtures.shapes
    const first = await load(main, cache)
    const stored = JSON.parse(readFileSync(cache, 'utf8')) as {entries: Record<string, Record<string, unknown>>}
    const file = path.join(main, 'yard.toml')
    const local = path.join(main, 'yard.local.toml')
    for (const [name, tables] of [
      [file, null],
      [file, {}],
      [file, {tables: {ports: null}}],
      [file, {tables: {project: {prefix: 'shop'}}, trust: {}}],
      [local, {tables: {}}],
      [local, {tables: {}, trust: {feat: 'maybe'}}],
    ] as const) {
      writeFileSync(
        cache,
        JSON.stringify({...stored, entries: {...stored.entries, [name]: {...stored.entries[name], tables}}}),
      )
      expect(await load(main, cache), JSON.stringify(tables)).to.deep.equal(first)
    }
  })

  it('works without a cache when the cache file is unreadable or its directory cannot be written', async () => {
    const {main, cache} = fixtures.unreadable
    mkdirSync(path.dirname(cache), {recursive: true})
    writeFileSync(cache, '{not json')
    expect((await load(main, cache)).project.prefix).to.equal('shop')
    expect(readFileSync(cache, 'utf8')).to.contain('"shop"')
    // A cache below a file (root ignores permissions, so no chmod): it cannot be made, and is not.
    const {blocked} = fixtures
    const below = path.join(blocked.main, 'in-the-way', 'config-cache.json')
    expect((await load(blocked.main, below)).project.prefix).to.equal('blocked')
    expect((await load(blocked.main, below)).project.prefix).to.equal('blocked')
  })
})
