/**
 * `yard sandbox rm` on real `podman kube play` (DESIGN.md §5.2, `rm`): one exec into the pod for
 * a clean sandbox; commits on a detached HEAD and stash entries in any slot are unsaved work;
 * `--force` bundles only what the cache lacks, and the restore command it prints brings the work
 * back; `--dry-run` shows the plan even when rm refuses; a sandbox whose pod was removed outside
 * yard has its leftovers cleaned, and `cache evict` no longer refuses for it.
 */
import {expect} from 'chai'
import {execFileSync, spawnSync} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {existsSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {PROBE_GRACE_MS} from '../../../src/plugins/git-cache/leases.js'
import {repoIdentity} from '../../../src/sdk/repo-identity.js'
import {BUSYBOX_IMAGE, ensureBusyboxImage, ensureDefaultImage, podman, podmanTry, sweep} from '../../support/podman.js'
import {cleanupTemp, git, makeRepo, tempDir} from '../../support/repo.js'
import {yard} from '../../support/yard.js'
import {inPod, makeApp, makeUpstream, podExists, SANDBOX_TEST_PREFIX, type SandboxFixture} from './support.js'

const prefix = `${SANDBOX_TEST_PREFIX}r`

/** A bare upstream whose `main` has `commits` commits of ~3 KB of fresh content each (git fast-import). */
function makeHistory(name: string, commits: number): string {
  const bare = path.join(tempDir('yardtest-upstream'), `${name}.git`)
  git(path.dirname(bare), 'init', '-q', '--bare', '-b', 'main', bare)
  const parts: string[] = []
  for (let index = 1; index <= commits; index++) {
    const message = `commit ${index}`
    const content = `${name} ${index}\n${randomBytes(1500).toString('hex')}\n`
    parts.push(
      `commit refs/heads/main\ncommitter T <t@example.com> ${1_700_000_000 + index} +0000\ndata ${message.length}\n${message}\nM 100644 inline file-${index % 20}.txt\ndata ${content.length}\n${content}\n`,
    )
  }

  execFileSync('git', ['fast-import', '--quiet'], {cwd: bare, input: parts.join('')})
  return bare
}

/**
 * The restore commands and hints `sandbox rm --force` printed: `restore slot S into ./DIR:` then
 * the command, then `… is REF: USE` lines.
 */
function printedRestores(stdout: string): Array<{slot: string; command: string; uses: string[]}> {
  const restores: Array<{slot: string; command: string; uses: string[]}> = []
  const lines = stdout.split('\n')
  for (const [index, line] of lines.entries()) {
    const slot = /^restore slot (\S+) into /.exec(line)?.[1]
    if (slot) restores.push({slot, command: lines[index + 1].trim(), uses: []})
    else if (restores.length > 0 && /^ {2}.* is refs\/yard\/\S+: /.test(line))
      restores.at(-1)!.uses.push(line.replace(/^.* is refs\/yard\/\S+: /, ''))
  }

  return restores
}

/** Runs a printed command line as a person would: in `cwd`, through the shell. */
function sh(cwd: string, line: string): string {
  const result = spawnSync('sh', ['-c', line], {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'T',
      GIT_AUTHOR_EMAIL: 't@example.com',
      GIT_COMMITTER_NAME: 'T',
      GIT_COMMITTER_EMAIL: 't@example.com',
    },
  })
  expect(result.status, `${line}\n${result.stderr}`).to.equal(0)
  return result.stdout
}

