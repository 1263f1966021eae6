/**
 * Fetch-through on the podman runtime (issue 18, acceptance 3; sdk/fetch-through.ts): a commit
 * pushed upstream after the sandbox exists reaches `git fetch origin` inside it without `yard
 * cache fetch`; with the upstream unreachable the fetch still succeeds from the cache and says
 * once on stderr that the cache is stale; without a yard exec serving, the fetch waits only
 * `[cache] fetch-through-seconds`, and with a `yard cache agent` running it is served all the
 * same; the pod still cannot write the cache.
 */
import {expect} from 'chai'
import {spawn, spawnSync} from 'node:child_process'
import {existsSync, renameSync, rmSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {asksRoot} from '../../../src/sdk/fetch-through.js'
import {repoIdentity} from '../../../src/sdk/repo-identity.js'
import {ensureDefaultImage, sweep} from '../../support/podman.js'
import {cleanupTemp} from '../../support/repo.js'
import {yard} from '../../support/yard.js'
import {commitTo} from '../git-cache/support.js'
import {
  cli,
  devJs,
  fixtureEnv,
  inPodTry,
  makeApp,
  makeUpstream,
  SANDBOX_TEST_PREFIX,
  type SandboxFixture,
} from './support.js'

const prefix = `${SANDBOX_TEST_PREFIX}g`
const pod = `${prefix}-ft`

describe('sandbox fetch-through: git fetch in the pod asks the cache to fetch first (podman)', function () {
  this.timeout(180_000)
  let fixture: SandboxFixture
  let upstream: string
  let key: string
  const inSandbox = (...argv: string[]) => cli(fixture, ['exec', 'ft/wt-ft', '--', ...argv])

  before(async () => {
    sweep(prefix)
    await ensureDefaultImage()
    upstream = makeUpstream('app')
    key = repoIdentity(upstream).key
    fixture = makeApp(prefix, 'WEB_PORT = 38940\n\n[cache]\nfetch-through-seconds = 3')
    const created = await yard(['sandbox', 'create', 'ft', '--runtime', 'podman', '--repo', upstream], {
      cwd: fixture.app,
      env: fixture.env,
    })
    expect(created.exitCode, created.stderr).to.equal(0)
  })

  after(() => {
    sweep(prefix)
    cleanupTemp()
  })

  it('a commit pushed after create is origin/main after yard exec … git fetch origin, with no stale note', () => {
    const later = commitTo(upstream, 'main', 'later', 'pushed after the sandbox exists\n')
    const fetched = inSandbox('git', 'fetch', 'origin')
    expect(fetched.status, fetched.stderr).to.equal(0)
    expect(fetched.stderr).not.to.include('yard:')
    const log = inSandbox('git', 'log', '-1', '--format=%H', 'origin/main')
    expect(log.stdout.trim(), log.stderr).to.equal(later)
  })

  it('with the upstream unreachable the fetch reads the cache and prints one stale line', () => {
    renameSync(upstream, `${upstream}.away`)
    try {
      const fetched = inSandbox('git', 'fetch', 'origin')
      expect(fetched.status, fetched.stderr).to.equal(0)
      const notes = fetched.stderr.split('\n').filter((line) => line.startsWith('yard: '))
      expect(notes, fetched.stderr).to.have.length(1)
      expect(notes[0]).to.match(
        new RegExp(
          String.raw`^yard: the cache ${key} is stale since \S+ \(\d+[smhd] ago\): .*; reading what the cache holds$`,
        ),
      )
    } finally {
      renameSync(`${upstream}.away`, upstream)
    }
  })

  it("serves the caches the pod mounts, whatever the config's cache root says now", () => {
    const later = commitTo(upstream, 'main', 'elsewhere', 'pushed while the config names another cache root\n')
    const env = {...fixtureEnv(fixture), YARD_CACHE_ROOT: path.join(fixture.state, 'another-cache-root')}
    const run = (...argv: string[]) =>
      spawnSync(process.execPath, [devJs, 'exec', 'ft/wt-ft', '--', ...argv], {cwd: fixture.app, env, encoding: 'utf8'})
    const fetched = run('git', 'fetch', 'origin')
    expect(fetched.status, fetched.stderr).to.equal(0)
    expect(fetched.stderr).not.to.include('yard:')
    expect(run('git', 'log', '-1', '--format=%H', 'origin/main').stdout.trim()).to.equal(later)
  })

  it('an exec ends with its command, not with a slow fetch it serves (the fetch is ended)', () => {
    // The host's fetch of the cache waits 30 s at the remote: the pod's fetch gives up after 3 s.
    const env = {
      ...fixtureEnv(fixture),
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'remote.origin.uploadpack',
      GIT_CONFIG_VALUE_0: 'sleep 30; git-upload-pack',
    }
    commitTo(upstream, 'main', 'slow', 'fetched slowly\n')
    const started = Date.now()
    const fetched = spawnSync(process.execPath, [devJs, 'exec', 'ft/wt-ft', '--', 'git', 'fetch', 'origin'], {
      cwd: fixture.app,
      env,
      encoding: 'utf8',
      timeout: 60_000,
    })
    const seconds = (Date.now() - started) / 1000
    expect(fetched.status, fetched.stderr).to.equal(0)
    expect(fetched.stderr).to.include(`yard: the cache ${key} did not answer within 3s`)
    expect(seconds, 'ends within its command and a moment, not the fetch').to.be.below(15)
    expect(spawnSync('pgrep', ['-f', 'sleep 30; git-upload-pack']).status, 'no fetch left running').to.equal(1)
  })

  it('without a yard exec or cache agent to answer, the fetch waits fetch-through-seconds, says so, then reads the cache', () => {
    const started = Date.now()
    const fetched = inPodTry(pod, 'git', '-C', '/work/app/wt-ft', 'fetch', 'origin')
    const seconds = (Date.now() - started) / 1000
    expect(fetched.status, fetched.stderr).to.equal(0)
    expect(fetched.stderr).to.include(
      `yard: the cache ${key} did not answer within 3s (its fetch takes longer, or a yard exec or yard cache agent is not running)`,
    )
    expect(seconds).to.be.within(2.5, 10)
  })

  it('with a yard cache agent running, a fetch without yard exec reaches the remote too', async () => {
    const env: NodeJS.ProcessEnv = {...process.env}
    for (const [name, value] of Object.entries(fixture.env)) {
      if (value === undefined) delete env[name]
      else env[name] = value
    }

    const agent = spawn(process.execPath, [devJs, 'cache', 'agent', '--interval', '1h'], {
      cwd: fixture.app,
      env,
      stdio: 'ignore',
    })
    try {
      // Up once it answers an ask of its own making.
      const dir = path.join(asksRoot(fixture.state, pod), key)
      writeFileSync(path.join(dir, '0.1.ask'), '')
      const deadline = Date.now() + 30_000
      while (!existsSync(path.join(dir, '0.1.answer')) && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 100))
      rmSync(path.join(dir, '0.1.answer'))
      // Past the 2 s between two fetches of one cache.
      await new Promise((resolve) => setTimeout(resolve, 2000))
      const later = commitTo(upstream, 'main', 'agent', 'served by the cache agent\n')
      const fetched = inPodTry(pod, 'git', '-C', '/work/app/wt-ft', 'fetch', 'origin')
      expect(fetched.status, fetched.stderr).to.equal(0)
      expect(fetched.stderr).not.to.include('yard:')
      expect(
        inPodTry(pod, 'git', '-C', '/work/app/wt-ft', 'log', '-1', '--format=%H', 'origin/main').stdout.trim(),
      ).to.equal(later)
    } finally {
      agent.kill('SIGTERM')
      await new Promise((resolve) => agent.once('exit', resolve))
    }
  })

  it('the pod still cannot write the cache', () => {
    for (const target of [`/repos/${key}/intruder`, `/repos/${key}/refs/heads/intruder`]) {
      const touched = inPodTry(pod, 'touch', target)
      expect(touched.status, `touch ${target}`).not.to.equal(0)
      expect(touched.stderr).to.match(/Read-only file system/)
    }

    const pushed = inPodTry(pod, 'git', '-C', '/work/app/wt-ft', 'push', `/repos/${key}`, 'HEAD:refs/heads/intruder')
    expect(pushed.status).not.to.equal(0)
  })
})
