/**
 * A sandbox made from a local-path url (DESIGN.md §5.2): create warns that the pod cannot push
 * there, and `yard sandbox pull` brings its commits into the main checkout through the runtime.
 */
import {expect} from 'chai'

import {ensureDefaultImage, sweep} from '../../support/podman.js'
import {cleanupTemp, git} from '../../support/repo.js'
import {yard} from '../../support/yard.js'
import {inPod, makeApp, makeUpstream, SANDBOX_TEST_PREFIX} from './support.js'

const prefix = `${SANDBOX_TEST_PREFIX}u`
const pod = `${prefix}-pull`

describe('yard sandbox pull (DESIGN.md §5.2)', function () {
  this.timeout(240_000)

  before(async () => {
    sweep(SANDBOX_TEST_PREFIX)
    await ensureDefaultImage()
  })

  after(() => {
    sweep(SANDBOX_TEST_PREFIX)
    cleanupTemp()
  })

  it('warns at create that the pod cannot push to a host path; pull fetches the branch and prints the ref; a diverged local branch is refused without --force', async () => {
    const upstream = makeUpstream('pull')
    const fixture = makeApp(prefix)
    const run = async (args: string[]) => yard(args, {cwd: fixture.app, env: fixture.env})
    const created = await run(['sandbox', 'create', 'pull', '--repo', upstream, '--branch', 'feat/x'])
    expect(created.exitCode, created.stderr).to.equal(0)
    expect(created.stderr).to.include(`${upstream} is a path on this host, which the sandbox pod cannot push to`)
    expect(created.stderr).to.include('yard sandbox pull pull/feat/x')
    inPod(
      pod,
      'sh',
      '-c',
      'cd /work/pull/feat-x && echo work > work.txt && git add work.txt && git commit -q -m "work in the sandbox"',
    )
    const commit = inPod(pod, 'git', '-C', '/work/pull/feat-x', 'rev-parse', 'HEAD')

    const pulled = await run(['sandbox', 'pull', 'pull/feat/x'])
    expect(pulled.exitCode, pulled.stderr).to.equal(0)
    expect(pulled.stdout).to.include(`refs/remotes/sandbox/pull/feat/x at ${commit}`)
    expect(git(fixture.app, 'rev-parse', 'refs/remotes/sandbox/pull/feat/x')).to.equal(commit)
    expect(git(fixture.app, 'log', '-1', '--format=%s', commit)).to.equal('work in the sandbox')

    const local = await run(['sandbox', 'pull', 'pull/feat-x', '--branch', 'from-sandbox', '--json'])
    expect(local.exitCode, local.stderr).to.equal(0)
    expect(local.json).to.deep.include({
      ref: 'refs/remotes/sandbox/pull/feat/x',
      local: {ref: 'refs/heads/from-sandbox', action: 'created'},
    })
    expect(git(fixture.app, 'rev-parse', 'refs/heads/from-sandbox')).to.equal(commit)

    // A local commit the sandbox lacks: refused (exit 3) and left as it was, unless --force.
    git(
      fixture.app,
      'update-ref',
      'refs/heads/from-sandbox',
      git(fixture.app, 'commit-tree', '-p', commit, '-m', 'local', `${commit}^{tree}`),
    )
    const mine = git(fixture.app, 'rev-parse', 'refs/heads/from-sandbox')
    const refused = await run(['sandbox', 'pull', 'pull/feat/x', '--branch', 'from-sandbox'])
    expect(refused.exitCode).to.equal(3)
    expect(refused.stderr).to.include('the local branch from-sandbox has 1 commit that pull/feat/x lacks')
    expect(git(fixture.app, 'rev-parse', 'refs/heads/from-sandbox')).to.equal(mine)
    const forced = await run(['sandbox', 'pull', 'pull/feat/x', '--branch', 'from-sandbox', '--force', '--json'])
    expect(forced.exitCode, forced.stderr).to.equal(0)
    expect(git(fixture.app, 'rev-parse', 'refs/heads/from-sandbox')).to.equal(commit)

    // rm's hint names what works for such a sandbox.
    inPod(pod, 'sh', '-c', 'cd /work/pull/feat-x && echo more > more.txt && git add more.txt && git commit -q -m more')
    const rm = await run(['sandbox', 'rm', 'pull'])
    expect(rm.exitCode).to.equal(3)
    expect(rm.stderr).to.include('yard sandbox pull pull/BRANCH')
    // Once pulled, the commits are kept on the host: rm no longer counts them as unsaved.
    expect((await run(['sandbox', 'pull', 'pull/feat/x'])).exitCode).to.equal(0)
    const list = await run(['sandbox', 'list', '--json'])
    expect(JSON.stringify(list.json)).not.to.include('unpushed":["')
    const clean = await run(['sandbox', 'rm', 'pull', '--dry-run'])
    expect(clean.exitCode, clean.stderr).to.equal(0)
    expect(`${clean.stdout}${clean.stderr}`).not.to.include('not on origin')
  })
})
