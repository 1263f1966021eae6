/**
 * Submodules get caches of their own (DESIGN.md §5.1): keyed by the url resolved against the
 * superproject's upstream url, found by add and fetch of the superproject.
 */
import {expect} from 'chai'
import {existsSync, renameSync} from 'node:fs'
import path from 'node:path'

import {cleanupTemp, tempDir, writeFile} from '../../support/repo.js'
import {git, harness} from './support.js'

const FILE = ['-c', 'protocol.file.allow=always']

/** `<dir>/<name>.git` with one commit of `files` and relative-url submodules `../<sub>.git`; returns the bare path. */
function upstream(dir: string, name: string, files: Record<string, string>, submodules: string[] = []): string {
  const work = path.join(dir, `src-${name}`)
  git(dir, ['init', '-q', '-b', 'main', work])
  for (const [file, content] of Object.entries(files)) writeFile(work, file, content)
  for (const sub of submodules) git(work, [...FILE, 'submodule', 'add', '-q', `../${sub}.git`, sub])
  git(work, ['add', '-A'])
  git(work, ['commit', '-q', '-m', name])
  const bare = path.join(dir, `${name}.git`)
  git(dir, ['init', '-q', '--bare', '-b', 'main', bare])
  git(work, ['push', '-q', bare, 'main'])
  return bare
}

describe('git-cache: submodules get their own caches (DESIGN.md §5.1)', () => {
  afterEach(cleanupTemp)

  it('add caches a relative-url submodule and the one nested in it by their upstream urls; fetch of the superproject fetches their caches too', async () => {
    const dir = tempDir('yard-subs')
    const nested = upstream(dir, 'nested', {'n.txt': 'n\n'})
    const lib = upstream(dir, 'lib', {'l.txt': 'l\n'}, ['nested'])
    const app = upstream(dir, 'app', {'a.txt': 'a\n'}, ['lib'])
    const h = harness()
    const added = await h.cache.add(h.root, app)
    expect(added.submodules!.map((row) => [row.path, row.url, row.key, row.present, row.error])).to.deep.equal([
      ['lib', lib, h.paths(lib).key, true, null],
      ['nested', nested, h.paths(nested).key, true, null],
    ])
    for (const url of [lib, nested]) expect(existsSync(path.join(h.paths(url).repo, 'HEAD'))).to.equal(true)
    expect(h.warnings).to.deep.equal([])

    // A new commit of lib, recorded by app: fetching app fetches lib's cache too.
    const srcLib = path.join(dir, 'src-lib')
    writeFile(srcLib, 'l2.txt', 'l2\n')
    git(srcLib, ['add', '-A'])
    git(srcLib, ['commit', '-q', '-m', 'l2'])
    git(srcLib, ['push', '-q', lib, 'main'])
    const fetched = await h.cache.fetch(h.root, app)
    expect(fetched.submodules!.map((row) => row.key)).to.deep.equal([h.paths(lib).key, h.paths(nested).key])
    expect(git(h.paths(lib).repo, ['rev-parse', 'main'])).to.equal(git(srcLib, ['rev-parse', 'HEAD']))
  })

  it("a submodule whose clone fails is a warning and an entry with its error; the superproject's cache is whole", async () => {
    const dir = tempDir('yard-subs')
    upstream(dir, 'lib', {'l.txt': 'l\n'})
    const app = upstream(dir, 'app', {'a.txt': 'a\n'}, ['lib'])
    // lib disappears: its clone fails.
    renameSync(path.join(dir, 'lib.git'), path.join(dir, 'lib-gone.git'))
    const h = harness()
    const added = await h.cache.add(h.root, app)
    expect(added.action).to.equal('cloned')
    expect(added.submodules).to.have.length(1)
    expect(added.submodules![0].present).to.equal(false)
    expect(added.submodules![0].error).to.include('could not clone')
    expect(h.warnings.join('\n')).to.include('the submodule lib')
  })
})
