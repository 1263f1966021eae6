/**
 * Attaches start from the remote's now (DESIGN.md §5.1 "fetch on demand before every attach",
 * §5.2; issue 23, acceptance 2), on both runtimes: a commit pushed upstream after the cache's
 * last fetch is in `default/` and is the base of a new branch after `yard sandbox attach`; with
 * the upstream unreachable attach still succeeds and warns that the cache is stale, with its age.
 *
 * podman: the real pod on this machine's cache. kubernetes: the fake API server, the real cache
 * agent of node-b running in-process on the same cache root (`[cluster] cache-root`), and the
 * fake kubectl mapping in-pod commands onto the podman-played twin of the pod.
 */
import {expect} from 'chai'
import {renameSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {openCacheDemand} from '../../../src/plugins/k8s-sandbox/cache-demand.js'
import {repoIdentity} from '../../../src/sdk/repo-identity.js'
import {ensureDefaultImage, sweep} from '../../support/podman.js'
import {cleanupTemp} from '../../support/repo.js'
import {yard} from '../../support/yard.js'
import {commitTo, harness} from '../git-cache/support.js'
import {cliAsync, FakeCluster, NAMESPACE} from './kubernetes-support.js'
import {inPod, makeApp, makeUpstream, SANDBOX_TEST_PREFIX, type SandboxFixture} from './support.js'

const prefix = `${SANDBOX_TEST_PREFIX}f`
const pod = `${prefix}-feat`
/** Named as if hosted (the kubernetes runtime refuses local paths); git here reads it as the path. */
const HOSTED_ENV = {GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'url./.insteadOf', GIT_CONFIG_VALUE_0: 'https://git.test/'}
const STALE_WITH_AGE = /warning: the cache app-[0-9a-f]{8} is stale since \d{4}-\d\d-\d\dT[0-9:.]+Z \(\d+[smhd] ago\): /

describe("sandbox attach starts from the remote's now, or says how stale (acceptance 2)", function () {
  this.timeout(240_000)
  let fixture: SandboxFixture
  let upstream: string
  let url: string
  const head = (dir: string) => inPod(pod, 'git', '-C', dir, 'rev-parse', 'HEAD')

  before(async () => {
    sweep(prefix)
    await ensureDefaultImage()
    upstream = makeUpstream('app')
    url = `https://git.test${upstream}`
    fixture = makeApp(prefix, 'WEB_PORT = 38980')
    const created = await yard(['sandbox', 'create', 'feat', '--runtime', 'podman', '--repo', url], {
      cwd: fixture.app,
      env: {...fixture.env, ...HOSTED_ENV},
    })
    expect(created.exitCode, created.stderr).to.equal(0)
  })

  after(() => {
    sweep(prefix)
    cleanupTemp()
  })

  it('podman: attach fetches the cache and default/, and a new branch starts at the new commit; unreachable, it warns stale with the age', async () => {
    const run = async (args: string[]) => yard(args, {cwd: fixture.app, env: {...fixture.env, ...HOSTED_ENV}})
    const later = commitTo(upstream, 'main', 'later', 'pushed after the cache last fetched\n')
    const attached = await run(['sandbox', 'attach', 'feat', '--runtime', 'podman', '--branch', 'next', '--json'])
    expect(attached.exitCode, attached.stderr).to.equal(0)
    expect(head('/work/app/default')).to.equal(later)
    expect(head('/work/app/next')).to.equal(later)
    // The branch attached at create sees it as origin's main, to merge or rebase onto.
    expect(inPod(pod, 'git', '-C', '/work/app/wt-feat', 'rev-parse', 'origin/main')).to.equal(later)
    expect((attached.json as {stale: Record<string, string>}).stale).to.deep.equal({})

    renameSync(upstream, `${upstream}.away`)
    try {
      const offline = await run(['sandbox', 'attach', 'feat', '--runtime', 'podman', '--branch', 'offline', '--json'])
      expect(offline.exitCode, offline.stderr).to.equal(0)
      expect(offline.stderr).to.match(STALE_WITH_AGE)
      expect((offline.json as {stale: Record<string, string>}).stale.app).to.match(/stale since .* ago/)
      expect(head('/work/app/offline')).to.equal(later)
    } finally {
      renameSync(`${upstream}.away`, upstream)
    }
  })

  it("kubernetes: create and attach ask the pod's node for a fetch (spec.askedAt) and wait for it; unreachable, attach warns stale with the age", async () => {
    const cluster = await FakeCluster.start()
    // Only the real agent answers asks here.
    cluster.answerAsks = false
    const root = path.join(fixture.state, 'caches')
    writeFileSync(
      path.join(fixture.app, 'yard.local.toml'),
      `[cluster]\ncache-root = "${root}"\nready-timeout-seconds = 5\ncache-timeout-seconds = 30\n`,
    )
    const {key} = repoIdentity(url)
    const node = harness({root, env: HOSTED_ENV})
    const demand = await openCacheDemand(
      {node: 'node-b', cacheRoot: root, namespace: NAMESPACE},
      {...process.env, KUBECONFIG: cluster.api.kubeconfigPath},
    )
    const stop = new AbortController()
    const agent = node.cache.agent(root, {
      intervalMs: 60 * 60_000,
      once: false,
      signal: stop.signal,
      pollMs: 100,
      demand,
    })
    const env = {...cluster.env, ...HOSTED_ENV}
    const asks = () =>
      cluster.api.calls.filter(
        (call) =>
          call.verb === 'patch' &&
          call.resource === 'repos' &&
          !call.subresource &&
          (call.body as {spec?: {askedAt?: string}}).spec?.askedAt,
      )
    try {
      const before = commitTo(upstream, 'main', 'before-create', 'pushed before the kubernetes create\n')
      const created = await cliAsync(fixture, env, [
        'sandbox',
        'create',
        'feat',
        '--runtime',
        'kubernetes',
        '--repo',
        url,
        '--branch',
        'kube',
        '--image',
        'yard-dev:test',
      ])
      expect(created.status, created.stderr).to.equal(0)
      expect(asks()).to.have.length(1)
      expect(head('/work/app/kube')).to.equal(before)

      const later = commitTo(upstream, 'main', 'later-k', 'pushed after the node last fetched\n')
      const attached = await cliAsync(fixture, env, [
        'sandbox',
        'attach',
        'feat',
        '--runtime',
        'kubernetes',
        '--branch',
        'kube-next',
      ])
      expect(attached.status, attached.stderr).to.equal(0)
      expect(attached.stderr).to.not.include('stale')
      expect(asks()).to.have.length(2)
      const entry = cluster.api.get('repos.yard.dev', NAMESPACE, key)?.status?.nodes?.['node-b']
      // A merge patch's null removes the field: no lastError.
      expect(entry.present).to.equal(true)
      expect(entry.lastError ?? null).to.equal(null)
      expect(Date.parse(entry.lastAsked)).to.be.at.least(
        Date.parse((asks().at(-1)!.body as {spec: {askedAt: string}}).spec.askedAt),
      )
      expect(head('/work/app/default')).to.equal(later)
      expect(head('/work/app/kube-next')).to.equal(later)

      renameSync(upstream, `${upstream}.away`)
      try {
        const started = Date.now()
        const offline = await cliAsync(fixture, env, [
          'sandbox',
          'attach',
          'feat',
          '--runtime',
          'kubernetes',
          '--branch',
          'kube-offline',
          '--json',
        ])
        expect(offline.status, offline.stderr).to.equal(0)
        expect(offline.stderr).to.match(STALE_WITH_AGE)
        expect(JSON.parse(offline.stdout).stale.app).to.match(/stale since .* ago/)
        // The node answered (its fetch failed): no waiting out the 30 s budget.
        expect(Date.now() - started).to.be.below(25_000)
        expect(head('/work/app/kube-offline')).to.equal(later)
      } finally {
        renameSync(`${upstream}.away`, upstream)
      }
    } finally {
      stop.abort()
      await agent
      await cluster.close()
    }
  })
})
