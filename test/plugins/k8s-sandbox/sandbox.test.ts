/**
 * Sandboxes on real `podman kube play` (DESIGN.md §5.2): create, attach, exec, rm. One shared
 * sandbox `feat` for the tests that build on each other's state in order, plus small ones where
 * a test needs its own.
 */
import {expect} from 'chai'
import {spawn, spawnSync} from 'node:child_process'
import {existsSync, readdirSync, readFileSync} from 'node:fs'
import path from 'node:path'

import {writePin} from '../../../src/core/identity/pins.js'
import {repoIdentity} from '../../../src/sdk/repo-identity.js'
import {ensureDefaultImage, podman, sweep} from '../../support/podman.js'
import {cleanupTemp, git, tempDir} from '../../support/repo.js'
import {openPane} from '../../support/tmux.js'
import {yard} from '../../support/yard.js'
import {
  cli,
  cliLine,
  devJs,
  inPod,
  inPodTry,
  makeApp,
  makeUpstream,
  podExists,
  SANDBOX_TEST_PREFIX,
  type SandboxFixture,
} from './support.js'

const prefix = `${SANDBOX_TEST_PREFIX}a`
const pod = `${prefix}-feat`

describe('yard sandbox on podman kube play (DESIGN.md §5.2)', function () {
  this.timeout(240_000)
  let fixture: SandboxFixture
  let upstreamA: string
  let upstreamB: string
  let keyA: string
  let keyB: string
  const run = async (args: string[]) => yard(args, {cwd: fixture.app, env: fixture.env})

  before(async () => {
    sweep(SANDBOX_TEST_PREFIX)
    await ensureDefaultImage()
    upstreamA = makeUpstream('a', {develop: true})
    upstreamB = makeUpstream('b')
    keyA = repoIdentity(upstreamA).key
    keyB = repoIdentity(upstreamB).key
    fixture = makeApp(prefix)
    const created = await run([
      'sandbox',
      'create',
      'feat',
      '--repo',
      upstreamA,
      '--repo',
      `lib=${upstreamB}`,
      '--branch',
      'feat/login',
      '--json',
    ])
    expect(created.exitCode, created.stderr).to.equal(0)
  })

  after(() => {
    sweep(SANDBOX_TEST_PREFIX)
    cleanupTemp()
  })

  it('each slot holds a --shared clone of the read-only cache at default/ and the branch worktree beside it, cut from origin/HEAD with no upstream (acceptance 1)', () => {
    for (const [slot, key, upstream] of [
      ['a', keyA, upstreamA],
      ['lib', keyB, upstreamB],
    ]) {
      expect(inPod(pod, 'cat', `/work/${slot}/default/.git/objects/info/alternates`)).to.equal(`/repos/${key}/objects`)
      expect(inPod(pod, 'git', '-C', `/work/${slot}/default`, 'rev-parse', '--abbrev-ref', 'HEAD')).to.equal('main')
      expect(inPod(pod, 'git', '-C', `/work/${slot}/default`, 'status', '--porcelain')).to.equal('')
      const main = git(upstream, 'rev-parse', 'refs/heads/main')
      expect(inPod(pod, 'git', '-C', `/work/${slot}/default`, 'rev-parse', 'HEAD')).to.equal(main)
      expect(inPod(pod, 'git', '-C', `/work/${slot}/feat-login`, 'rev-parse', '--abbrev-ref', 'HEAD')).to.equal(
        'feat/login',
      )
      expect(inPod(pod, 'git', '-C', `/work/${slot}/feat-login`, 'rev-parse', 'HEAD')).to.equal(main)
      expect(
        inPodTry(pod, 'git', '-C', `/work/${slot}/feat-login`, 'rev-parse', '--abbrev-ref', 'feat/login@{upstream}')
          .status,
      ).to.not.equal(0)
    }
  })

  it('the cache is read-only in the pod; a commit lands in the pod-local .git with the host identity; the push url is the url as given (acceptance 2)', () => {
    const touched = inPodTry(pod, 'touch', `/repos/${keyA}/x`)
    expect(touched.status).to.not.equal(0)
    expect(touched.stderr).to.include('Read-only file system')
    inPod(pod, 'git', '-C', '/work/a/feat-login', 'commit', '--allow-empty', '-q', '-m', 'in the sandbox')
    const commit = inPod(pod, 'git', '-C', '/work/a/feat-login', 'rev-parse', 'HEAD')
    expect(inPod(pod, 'git', '-C', '/work/a/feat-login', 'log', '-1', '--format=%an <%ae>|%cn <%ce>')).to.equal(
      'Sandbox Tester <sandbox@example.com>|Sandbox Tester <sandbox@example.com>',
    )
    expect(inPodTry(pod, 'git', '-C', '/work/a/default', 'cat-file', '-e', commit).status).to.equal(0)
    const cache = path.join(fixture.state, 'caches', keyA)
    expect(spawnSync('git', ['-C', cache, 'cat-file', '-e', commit]).status).to.not.equal(0)
    expect(inPod(pod, 'git', '-C', '/work/a/default', 'remote', 'get-url', '--push', 'origin')).to.equal(upstreamA)
    expect(inPod(pod, 'git', '-C', '/work/a/default', 'remote', 'get-url', 'origin')).to.equal(`/repos/${keyA}`)
  })

  it('a second attach reports the same paths, creates nothing and keeps uncommitted work (acceptance 3)', async () => {
    inPod(pod, 'sh', '-c', 'echo draft > /work/a/feat-login/notes.txt')
    const again = await run(['sandbox', 'attach', 'feat', '--branch', 'feat/login', '--json'])
    expect(again.exitCode, again.stderr).to.equal(0)
    expect(again.json).to.deep.equal({
      name: 'feat',
      branch: 'feat/login',
      slots: [
        {slot: 'a', default: '/work/a/default', path: '/work/a/feat-login', created: false},
        {slot: 'lib', default: '/work/lib/default', path: '/work/lib/feat-login', created: false},
      ],
      stale: {},
    })
    expect(inPod(pod, 'cat', '/work/a/feat-login/notes.txt')).to.equal('draft')
  })

  it('branch "default" is exit 2 before any pod exists; a/x then a-x is refused naming both, with a yard exec hint that names the sandbox (acceptance 4)', async () => {
    const refused = await run(['sandbox', 'create', 'dflt', '--repo', upstreamA, '--branch', 'default'])
    expect(refused.exitCode).to.equal(2)
    expect(refused.stderr).to.include('the branch "default" is refused')
    expect(podExists(`${prefix}-dflt`)).to.equal(false)

    const first = await run(['sandbox', 'attach', 'feat', '--branch', 'a/x'])
    expect(first.exitCode, first.stderr).to.equal(0)
    const clash = await run(['sandbox', 'attach', 'feat', '--branch', 'a-x'])
    expect(clash.exitCode).to.equal(2)
    expect(clash.stderr).to.include('/work/a/a-x already holds the branch a/x, not a-x')
    // The hint is one that runs: yard exec takes the sandbox's name, not its pod's.
    expect(clash.stderr).to.include('(yard exec feat/a-x …)')
    expect(clash.stderr).to.not.include(`yard exec ${pod}/`)
    expect(
      inPodTry(pod, 'git', '-C', '/work/a/default', 'rev-parse', '--verify', '--quiet', 'refs/heads/a-x').status,
    ).to.not.equal(0)
  })

  it('a --repo URL#REF the cache does not have is refused with exit 2 naming the ref and the branches it has, before any pod exists', async () => {
    const localFile = path.join(fixture.app, 'yard.local.toml')
    const pins = () => (existsSync(localFile) ? readFileSync(localFile, 'utf8') : null)
    const local = pins()
    const refused = await run(['sandbox', 'create', 'badref', '--repo', `${upstreamA}#nosuchref`])
    expect(refused.exitCode, refused.stderr).to.equal(2)
    expect(refused.stderr).to.include(`the ref "nosuchref" of --repo ${upstreamA}#nosuchref is not in ${upstreamA}`)
    expect(refused.stderr).to.include('whose branches are develop, main')
    expect(podExists(`${prefix}-badref`)).to.equal(false)
    expect(pins()).to.equal(local)
  })

  it('--repo URL#develop cuts the worktree from origin/develop and makes no local develop (acceptance 4); rm keeps a hand-written pin', async () => {
    const localFile = path.join(fixture.app, 'yard.local.toml')
    await writePin(localFile, 'dev', 40)
    const created = await run(['sandbox', 'create', 'dev', '--repo', `${upstreamA}#develop`])
    expect(created.exitCode, created.stderr).to.equal(0)
    const devPod = `${prefix}-dev`
    expect(inPod(devPod, 'git', '-C', '/work/a/wt-dev', 'rev-parse', 'HEAD')).to.equal(
      git(upstreamA, 'rev-parse', 'refs/heads/develop'),
    )
    expect(inPod(devPod, 'git', '-C', '/work/a/wt-dev', 'rev-parse', '--abbrev-ref', 'HEAD')).to.equal('wt/dev')
    expect(
      inPodTry(devPod, 'git', '-C', '/work/a/default', 'rev-parse', '--verify', '--quiet', 'refs/heads/develop').status,
    ).to.not.equal(0)
    const removed = await run(['sandbox', 'rm', 'dev'])
    expect(removed.exitCode, removed.stderr).to.equal(0)
    expect(podExists(devPod)).to.equal(false)
    expect(removed.stderr).to.include('kept the hand-written pin of dev')
    expect(readFileSync(localFile, 'utf8')).to.match(/^dev = 40$/m)
    await writePin(localFile, 'dev', undefined)
  })

  it('yard exec NAME/BRANCH runs in the branch worktree by branch or directory; exit codes pass through (acceptance 5)', async () => {
    const byBranch = cli(fixture, [
      'exec',
      'feat/feat/login',
      '--',
      'sh',
      '-c',
      'git rev-parse --abbrev-ref HEAD; exit 7',
    ])
    expect(byBranch.status, byBranch.stderr).to.equal(7)
    expect(byBranch.stdout.trim()).to.equal('feat/login')
    const byDirectory = cli(fixture, ['exec', 'feat/feat-login', '--', 'git', 'rev-parse', '--abbrev-ref', 'HEAD'])
    expect(byDirectory.status, byDirectory.stderr).to.equal(0)
    expect(byDirectory.stdout.trim()).to.equal('feat/login')
    const bySlot = cli(fixture, ['exec', '--sandbox', 'feat', '--slot', 'lib', '--', 'pwd'])
    expect(bySlot.stdout.trim(), bySlot.stderr).to.equal('/work/lib/feat-login')
    // A plain NAME with no worktree of that name is the sandbox.
    const plain = cli(fixture, ['exec', 'feat', '--', 'sh', '-c', 'pwd; exit 127'])
    expect(plain.status).to.equal(127)
    expect(plain.stdout.trim(), plain.stderr).to.equal('/work/a/feat-login')
    const missing = await run(['exec', 'feat/nope', '--verbose', '--', 'true'])
    expect(missing.exitCode).to.equal(2)
    expect(missing.stderr).to.include('has no /work/a/nope')
    // One engine call: the pod from yard's record, no inspect; the exec itself says the directory is
    // missing (no `test -d` exec before it), podman's own line held back.
    expect(
      missing.stderr
        .split('\n')
        .filter((line) => line.startsWith('+ podman'))
        .map((line) => line.split(' ').slice(1, 3).join(' ')),
    ).to.deep.equal(['podman exec'])
    expect(missing.stderr).not.to.include('chdir')
  })

  it('yard exec into a sandbox whose pod was removed outside yard is exit 2 "there is no sandbox", from the exec itself', async () => {
    const created = await run(['sandbox', 'create', 'gone', '--repo', upstreamA])
    expect(created.exitCode, created.stderr).to.equal(0)
    const project = `${prefix}-gone`
    podman('pod', 'rm', '--force', '--time', '0', project)
    const gone = await run(['exec', 'gone/wt/gone', '--verbose', '--', 'true'])
    expect(gone.exitCode, gone.stderr).to.equal(2)
    expect(gone.stderr).to.include(`there is no sandbox gone (pod ${project}) on the podman runtime`)
    expect(gone.stderr).not.to.include('no such container')
    // Told from the exec's own answer: no inspect before it.
    expect(
      gone.stderr
        .split('\n')
        .filter((line) => line.startsWith('+ podman'))
        .map((line) => line.split(' ').slice(1, 3).join(' ')),
    ).to.deep.equal(['podman exec'])
    await run(['sandbox', 'rm', 'gone', '--force'])
  })

  it('yard exec warns when another yard exec that may write runs in the same worktree; a read-only git command is not warned about', async () => {
    const childEnv: NodeJS.ProcessEnv = {...process.env}
    for (const [key, value] of Object.entries(fixture.env)) {
      if (value === undefined) delete childEnv[key]
      else childEnv[key] = value
    }

    const execs = path.join(fixture.state, 'execs')
    // Records are <state>/execs/<sandbox>/<slot>/<branch directory>/<pid>.json.
    const running = (): number =>
      existsSync(execs)
        ? readdirSync(execs, {recursive: true, encoding: 'utf8'}).filter((file) => file.endsWith('.json')).length
        : 0
    const alone = cli(fixture, ['exec', 'feat/feat-login', '--', 'true'])
    expect(alone.stderr).not.to.include('another yard exec')
    const agent = spawn(process.execPath, [devJs, 'exec', 'feat/feat-login', '--', 'sh', '-c', 'sleep 6'], {
      cwd: fixture.app,
      env: childEnv,
      stdio: 'ignore',
    })
    const ended = new Promise((resolve) => agent.on('exit', resolve))
    try {
      for (let waited = 0; running() === 0 && waited < 20_000; waited += 100)
        await new Promise((resolve) => setTimeout(resolve, 100))
      expect(running(), 'the first exec is recorded while it runs').to.equal(1)
      const second = cli(fixture, ['exec', 'feat/feat-login', '--', 'touch', 'concurrent'])
      expect(second.status, second.stderr).to.equal(0)
      expect(second.stderr)
        .to.include('another yard exec runs in feat/feat-login')
        .and.include(`pid ${agent.pid}`)
        .and.include('sleep 6')
      const status = cli(fixture, ['exec', 'feat/feat-login', '--', 'git', 'status', '--short'])
      expect(status.stderr).not.to.include('another yard exec')
      const elsewhere = cli(fixture, ['exec', '--sandbox', 'feat', '--slot', 'lib', '--', 'touch', 'x'])
      expect(elsewhere.stderr, 'another slot is another worktree').not.to.include('another yard exec')
    } finally {
      await ended
    }

    expect(running(), 'an ended exec leaves no record').to.equal(0)
    const after = cli(fixture, ['exec', 'feat/feat-login', '--', 'rm', 'concurrent'])
    expect(after.stderr).not.to.include('another yard exec')
    // Leave the worktrees as they were: later tests count their unsaved work.
    expect(cli(fixture, ['exec', '--sandbox', 'feat', '--slot', 'lib', '--', 'rm', 'x']).status).to.equal(0)
  })

  it('yard exec NAME/.., NAME/. and NAME/ name no branch directory: exit 2, and nothing runs (they would run in /work or /work/<slot>)', () => {
    for (const name of ['feat/..', 'feat/.', 'feat/', 'feat/x/..']) {
      const refused = cli(fixture, ['exec', name, '--', 'pwd'])
      if (name === 'feat/x/..') {
        // x/.. is the directory "x-..", a plain name: asked of the pod, which has no such worktree.
        expect(refused.status, refused.stderr).to.equal(2)
        expect(refused.stderr).to.include('has no /work/a/x-..')
        continue
      }

      expect(refused.status, `${name}: ${refused.stdout}`).to.equal(2)
      expect(refused.stdout).to.equal('')
      expect(refused.stderr).to.include(`"${name.slice('feat/'.length)}" names no branch directory`)
    }
  })

  it('in a 100×30 tmux pane yard exec into a sandbox starts at 30 100 (acceptance 5)', async () => {
    const pane = openPane(`yardtest-x-${process.pid}`, {
      width: 100,
      height: 30,
      command: 'env -u CONTAINERS_CONF -u YARD_WORKTREE sh',
    })
    try {
      pane.send(
        `clear; ${cliLine(fixture, ['exec', 'feat/feat-login', '--', 'stty', 'size'])}; echo exec-done`,
        'Enter',
      )
      // The typed command line holds the marker too: wait for it alone on a line (the output).
      expect(await pane.waitFor(/^exec-done\s*$/m)).to.match(/^30 100\s*$/m)
    } finally {
      pane.kill()
    }
  })

  it('rm refuses unsaved work listing it, cache evict refuses while the sandbox lives; rm --force saves a bundle of what the cache lacks and a patch, restored by the command it prints, then evict succeeds (acceptance 8)', async () => {
    const refused = await run(['sandbox', 'rm', 'feat'])
    expect(refused.exitCode).to.equal(3)
    expect(refused.stderr).to.include('/work/a/feat-login: ?? notes.txt')
    expect(refused.stderr).to.include('/work/a/feat-login: feat/login (1 commit) not on origin')
    expect(podExists(pod)).to.equal(true)

    const evict = await run(['cache', 'evict', upstreamA])
    expect(evict.exitCode).to.equal(3)
    expect(evict.stderr).to.include(`borrowed by sandbox ${pod}`)

    const dry = await run(['sandbox', 'rm', 'feat', '--force', '--dry-run', '--json'])
    expect(dry.exitCode, dry.stderr).to.equal(0)
    expect((dry.json as {removed: boolean}).removed).to.equal(false)
    expect(podExists(pod)).to.equal(true)

    const forced = await run(['sandbox', 'rm', 'feat', '--force', '--json'])
    expect(forced.exitCode, forced.stderr).to.equal(0)
    const result = forced.json as {
      savedIn: string
      saved: string[]
      removed: boolean
      restore: Array<{slot: string; directory: string; command: string}>
    }
    expect(result.removed).to.equal(true)
    expect(result.savedIn.startsWith(path.join(fixture.state, 'sandboxes', 'feat'))).to.equal(true)
    // lib has no commit the cache lacks: no bundle of it.
    expect(readdirSync(result.savedIn).sort()).to.deep.equal(['a-feat-login.patch', 'a.bundle'])
    expect(podExists(pod)).to.equal(false)

    // Restore with the command rm gives: the bundle carries the sandbox's commit, the patch the uncommitted file.
    expect(result.restore.map((entry) => entry.slot)).to.deep.equal(['a'])
    const into = tempDir('yardtest-restore')
    const restoring = spawnSync('sh', ['-c', result.restore[0].command], {cwd: into, encoding: 'utf8'})
    expect(restoring.status, restoring.stderr).to.equal(0)
    const restored = path.join(into, result.restore[0].directory)
    expect(git(restored, 'log', '-1', '--format=%s')).to.equal('in the sandbox')
    expect(git(restored, 'rev-parse', '--abbrev-ref', 'HEAD')).to.equal('feat/login')
    expect(git(restored, 'status', '--porcelain')).to.equal('?? notes.txt')
    expect(existsSync(path.join(restored, 'notes.txt'))).to.equal(true)

    const evicted = await run(['cache', 'evict', upstreamA])
    expect(evicted.exitCode, evicted.stderr).to.equal(0)
  })
})
