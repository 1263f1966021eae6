/**
 * Submodules in a sandbox on real `podman kube play` (DESIGN.md §5.1, §5.2): a relative-url
 * submodule with one nested a level deeper gets caches of its own (keyed by the url resolved
 * against the upstream, not the cache path), and attach checks them out from those caches with
 * no upstream reachable.
 */
import {expect} from 'chai'
import {existsSync, renameSync} from 'node:fs'
import path from 'node:path'

import {repoIdentity} from '../../../src/sdk/repo-identity.js'
import {ensureDefaultImage, sweep} from '../../support/podman.js'
import {cleanupTemp, git, tempDir, writeFile} from '../../support/repo.js'
import {cli, inPod, makeApp, SANDBOX_TEST_PREFIX} from './support.js'

const prefix = `${SANDBOX_TEST_PREFIX}m`
const pod = `${prefix}-subs`
const FILE = ['-c', 'protocol.file.allow=always']

/**
 * A bare repository `<dir>/<name>.git` with one commit of `files` and relative-url submodules
 * `../<sub>.git` at `<sub>`.
 */
function upstream(dir: string, name: string, files: Record<string, string>, submodules: string[] = []): string {
  const work = path.join(dir, `src-${name}`)
  git(dir, 'init', '-q', '-b', 'main', work)
  for (const [file, content] of Object.entries(files)) writeFile(work, file, content)
  for (const sub of submodules) git(work, ...FILE, 'submodule', 'add', '-q', `../${sub}.git`, sub)
  git(work, 'add', '-A')
  git(work, 'commit', '-q', '-m', name)
  const bare = path.join(dir, `${name}.git`)
  git(dir, 'init', '-q', '--bare', '-b', 'main', bare)
  git(work, 'push', '-q', bare, 'main')
  return bare
}

describe('submodules in a sandbox on podman kube play (DESIGN.md §5.2)', function () {
  this.timeout(240_000)

  before(async () => {
    sweep(SANDBOX_TEST_PREFIX)
    await ensureDefaultImage()
  })

  after(() => {
    sweep(SANDBOX_TEST_PREFIX)
    cleanupTemp()
  })

  it('caches a relative-url submodule and its nested one by their upstream urls; attach checks both out at their recorded commits with every upstream gone', () => {
    const dir = tempDir('yardtest-subs')
    upstream(dir, 'nested', {'n.txt': 'nested\n'})
    upstream(dir, 'lib', {'l.txt': 'lib\n'}, ['nested'])
    const app = upstream(dir, 'app', {'a.txt': 'app\n'}, ['lib'])
    const recorded = {
      lib: git(path.join(dir, 'src-app'), 'rev-parse', 'HEAD:lib'),
      nested: git(path.join(dir, 'src-lib'), 'rev-parse', 'HEAD:nested'),
    }
    const fixture = makeApp(prefix)
    const created = cli(fixture, ['sandbox', 'create', 'subs', '--repo', app, '--branch', 'feat', '--json'])
    expect(created.status, created.stderr).to.equal(0)
    // Each submodule's cache is keyed by the url resolved against the upstream, never /repos/….
    const caches = path.join(fixture.state, 'caches')
    for (const name of ['app', 'lib', 'nested'])
      expect(existsSync(path.join(caches, repoIdentity(path.join(dir, `${name}.git`)).key, 'HEAD')), name).to.equal(
        true,
      )
    expect(JSON.parse(created.stdout).slots[0].submodules.failed).to.deep.equal([])

    const status = cli(fixture, ['exec', 'subs/feat', '--', 'git', 'submodule', 'status', '--recursive'])
    expect(status.status, status.stderr).to.equal(0)
    // A leading space: checked out at the recorded commit.
    expect(
      status.stdout
        .trimEnd()
        .split('\n')
        .map((line) => line.replace(/ \(.*\)$/, '')),
    ).to.deep.equal([` ${recorded.lib} lib`, ` ${recorded.nested} lib/nested`])
    expect(inPod(pod, 'cat', '/work/app/feat/lib/nested/n.txt')).to.equal('nested')
    expect(inPod(pod, 'cat', '/work/app/default/lib/l.txt')).to.equal('lib')

    // No upstream is reachable now (nor was one from the pod): a new branch still gets its submodules.
    for (const name of ['app', 'lib', 'nested'])
      renameSync(path.join(dir, `${name}.git`), path.join(dir, `${name}-gone.git`))
    const attached = cli(fixture, ['sandbox', 'attach', 'subs', '--branch', 'other', '--json'])
    expect(attached.status, attached.stderr).to.equal(0)
    const other = inPod(pod, 'git', '-C', '/work/app/other', 'submodule', 'status', '--recursive')
    // Not `-` (uninitialised) or `+` (another commit); inPod trims the first line's leading space.
    expect(other).to.match(new RegExp(`^ ?${recorded.lib} lib( |$)`, 'm'))
    expect(other).to.match(new RegExp(`^ ${recorded.nested} lib/nested( |$)`, 'm'))
    // A submodule fetches from its cache and pushes to its own url.
    expect(inPod(pod, 'git', '-C', '/work/app/other/lib', 'config', 'remote.origin.url')).to.equal(
      path.join(dir, 'lib.git'),
    )
    expect(inPod(pod, 'git', '-C', '/work/app/other/lib', 'remote', 'get-url', 'origin')).to.equal(
      `/repos/${repoIdentity(path.join(dir, 'lib.git')).key}`,
    )
    expect(inPod(pod, 'git', '-C', '/work/app/other/lib', 'fetch', '--quiet', 'origin')).to.equal('')
    expect(inPod(pod, 'git', '-C', '/work/app/other/lib', 'remote', 'get-url', '--push', 'origin')).to.equal(
      path.join(dir, 'lib.git'),
    )
  })
})
