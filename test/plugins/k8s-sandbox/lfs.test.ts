/**
 * LFS in a sandbox on real `podman kube play` (DESIGN.md §5.1, §5.2): the cache holds the LFS
 * objects, so the pod's checkout has the file's real bytes with the upstream gone at attach, and
 * `sandbox list --json` counts no unresolved pointer.
 */
import {expect} from 'chai'
import {createHash, randomBytes} from 'node:crypto'
import {renameSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {ensureDefaultImage, sweep} from '../../support/podman.js'
import {cleanupTemp, git, tempDir} from '../../support/repo.js'
import {yard} from '../../support/yard.js'
import {inPod, makeApp, SANDBOX_TEST_PREFIX} from './support.js'

const prefix = `${SANDBOX_TEST_PREFIX}f`
const pod = `${prefix}-lfs`

describe('LFS in a sandbox on podman kube play (DESIGN.md §5.2)', function () {
  this.timeout(240_000)

  before(async () => {
    sweep(SANDBOX_TEST_PREFIX)
    await ensureDefaultImage()
  })

  after(() => {
    sweep(SANDBOX_TEST_PREFIX)
    cleanupTemp()
  })

  it('a 5 MB LFS file has the original bytes in the sandbox with the upstream gone at attach; list counts no unresolved pointer', async () => {
    const dir = tempDir('yardtest-lfs')
    const work = path.join(dir, 'src')
    git(dir, 'init', '-q', '-b', 'main', work)
    git(work, 'lfs', 'install', '--local')
    git(work, 'lfs', 'track', '*.bin')
    const bytes = randomBytes(5 * 1024 * 1024)
    writeFileSync(path.join(work, 'big.bin'), bytes)
    git(work, 'add', '-A')
    git(work, 'commit', '-q', '-m', 'lfs')
    const upstream = path.join(dir, 'app.git')
    git(dir, 'init', '-q', '--bare', '-b', 'main', upstream)
    git(work, 'remote', 'add', 'origin', upstream)
    git(work, 'push', '-q', 'origin', 'main')
    const fixture = makeApp(prefix)
    const run = async (args: string[]) => yard(args, {cwd: fixture.app, env: fixture.env})

    const added = await run(['cache', 'add', upstream])
    expect(added.exitCode, added.stderr).to.equal(0)
    // No remote reachable at attach: the cache's own fetch fails (stale), the LFS objects are its own.
    renameSync(upstream, path.join(dir, 'gone.git'))
    const created = await run(['sandbox', 'create', 'lfs', '--repo', upstream, '--branch', 'feat'])
    expect(created.exitCode, created.stderr).to.equal(0)
    const sha256 = createHash('sha256').update(bytes).digest('hex')
    for (const checkout of ['default', 'feat'])
      expect(inPod(pod, 'sha256sum', `/work/app/${checkout}/big.bin`).split(' ', 1)[0], checkout).to.equal(sha256)

    const listed = await run(['sandbox', 'list', '--json'])
    expect(listed.exitCode, listed.stderr).to.equal(0)
    const {worktrees} = (
      listed.json as Array<{repos: Array<{worktrees: Array<{path: string; lfsPointers?: number}>}>}>
    )[0].repos[0]
    expect(worktrees.map((row) => [row.path, row.lfsPointers])).to.deep.equal([
      ['/work/app/default', 0],
      ['/work/app/feat', 0],
    ])

    // A checkout whose LFS files stayed pointers is counted.
    inPod(
      pod,
      'env',
      'GIT_LFS_SKIP_SMUDGE=1',
      'git',
      '-C',
      '/work/app/default',
      'worktree',
      'add',
      '-q',
      '--detach',
      '/work/app/skip',
    )
    const again = await run(['sandbox', 'list', '--json'])
    const rows = (again.json as Array<{repos: Array<{worktrees: Array<{path: string; lfsPointers?: number}>}>}>)[0]
      .repos[0].worktrees
    expect(rows.find((row) => row.path === '/work/app/skip')?.lfsPointers).to.equal(1)
    const text = await run(['sandbox', 'list'])
    expect(text.stdout).to.include('/work/app/skip (detached) 1 LFS pointer unresolved')
  })
})
