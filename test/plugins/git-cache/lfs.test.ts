/**
 * LFS objects in a cache (DESIGN.md §5.1): fetched into the cache's own lfs/objects when the
 * repository uses LFS (or `lfs: "all"`), never with `lfs: "off"`; a clone made from the cache
 * reads them from there with the upstream gone.
 */
import {expect} from 'chai'
import {createHash, randomBytes} from 'node:crypto'
import {existsSync, readFileSync, renameSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {cleanupTemp, tempDir} from '../../support/repo.js'
import {git, harness} from './support.js'

const hasLfs = (() => {
  try {
    git(process.cwd(), ['lfs', 'version'])
    return true
  } catch {
    return false
  }
})()

/** A bare `<dir>/app.git` whose main branch holds a 5 MB file in LFS; returns it and the file's sha256. */
function lfsUpstream(dir: string): {bare: string; sha256: string; oid: string} {
  const work = path.join(dir, 'src')
  git(dir, ['init', '-q', '-b', 'main', work])
  git(work, ['lfs', 'install', '--local'])
  git(work, ['lfs', 'track', '*.bin'])
  const bytes = randomBytes(5 * 1024 * 1024)
  writeFileSync(path.join(work, 'big.bin'), bytes)
  git(work, ['add', '-A'])
  git(work, ['commit', '-q', '-m', 'lfs'])
  const bare = path.join(dir, 'app.git')
  git(dir, ['init', '-q', '--bare', '-b', 'main', bare])
  // Through a remote: git-lfs finds its endpoint (a local path, served by its file transfer) there.
  git(work, ['remote', 'add', 'origin', bare])
  git(work, ['push', '-q', 'origin', 'main'])
  const sha256 = createHash('sha256').update(bytes).digest('hex')
  return {bare, sha256, oid: sha256}
}

describe('git-cache: LFS objects (DESIGN.md §5.1)', function () {
  this.timeout(60_000)

  afterEach(cleanupTemp)

  before(() => {
    // git-lfs is a system package (scripts/setup-system installs it).
    if (!hasLfs) throw new Error('git-lfs is not installed: run scripts/setup-system')
  })

  it('a cache of a repository with filter=lfs fetches its LFS objects; a clone of the cache checks the file out with the upstream gone', async () => {
    const dir = tempDir('yard-lfs')
    const {bare, sha256, oid} = lfsUpstream(dir)
    const h = harness()
    await h.cache.add(h.root, bare)
    const cached = path.join(h.paths(bare).repo, 'lfs', 'objects', oid.slice(0, 2), oid.slice(2, 4), oid)
    expect(existsSync(cached)).to.equal(true)
    expect(h.warnings).to.deep.equal([])
    renameSync(bare, path.join(dir, 'gone.git'))
    const clone = path.join(dir, 'clone')
    git(dir, ['clone', '-q', '--shared', h.paths(bare).repo, clone])
    expect(
      createHash('sha256')
        .update(readFileSync(path.join(clone, 'big.bin')))
        .digest('hex'),
    ).to.equal(sha256)
  })

  it('lfs "off" fetches no LFS object', async () => {
    const {bare} = lfsUpstream(tempDir('yard-lfs'))
    const h = harness()
    await h.cache.add(h.root, bare, {lfs: 'off'})
    expect(existsSync(path.join(h.paths(bare).repo, 'lfs', 'objects'))).to.equal(false)
  })
})