describe('yard sandbox rm on podman kube play (DESIGN.md §5.2)', function () {
  this.timeout(240_000)
  let fixture: SandboxFixture
  let upstream: string
  let lib: string
  const run = async (args: string[]) => yard(args, {cwd: fixture.app, env: fixture.env})

  before(async () => {
    sweep(SANDBOX_TEST_PREFIX)
    await ensureDefaultImage()
    await ensureBusyboxImage()
    upstream = makeHistory('app', 300)
    lib = makeUpstream('lib')
    fixture = makeApp(prefix, 'WEB_PORT = 38800')
  })

  after(() => {
    sweep(SANDBOX_TEST_PREFIX)
    cleanupTemp()
  })

  it('rm --force of a clean sandbox asks the pod once, saves nothing and writes no bundle: the cache has every commit (issue: removal that costs kilobytes)', async () => {
    const created = await run(['sandbox', 'create', 'tidy', '--repo', upstream, '--repo', `lib=${lib}`])
    expect(created.exitCode, created.stderr).to.equal(0)
    const removed = await run(['sandbox', 'rm', 'tidy', '--force', '--verbose', '--json'])
    expect(removed.exitCode, removed.stderr).to.equal(0)
    expect(removed.json).to.deep.include({unsaved: [], savedIn: null, saved: [], restore: [], removed: true})
    // Every slot's checks in one round trip into the pod.
    expect(removed.stderr.split('\n').filter((line) => line.startsWith('+ podman exec '))).to.have.length(1)
    expect(existsSync(path.join(fixture.state, 'sandboxes', 'tidy'))).to.equal(false)
    expect(podExists(`${prefix}-tidy`)).to.equal(false)
  })

  it('a commit on a detached HEAD and stash entries in any slot are unsaved: rm refuses listing them, --dry-run prints the plan; --force bundles only them and what the cache lacks, and the printed commands bring everything back (issue 21 item 4)', async () => {
    const pod = `${prefix}-work`
    const created = await run([
      'sandbox',
      'create',
      'work',
      '--repo',
      upstream,
      '--repo',
      `lib=${lib}`,
      '--branch',
      'feat/login',
    ])
    expect(created.exitCode, created.stderr).to.equal(0)
    const commit = (dir: string, file: string, message: string) =>
      inPod(
        pod,
        'sh',
        '-c',
        'echo "$2" > "$1/$3" && git -C "$1" add -A && git -C "$1" commit -q -m "$2"',
        'sh',
        dir,
        message,
        file,
      )
    inPod(pod, 'git', '-C', '/work/app/default', 'checkout', '-q', '--detach')
    commit('/work/app/default', 'detached.txt', 'on a detached HEAD')
    const detached = inPod(pod, 'git', '-C', '/work/app/default', 'rev-parse', 'HEAD')
    inPod(
      pod,
      'sh',
      '-c',
      'echo kept >> /work/lib/default/README && git -C /work/lib/default stash push -q -m wip-default',
    )
    inPod(
      pod,
      'sh',
      '-c',
      'echo kept too >> /work/lib/feat-login/lib.txt && git -C /work/lib/feat-login stash push -q -m wip-login',
    )

    const refused = await run(['sandbox', 'rm', 'work'])
    expect(refused.exitCode, refused.stdout).to.equal(3)
    expect(refused.stderr).to.include(
      `/work/app/default: detached HEAD ${detached.slice(0, 7)} (1 commit) on no branch not on origin`,
    )
    expect(refused.stderr).to.include('/work/lib: stash@{0} (On feat/login: wip-login) not on origin')
    expect(refused.stderr).to.include('/work/lib: stash@{1} (On main: wip-default) not on origin')
    expect(podExists(pod)).to.equal(true)

    const plan = await run(['sandbox', 'rm', 'work', '--dry-run'])
    expect(plan.exitCode).to.equal(3)
    expect(plan.stdout).to.include(
      'rm refuses without --force; --force would save: app.bundle (refs/yard/sandbox/app/detached-default); lib.bundle (refs/yard/sandbox/lib/stash, refs/yard/sandbox/lib/stash-1)',
    )
    expect(plan.stdout).to.include(`would remove pod ${pod}`)
    expect(plan.stdout).to.include(`would remove lease sandbox ${pod} on the cache ${repoIdentity(upstream).key}`)
    expect(podExists(pod)).to.equal(true)

    commit('/work/app/feat-login', 'login.txt', 'on feat/login')
    const branchCommit = inPod(pod, 'git', '-C', '/work/app/feat-login', 'rev-parse', 'HEAD')
    inPod(pod, 'sh', '-c', 'echo draft > /work/app/feat-login/notes.txt')

    const forced = await run(['sandbox', 'rm', 'work', '--force'])
    expect(forced.exitCode, forced.stderr).to.equal(0)
    expect(podExists(pod)).to.equal(false)
    const savedIn = /^saved \d+ file\(s\) under (\S+):$/m.exec(forced.stdout)?.[1]
    expect(savedIn, forced.stdout).to.be.a('string')
    expect(readdirSync(savedIn!).sort()).to.deep.equal(['app-feat-login.patch', 'app.bundle', 'lib.bundle'])

    // Only the sandbox's own refs and objects: the cache's main and its history stay out.
    const bundle = path.join(savedIn!, 'app.bundle')
    expect(
      git(savedIn!, 'bundle', 'list-heads', bundle)
        .split('\n')
        .map((line) => line.split(' ', 2)[1])
        .sort(),
    ).to.deep.equal(['refs/heads/feat/login', 'refs/yard/sandbox/app/detached-default'])
    const full = path.join(tempDir('yardtest-full'), 'full.bundle')
    git(upstream, 'bundle', 'create', '--quiet', full, '--all')
    expect(statSync(bundle).size).to.be.below(statSync(full).size / 50)
    const empty = tempDir('yardtest-empty')
    git(empty, 'init', '-q')
    expect(spawnSync('git', ['bundle', 'verify', bundle], {cwd: empty, encoding: 'utf8'}).stderr).to.include(
      'lacks these prerequisite commits',
    )

    const restores = printedRestores(forced.stdout)
    expect(restores.map((restore) => restore.slot)).to.deep.equal(['app', 'lib'])
    const into = tempDir('yardtest-restore')
    for (const restore of restores) sh(into, restore.command)
    const app = path.join(into, 'work-app')
    expect(git(app, 'rev-parse', 'HEAD')).to.equal(branchCommit)
    expect(git(app, 'rev-parse', '--abbrev-ref', 'HEAD')).to.equal('feat/login')
    expect(git(app, 'status', '--porcelain')).to.equal('?? notes.txt')
    expect(readFileSync(path.join(app, 'notes.txt'), 'utf8')).to.equal('draft\n')
    expect(git(app, 'rev-parse', 'refs/yard/sandbox/app/detached-default')).to.equal(detached)
    for (const use of restores[0].uses) sh(into, use)
    expect(readFileSync(path.join(app, 'detached.txt'), 'utf8')).to.equal('on a detached HEAD\n')

    const libClone = path.join(into, 'work-lib')
    expect(restores[1].uses).to.have.length(2)
    sh(into, restores[1].uses[0])
    expect(readFileSync(path.join(libClone, 'lib.txt'), 'utf8')).to.equal('lib lib\nkept too\n')
    expect(git(libClone, 'show', '--format=%s', '-s', 'refs/yard/sandbox/lib/stash-1')).to.equal('On main: wip-default')
  })

  it('a stopped pod cannot be asked what its /work holds: rm and --dry-run refuse (exit 3) and keep it; --force removes it unchecked and says so', async () => {
    const created = await run(['sandbox', 'create', 'halted', '--repo', lib])
    expect(created.exitCode, created.stderr).to.equal(0)
    const pod = `${prefix}-halted`
    inPod(
      pod,
      'sh',
      '-c',
      'cd /work/lib/wt-halted && echo kept > kept.txt && git add kept.txt && git commit -q -m kept',
    )
    podman('pod', 'stop', '--time', '0', pod)
    // exec says so in yard's words (exit 125, as a runtime failure before the command).
    const exec = await run(['exec', 'halted', '--', 'true'])
    expect(exec.exitCode, exec.stderr).to.equal(125)
    expect(exec.stderr).to.include(`the sandbox pod ${pod} is not running`)
    expect(exec.stderr).to.include(`podman pod start ${pod}`)

    for (const args of [
      ['sandbox', 'rm', 'halted'],
      ['sandbox', 'rm', 'halted', '--dry-run'],
    ]) {
      const refused = await run(args)
      expect(refused.exitCode, args.join(' ')).to.equal(3)
      expect(refused.stderr).to.include('cannot look for unsaved work in the sandbox halted: its pod is not running')
      expect(refused.stderr).to.include('--force')
      expect(podExists(pod)).to.equal(true)
    }

    const forced = await run(['sandbox', 'rm', 'halted', '--force', '--json'])
    expect(forced.exitCode, forced.stderr).to.equal(0)
    expect(forced.json).to.deep.include({unchecked: true, unsaved: [], savedIn: null, removed: true})
    expect(podExists(pod)).to.equal(false)
  })

  it('a sandbox whose pod was removed outside yard: cache evict clears its lease once the grace is over, and sandbox rm cleans lease, record and pin and says so (issue 21 item 16)', async () => {
    const lone = makeUpstream('lone')
    const {key} = repoIdentity(lone)
    const pod = `${prefix}-lost`
    writeFileSync(path.join(fixture.app, 'yard.local.toml'), '[worktree-offsets]\nlost = 7 # yard: clash with gone\n')
    const created = await run(['sandbox', 'create', 'lost', '--repo', lone])
    expect(created.exitCode, created.stderr).to.equal(0)
    podman('pod', 'rm', '--force', '--time', '0', pod)
    const lease = path.join(fixture.state, 'caches', `${key}.leases`, `sandbox.${pod}`)
    const record = path.join(fixture.state, 'sandboxes', `${pod}.annotations.json`)
    expect(existsSync(lease)).to.equal(true)
    expect(existsSync(record)).to.equal(true)

    // Within the grace a missing pod proves nothing (a create leases before its pod exists).
    const fresh = await run(['cache', 'evict', lone, '--dry-run'])
    expect(fresh.exitCode).to.equal(3)
    const aged = new Date(Date.now() - PROBE_GRACE_MS - 60_000)
    utimesSync(lease, aged, aged)
    const evict = await run(['cache', 'evict', lone, '--dry-run'])
    expect(evict.exitCode, evict.stderr).to.equal(0)
    expect(evict.stderr).to.include(`would clear the lease of sandbox ${pod}: its sandbox pod ${pod} no longer exists`)

    const dry = await run(['sandbox', 'rm', 'lost', '--dry-run'])
    expect(dry.exitCode, dry.stderr).to.equal(0)
    expect(dry.stdout).to.include(
      `the pod ${pod} of sandbox lost is gone (removed outside yard, or a removal cut short); would clean what it left:`,
    )
    expect(existsSync(lease) && existsSync(record)).to.equal(true)

    const cleaned = await run(['sandbox', 'rm', 'lost'])
    expect(cleaned.exitCode, cleaned.stderr).to.equal(0)
    expect(cleaned.stdout).to.include(`removed record ${record}`)
    expect(cleaned.stdout).to.include(`removed lease sandbox ${pod} on the cache ${key}`)
    expect(cleaned.stdout).to.include(`removed pin lost = 7 in ${path.join(fixture.app, 'yard.local.toml')}`)
    expect(existsSync(lease) || existsSync(record)).to.equal(false)
    expect(readFileSync(path.join(fixture.app, 'yard.local.toml'), 'utf8')).to.not.include('lost')

    const again = await run(['sandbox', 'rm', 'lost'])
    expect(again.exitCode).to.equal(2)
    expect(again.stderr).to.include(`there is no sandbox lost (pod ${pod})`)
    const evicted = await run(['cache', 'evict', lone])
    expect(evicted.exitCode, evicted.stderr).to.equal(0)
  })

  it('a pod in the way is never removed by a create: one made by hand, or one whose workspace container is gone; list shows the latter as a row and leaves out a pod another checkout owns; rm removes it with --force', async () => {
    const lone = makeUpstream('husk')
    // A pod of the sandbox's name made by hand, with a container of its own: create refuses, keeps it.
    const hand = `${prefix}-handmade`
    podman('pod', 'create', '--name', hand)
    podman('create', '--pod', hand, '--name', `${hand}-mine`, BUSYBOX_IMAGE, 'sleep', '600')
    const inTheWay = await run(['sandbox', 'create', 'handmade', '--repo', lone])
    expect(inTheWay.exitCode, inTheWay.stderr).to.equal(3)
    expect(inTheWay.stderr).to.include(`cannot make the sandbox pod ${hand}: a pod named ${hand} exists`)
    expect(podExists(hand)).to.equal(true)
    expect(podmanTry('container', 'exists', `${hand}-mine`).status).to.equal(0)
    podman('pod', 'rm', '--force', '--time', '0', hand)

    // A sandbox whose workspace container was removed: listed as such, not a failure of the list.
    const pod = `${prefix}-husk`
    const created = await run(['sandbox', 'create', 'husk', '--repo', lone])
    expect(created.exitCode, created.stderr).to.equal(0)
    podman('rm', '--force', '--time', '0', `${pod}-workspace`)
    // Another checkout's pod under the same prefix is left out with a note.
    const alien = `${prefix}-alien`
    podman(
      'pod',
      'create',
      '--name',
      alien,
      '--label',
      `yard.dev/prefix=${prefix}`,
      '--label',
      'yard.dev/owner=0123456789ab',
      '--label',
      'yard.dev/name=alien',
      '--label',
      'yard.dev/offset=5',
    )
    podman(
      'create',
      '--pod',
      alien,
      '--name',
      `${alien}-workspace`,
      '--label',
      'yard.dev/owner=0123456789ab',
      BUSYBOX_IMAGE,
      'sleep',
      '600',
    )
    const listed = await run(['sandbox', 'list', '--json'])
    expect(listed.exitCode, listed.stderr).to.equal(0)
    const rows = listed.json as Array<{name: string; worktreesError?: string}>
    expect(rows.map((row) => row.name))
      .to.include('husk')
      .and.not.include('alien')
    expect(rows.find((row) => row.name === 'husk')!.worktreesError).to.include('its workspace container is gone')
    expect(listed.stderr).to.include(`not listed: the pod ${alien} belongs to another checkout`)
    podman('pod', 'rm', '--force', '--time', '0', alien)

    const again = await run(['sandbox', 'create', 'husk', '--repo', lone])
    expect(again.exitCode, again.stderr).to.equal(3)
    expect(again.stderr).to.include(`a pod named ${pod} exists`)
    expect(podExists(pod)).to.equal(true)
    expect(podmanTry('volume', 'exists', `${pod}-work`).status).to.equal(0)

    // Another clone of the repository (same prefix, same state directory) neither lists nor removes it.
    const twin = makeRepo({'yard.toml': readFileSync(path.join(fixture.app, 'yard.toml'), 'utf8')})
    const fromTwin = async (args: string[]) => yard(args, {cwd: twin, env: fixture.env})
    const twinList = await fromTwin(['sandbox', 'list', '--json'])
    expect(twinList.exitCode, twinList.stderr).to.equal(0)
    expect((twinList.json as Array<{name: string}>).map((row) => row.name)).to.not.include('husk')
    expect(twinList.stderr).to.include(`not listed: the pod ${pod} belongs to another checkout`)
    for (const args of [['--force'], ['--force', '--dry-run']]) {
      const twinRm = await fromTwin(['sandbox', 'rm', 'husk', ...args])
      expect(twinRm.exitCode, twinRm.stderr).to.equal(3)
      expect(twinRm.stderr).to.include(`the sandbox pod ${pod} belongs to another checkout`)
    }

    expect(podExists(pod)).to.equal(true)
    expect(podmanTry('volume', 'exists', `${pod}-work`).status).to.equal(0)

    const refused = await run(['sandbox', 'rm', 'husk'])
    expect(refused.exitCode, refused.stderr).to.equal(3)
    expect(refused.stderr).to.include(
      'cannot look for unsaved work in the sandbox husk: its workspace container is gone',
    )
    const dry = await run(['sandbox', 'rm', 'husk', '--dry-run'])
    expect(dry.exitCode).to.equal(3)
    expect(dry.stdout)
      .to.include('the workspace container of sandbox husk is gone')
      .and.include(`would remove pod ${pod}`)
    expect(podExists(pod)).to.equal(true)
    const removed = await run(['sandbox', 'rm', 'husk', '--force'])
    expect(removed.exitCode, removed.stderr).to.equal(0)
    expect(removed.stdout).to.include(`removed pod ${pod}`)
    expect(podExists(pod)).to.equal(false)
    expect(podmanTry('volume', 'exists', `${pod}-work`).status).to.equal(1)
    const made = await run(['sandbox', 'create', 'husk', '--repo', lone])
    expect(made.exitCode, made.stderr).to.equal(0)
    expect((await run(['sandbox', 'rm', 'husk', '--force'])).exitCode).to.equal(0)
  })
})
