/**
 * A sandbox made from a local-path url (DESIGN.md §5.2): create warns that the pod cannot push
 * there, and `yard sandbox pull` brings its commits into the main checkout through the runtime.
 */
import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import {readFileSync} from 'node:fs'
import path from 'node:path'

import {ensureDefaultImage, sweep} from '../../support/podman.js'
import {cleanupTemp, git, tempDir} from '../../support/repo.js'
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

  it('rm --force prints a restore that works on commits resting on pulled ones, and counts a pull the host lost as unsaved again', async () => {
    const upstream = makeUpstream('kept')
    const fixture = makeApp(prefix)
    const run = async (args: string[]) => yard(args, {cwd: fixture.app, env: fixture.env})
    const restoreOf = (json: unknown) => {
      const {restore} = json as {restore: Array<{directory: string; command: string}>}
      expect(restore).to.have.length(1)
      const into = tempDir('restore')
      const restoring = spawnSync('sh', ['-c', restore[0].command], {cwd: into, encoding: 'utf8'})
      expect(restoring.status, restoring.stderr).to.equal(0)
      return path.join(into, restore[0].directory)
    }

    for (const name of ['kept', 'lost']) {
      const created = await run(['sandbox', 'create', name, '--repo', upstream, '--branch', 'feat/x'])
      expect(created.exitCode, created.stderr).to.equal(0)
    }

    // kept: a pulled commit, a commit on it that was not pulled, and a dirty file on top.
    const pod1 = `${prefix}-kept`
    const commitIn = (pod: string, file: string) => {
      inPod(
        pod,
        'sh',
        '-c',
        `cd /work/kept/feat-x && echo ${file} > ${file} && git add ${file} && git commit -q -m ${file}`,
      )
      return inPod(pod, 'git', '-C', '/work/kept/feat-x', 'rev-parse', 'HEAD')
    }

    const pulledCommit = commitIn(pod1, 'pulled.txt')
    expect((await run(['sandbox', 'pull', 'kept/feat/x'])).exitCode).to.equal(0)
    const later = commitIn(pod1, 'later.txt')
    inPod(pod1, 'sh', '-c', 'cd /work/kept/feat-x && echo dirty >> pulled.txt && echo new > untracked.txt')
    const removed = await run(['sandbox', 'rm', 'kept', '--force', '--json'])
    expect(removed.exitCode, removed.stderr).to.equal(0)
    const kept = restoreOf(removed.json)
    expect(git(kept, 'rev-parse', 'HEAD')).to.equal(later)
    expect(git(kept, 'rev-parse', 'HEAD^')).to.equal(pulledCommit)
    expect(readFileSync(path.join(kept, 'pulled.txt'), 'utf8')).to.equal('pulled.txt\ndirty\n')
    expect(readFileSync(path.join(kept, 'untracked.txt'), 'utf8')).to.equal('new\n')

    // lost (the same upstream, so the same slot): pulled, then the host's ref is deleted; rm must
    // not take the commit for kept.
    const pod2 = `${prefix}-lost`
    inPod(pod2, 'sh', '-c', 'cd /work/kept/feat-x && echo w > w.txt && git add w.txt && git commit -q -m w')
    const lostCommit = inPod(pod2, 'git', '-C', '/work/kept/feat-x', 'rev-parse', 'HEAD')
    expect((await run(['sandbox', 'pull', 'lost/feat/x'])).exitCode).to.equal(0)
    git(fixture.app, 'update-ref', '-d', 'refs/remotes/sandbox/lost/feat/x')
    const plan = await run(['sandbox', 'rm', 'lost', '--dry-run'])
    expect(plan.exitCode).to.equal(3)
    expect(`${plan.stdout}${plan.stderr}`).to.include('no longer on the host')
    const refused = await run(['sandbox', 'rm', 'lost'])
    expect(refused.exitCode, refused.stderr).to.equal(3)
    expect(refused.stderr).to.include('feat/x counts as unsaved again').and.include('holds unsaved work')
    const forced = await run(['sandbox', 'rm', 'lost', '--force', '--json'])
    expect(forced.exitCode, forced.stderr).to.equal(0)
    expect(git(restoreOf(forced.json), 'rev-parse', 'refs/heads/feat/x')).to.equal(lostCommit)
  })

  it('keeps the pulls of two slots apart: a slot but the first pulls into refs/remotes/sandbox/<name>@<slot>', async () => {
    const one = makeUpstream('one')
    const two = makeUpstream('two')
    const fixture = makeApp(prefix)
    const run = async (args: string[]) => yard(args, {cwd: fixture.app, env: fixture.env})
    const created = await run(['sandbox', 'create', 'two', '--repo', one, '--repo', two, '--branch', 'feat/x'])
    expect(created.exitCode, created.stderr).to.equal(0)
    const pod = `${prefix}-two`
    const commits: Record<string, string> = {}
    for (const slot of ['one', 'two']) {
      inPod(
        pod,
        'sh',
        '-c',
        `cd /work/${slot}/feat-x && echo ${slot} > ${slot}.txt && git add . && git commit -q -m ${slot}`,
      )
      commits[slot] = inPod(pod, 'git', '-C', `/work/${slot}/feat-x`, 'rev-parse', 'HEAD')
    }

    const first = await run(['sandbox', 'pull', 'two/feat/x', '--json'])
    expect(first.exitCode, first.stderr).to.equal(0)
    expect(first.json).to.deep.include({slot: 'one', ref: 'refs/remotes/sandbox/two/feat/x', commit: commits.one})
    const second = await run(['sandbox', 'pull', 'two/feat/x', '--slot', 'two', '--json'])
    expect(second.exitCode, second.stderr).to.equal(0)
    expect(second.json).to.deep.include({slot: 'two', ref: 'refs/remotes/sandbox/two@two/feat/x', commit: commits.two})
    expect(git(fixture.app, 'rev-parse', 'refs/remotes/sandbox/two/feat/x')).to.equal(commits.one)
    expect(git(fixture.app, 'rev-parse', 'refs/remotes/sandbox/two@two/feat/x')).to.equal(commits.two)
    // Both kept on the host: nothing unsaved, and rm removes it.
    const removed = await run(['sandbox', 'rm', 'two', '--json'])
    expect(removed.exitCode, removed.stderr).to.equal(0)
    expect(removed.json).to.deep.include({unsaved: [], removed: true})
  })
})
