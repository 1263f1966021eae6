/**
 * The `kubernetes` sandbox runtime (DESIGN.md §5.2) against the in-process fake API server, with
 * the fake kubectl first on PATH. A pod made through the fake API has no container, so the same
 * sandbox is first played for real with the podman runtime: the fake kubectl maps `kubectl exec
 * POD -c workspace` onto that pod's workspace container, and attach, `yard exec` and rm's checks
 * run real git in it (test/support/fake-kubectl/fake-kubectl.mjs).
 */
import {expect} from 'chai'
import {execFileSync} from 'node:child_process'
import {existsSync, readFileSync, symlinkSync, writeFileSync} from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import {setTimeout as delay} from 'node:timers/promises'

import {WORKDIR_SCRIPT} from '../../../src/plugins/k8s-sandbox/kubectl.js'
import {repoObject} from '../../../src/plugins/k8s-sandbox/repo-resource.js'
import {repoIdentity} from '../../../src/sdk/repo-identity.js'
import {ensureDefaultImage, podman, sweep} from '../../support/podman.js'
import {cleanupTemp, tempDir} from '../../support/repo.js'
import {openPane} from '../../support/tmux.js'
import {readVectors} from '../../support/vectors.js'
import {yard} from '../../support/yard.js'
import {cliAsync, cliLineWith, FakeCluster, K2_TEST_PREFIX, NAMESPACE} from './kubernetes-support.js'
import {inPod, makeApp, makeUpstream, podExists, type SandboxFixture} from './support.js'

const prefix = `${K2_TEST_PREFIX}a`
const pod = `${prefix}-feat`
const CACHE_ROOT = `/var/lib/yard/${NAMESPACE}/caches`
const KUBECTL = ['--context', 'fake', '--namespace', NAMESPACE]
/**
 * A cluster fetches nothing from a path on this machine (a local path is refused for the
 * kubernetes runtime), so the upstreams are named as if hosted; git on this machine — the
 * podman-played twin's cache — reads `https://git.test/<path>` as `<path>` (git's insteadOf).
 */
const hosted = (dir: string) => `https://git.test${dir}`
const HOSTED_ENV = {GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'url./.insteadOf', GIT_CONFIG_VALUE_0: 'https://git.test/'}

describe('the kubernetes sandbox runtime against the fake API server (DESIGN.md §5.2)', function () {
  this.timeout(240_000)
  let fixture: SandboxFixture
  let cluster: FakeCluster
  let upstreamApp: string
  let upstreamLib: string
  let keyApp: string
  let keyLib: string
  const run = async (args: string[]) =>
    yard(args, {cwd: fixture.app, env: {...fixture.env, ...cluster.env, ...HOSTED_ENV}})
  const fakePod = (name = pod) => cluster.api.get('pods', NAMESPACE, name)
  const repo = (key: string) => cluster.api.get('repos.yard.dev', NAMESPACE, key)

  before(async () => {
    sweep(K2_TEST_PREFIX)
    await ensureDefaultImage()
    upstreamApp = hosted(makeUpstream('app'))
    upstreamLib = hosted(makeUpstream('lib'))
    keyApp = repoIdentity(upstreamApp).key
    keyLib = repoIdentity(upstreamLib).key
    fixture = makeApp(prefix, 'WEB_PORT = 39100\nAPI_PORT = 39300')
    writeFileSync(
      path.join(fixture.app, 'yard.local.toml'),
      '[cluster]\nruntime = "kubernetes"\nready-timeout-seconds = 2\ncache-timeout-seconds = 5\n',
    )
    cluster = await FakeCluster.start()
    // The same sandbox on real podman kube play: where the fake kubectl runs in-pod commands.
    const played = await run([
      'sandbox',
      'create',
      'feat',
      '--runtime',
      'podman',
      '--repo',
      upstreamApp,
      '--repo',
      `lib=${upstreamLib}`,
      '--branch',
      'feat/login',
    ])
    expect(played.exitCode, played.stderr).to.equal(0)
    // node-a's cache agent already holds app's cache; nobody has asked for lib yet.
    await cluster.api.put({
      ...repoObject(keyApp, NAMESPACE, {url: upstreamApp}),
      status: {nodes: {'node-a': {present: true, lastFetched: '2026-11-29T10:00:00Z', lastError: null}}},
    })
  })

  after(async () => {
    await cluster?.close()
    sweep(K2_TEST_PREFIX)
    cleanupTemp()
  })

  it('create declares a Repo per cache key and makes the Pod with read-only hostPath caches under [cluster] cache-root, the podman labels and only a soft affinity toward the node holding a cache (acceptance 2)', async () => {
    const created = await run([
      'sandbox',
      'create',
      'feat',
      '--repo',
      upstreamApp,
      '--repo',
      `lib=${upstreamLib}`,
      '--branch',
      'feat/login',
      '--json',
    ])
    expect(created.exitCode, created.stderr).to.equal(0)
    expect(created.json).to.deep.include({name: 'feat', project: pod, runtime: 'kubernetes', branch: 'feat/login'})
    expect((created.json as {slots: Array<{path: string}>}).slots.map((slot) => slot.path)).to.deep.equal([
      '/work/app/feat-login',
      '/work/lib/feat-login',
    ])

    // The url as given, and the ask for a fresh fetch its attach made.
    expect(repo(keyLib)?.spec).to.have.keys('url', 'askedAt').and.include({url: upstreamLib})
    expect(repo(keyApp)?.spec).to.have.keys('url', 'askedAt').and.include({url: upstreamApp})
    const repoCreates = cluster.api.calls.filter((call) => call.verb === 'create' && call.resource === 'repos')
    expect(repoCreates).to.have.length(1)

    const made = fakePod()!
    const workspace = made.spec.containers[0]
    for (const key of [keyApp, keyLib]) {
      const volume = made.spec.volumes.find(
        (entry: {hostPath?: {path: string}}) => entry.hostPath?.path === `${CACHE_ROOT}/${key}`,
      )
      expect(volume?.hostPath).to.deep.equal({path: `${CACHE_ROOT}/${key}`, type: 'DirectoryOrCreate'})
      expect(workspace.volumeMounts).to.deep.include({name: volume.name, mountPath: `/repos/${key}`, readOnly: true})
    }

    expect(made.spec.affinity).to.deep.equal({
      nodeAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          {weight: 1, preference: {matchFields: [{key: 'metadata.name', operator: 'In', values: ['node-a']}]}},
        ],
      },
    })
    expect(JSON.stringify(made.spec)).to.not.include('requiredDuringScheduling')
    expect(workspace.ports.every((port: {hostPort?: number}) => port.hostPort === undefined)).to.equal(true)
    expect(made.metadata.labels).to.include({
      'app.kubernetes.io/managed-by': 'yard',
      'yard.dev/project': pod,
      'yard.dev/name': 'feat',
      'yard.dev/prefix': prefix,
    })

    // Attach ran through kubectl exec, container workspace, in the namespace and context.
    const execs = cluster.kubectl.verb('exec')
    expect(execs.length).to.be.greaterThan(3)
    for (const call of execs) expect(call.argv.slice(0, 5)).to.deep.equal([...KUBECTL, 'exec'])
    expect(execs.some((call) => call.argv.includes('clone') || call.argv.includes('worktree'))).to.equal(true)
    expect(
      execs.every((call) => call.argv[call.argv.indexOf('-c') + 1] === 'workspace' && call.argv.includes(pod)),
    ).to.equal(true)
  })

  it('the same name gives the same project, owner, offset and ports in the Pod labels of both runtimes (acceptance 6)', async () => {
    const podmanLabels = JSON.parse(podman('pod', 'inspect', '--format', '{{json .Labels}}', pod)) as Record<
      string,
      string
    >
    const clusterLabels = fakePod()!.metadata.labels as Record<string, string>
    const yardLabels = (labels: Record<string, string>) =>
      Object.fromEntries(
        Object.entries(labels).filter(([key]) => key.startsWith('yard.dev/') || key === 'app.kubernetes.io/managed-by'),
      )
    expect(yardLabels(clusterLabels)).to.deep.equal(yardLabels(podmanLabels))
    expect(Object.keys(yardLabels(clusterLabels)).sort()).to.deep.equal([
      'app.kubernetes.io/managed-by',
      'yard.dev/name',
      'yard.dev/offset',
      'yard.dev/owner',
      'yard.dev/prefix',
      'yard.dev/project',
    ])

    const rows = async (runtime: string) =>
      (
        (await run(['sandbox', 'list', '--runtime', runtime, '--json'])).json as Array<{
          name: string
          project: string
          runtime: string
          offset: number
          ports: Record<string, number>
        }>
      ).map(({name, project, offset, ports}) => ({name, project, offset, ports}))
    const onCluster = await rows('kubernetes')
    expect(onCluster).to.deep.equal(await rows('podman'))
    // The hash offset of the shared vectors: neither runtime moved it.
    const {offset} = readVectors<{cases: Array<{name: string; offset: number}>}>('offsets.json').cases.find(
      (entry) => entry.name === 'feat',
    )!
    expect(clusterLabels['yard.dev/offset']).to.equal(String(offset))
    expect(onCluster).to.deep.equal([
      {name: 'feat', project: pod, offset, ports: {WEB_PORT: 39_100 + offset, API_PORT: 39_300 + offset}},
    ])
  })

  it('yard exec NAME/BRANCH runs kubectl exec with the sh -c workdir wrapper, -i without a terminal, and passes the exit code through (acceptance 5)', async () => {
    cluster.kubectl.clear()
    const status = await cliAsync(fixture, cluster.env, ['exec', 'feat/feat-login', '--', 'git', 'status'])
    expect(status.status, status.stderr).to.equal(0)
    expect(status.stdout).to.include('On branch feat/login')
    const exec = cluster.kubectl.verb('exec').at(-1)!
    expect(exec.argv).to.deep.equal([
      ...KUBECTL,
      'exec',
      '-i',
      pod,
      '-c',
      'workspace',
      '--',
      'sh',
      '-c',
      WORKDIR_SCRIPT,
      'sh',
      '/work/app/feat-login',
      'git',
      'status',
    ])
    expect(exec.stdinTTY).to.equal(false)

    const seven = await cliAsync(fixture, cluster.env, ['exec', 'feat/feat-login', '--', 'sh', '-c', 'exit 7'])
    expect(seven.status, seven.stderr).to.equal(7)
    expect(cluster.kubectl.verb('exec').at(-1)!.argv.slice(-5)).to.deep.equal([
      'sh',
      '/work/app/feat-login',
      'sh',
      '-c',
      'exit 7',
    ])

    // A user's word that looks like script text stays one argument.
    const words = await cliAsync(fixture, cluster.env, [
      'exec',
      '--sandbox',
      'feat',
      '--slot',
      'lib',
      '--',
      'printf',
      '%s|',
      '$(id)',
      'a b',
    ])
    expect(words.status, words.stderr).to.equal(0)
    expect(words.stdout).to.equal('$(id)|a b|')
  })

  it('yard exec NAME/.. and NAME/. are exit 2 before kubectl runs anything in the pod', async () => {
    cluster.kubectl.clear()
    for (const name of ['feat/..', 'feat/.']) {
      const refused = await cliAsync(fixture, cluster.env, ['exec', name, '--', 'pwd'])
      expect(refused.status, `${name}: ${refused.stdout}`).to.equal(2)
      expect(refused.stdout).to.equal('')
      expect(refused.stderr).to.include('names no branch directory')
    }

    expect(cluster.kubectl.verb('exec')).to.deep.equal([])
  })

  it('attach on the kubernetes runtime makes another branch worktree in every slot through kubectl exec', async () => {
    const attached = await run(['sandbox', 'attach', 'feat', '--branch', 'fix/typo', '--json'])
    expect(attached.exitCode, attached.stderr).to.equal(0)
    expect(attached.json).to.deep.equal({
      name: 'feat',
      branch: 'fix/typo',
      slots: [
        {slot: 'app', default: '/work/app/default', path: '/work/app/fix-typo', created: true},
        {slot: 'lib', default: '/work/lib/default', path: '/work/lib/fix-typo', created: true},
      ],
      stale: {},
    })
    expect(inPod(pod, 'git', '-C', '/work/lib/fix-typo', 'rev-parse', '--abbrev-ref', 'HEAD')).to.equal('fix/typo')
    expect(
      cluster.kubectl
        .verb('exec')
        .some((call) => call.argv.includes('worktree') && call.argv.includes('/work/lib/fix-typo')),
    ).to.equal(true)
  })

  it("on a terminal yard exec passes -it and the command gets a terminal of the pane's size (acceptance 5)", async () => {
    cluster.kubectl.clear()
    const pane = openPane(`${K2_TEST_PREFIX}-${process.pid}`, {width: 100, height: 30, command: 'sh'})
    try {
      pane.send(
        `clear; ${cliLineWith(fixture, cluster.env, ['exec', 'feat/feat-login', '--', 'sh', '-c', 'test -t 0 && stty size'])}; echo exec-done`,
        'Enter',
      )
      // A terminal at the pane's size: stdio is handed to kubectl as it is.
      expect(await pane.waitFor(/^exec-done\s*$/m)).to.match(/^30 100\s*$/m)
    } finally {
      pane.kill()
    }

    const exec = cluster.kubectl.verb('exec').at(-1)!
    expect(exec.argv.slice(0, 8)).to.deep.equal([...KUBECTL, 'exec', '-it', pod, '-c'])
    expect(exec.stdinTTY).to.equal(true)
  })

  it('yard sandbox forward builds one kubectl port-forward of every [ports] key, local base + offset → container base; on podman it lists the published ports (acceptance 5)', async () => {
    const offset = Number(fakePod()!.metadata.labels['yard.dev/offset'])
    const expected = [
      'kubectl',
      ...KUBECTL,
      'port-forward',
      `pod/${pod}`,
      `${39_300 + offset}:39300`,
      `${39_100 + offset}:39100`,
    ]
    const planned = await run(['sandbox', 'forward', 'feat', '--dry-run', '--json'])
    expect(planned.exitCode, planned.stderr).to.equal(0)
    expect(planned.json).to.deep.include({published: false, argv: expected, exitCode: null})

    cluster.kubectl.clear()
    const mixed = await run(['sandbox', 'forward', 'feat', '--json'])
    expect(mixed.exitCode).to.equal(2)
    expect((mixed.json as {error: {message: string}}).error.message).to.equal(
      '--json needs --dry-run when kubectl port-forward runs',
    )
    expect(cluster.kubectl.verb('port-forward')).to.deep.equal([])

    const forwarded = await cliAsync(fixture, cluster.env, ['sandbox', 'forward', 'feat'])
    expect(forwarded.status, forwarded.stderr).to.equal(0)
    expect(cluster.kubectl.verb('port-forward').map((call) => call.argv)).to.deep.equal([expected.slice(1)])
    expect(forwarded.stdout).to.include(`Forwarding from 127.0.0.1:${39_100 + offset} -> 39100`)

    cluster.kubectl.clear()
    const published = await run(['sandbox', 'forward', 'feat', '--runtime', 'podman', '--json'])
    expect(published.exitCode, published.stderr).to.equal(0)
    expect(published.json).to.deep.include({published: true, argv: null})
    expect(cluster.kubectl.calls()).to.deep.equal([])
  })

  it('yard sandbox forward runs until Ctrl-C, which ends it with exit 130 (DESIGN.md Appendix B)', async () => {
    const pane = openPane(`${K2_TEST_PREFIX}-fwd-${process.pid}`, {width: 120, height: 30, command: 'sh'})
    try {
      pane.send(
        `clear; ${cliLineWith(fixture, {...cluster.env, FAKE_KUBECTL_FORWARD_HOLD: '1'}, ['sandbox', 'forward', 'feat'])}`,
        'Enter',
      )
      expect(await pane.waitFor(/^Forwarding from 127\.0\.0\.1:\d+ -> 39300\s*$/m)).to.match(
        /^Ctrl-C stops forwarding\s*$/m,
      )
      pane.send('C-c')
      await new Promise((resolve) => setTimeout(resolve, 500))
      pane.send('echo "exit=$?"', 'Enter')
      expect(await pane.waitFor(/^exit=\d+\s*$/m)).to.match(/^exit=130\s*$/m)
    } finally {
      pane.kill()
    }
  })

  it('a pod that never becomes Ready fails create after the budget with its conditions and events, and leaves nothing behind (acceptance 3)', async () => {
    const upstreamExtra = hosted(makeUpstream('extra'))
    const keyExtra = repoIdentity(upstreamExtra).key
    const message =
      '0/3 nodes are available: 3 Insufficient memory. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.'
    cluster.scripts.set(`${prefix}-stuck`, {kind: 'stuck', message, events: [{reason: 'FailedScheduling', message}]})
    const started = Date.now()
    const failed = await run(['sandbox', 'create', 'stuck', '--repo', upstreamExtra, '--repo', upstreamApp])
    const took = Date.now() - started
    expect(failed.exitCode, failed.stderr).to.equal(1)
    expect(took).to.be.at.least(2000)
    expect(failed.stderr).to.include(`the sandbox pod ${prefix}-stuck did not become Ready within 2 s`)
    expect(failed.stderr).to.include(`PodScheduled=False (Unschedulable: ${message})`)
    expect(failed.stderr).to.match(/Warning FailedScheduling: 0\/3 nodes are available/)

    expect(fakePod(`${prefix}-stuck`)).to.equal(undefined)
    expect(repo(keyExtra)).to.equal(undefined)
    // app's Repo was there before and the feat pod mounts it: it stays.
    expect(repo(keyApp)).to.not.equal(undefined)
    expect(readFileSync(path.join(fixture.app, 'yard.local.toml'), 'utf8')).to.not.match(/^stuck\s*=/m)
    expect(existsSync(path.join(fixture.state, 'caches', keyExtra))).to.equal(false)
    expect(
      cluster.api.calls.some(
        (call) =>
          call.verb === 'list' &&
          call.resource === 'events' &&
          call.fieldSelector === `involvedObject.name=${prefix}-stuck`,
      ),
    ).to.equal(true)
  })

  it("a node whose agent reports a lastError for a cache fails create with the agent's error and deletes the pod", async () => {
    const missing = `${path.dirname(upstreamApp)}/gone.git`
    const keyMissing = repoIdentity(missing).key
    const agentError = `fatal: '${missing}' does not appear to be a git repository`
    cluster.scripts.set(`${prefix}-broken`, {
      kind: 'ready',
      node: 'node-c',
      agent: {lastError: agentError},
      agentDelayMs: 200,
    })
    const failed = await run(['sandbox', 'create', 'broken', '--repo', missing])
    expect(failed.exitCode, failed.stderr).to.equal(1)
    expect(failed.stderr).to.include(`the cache agent on node node-c could not clone ${missing} (Repo ${keyMissing})`)
    expect(failed.stderr).to.include(agentError)
    expect(fakePod(`${prefix}-broken`)).to.equal(undefined)
    expect(repo(keyMissing)).to.equal(undefined)
  })

  it('a node whose agent never reports the cache fails create after [cluster] cache-timeout-seconds, and the pod goes', async () => {
    const quiet = hosted(makeUpstream('quiet'))
    cluster.scripts.set(`${prefix}-quiet`, {kind: 'ready', node: 'node-d', agent: 'silent'})
    const started = Date.now()
    const failed = await run(['sandbox', 'create', 'quiet', '--repo', quiet])
    expect(failed.exitCode, failed.stderr).to.equal(1)
    expect(Date.now() - started).to.be.at.least(5000)
    expect(failed.stderr).to.include(
      `node node-d did not report the cache ${repoIdentity(quiet).key} present within 5 s for the sandbox pod ${prefix}-quiet`,
    )
    expect(fakePod(`${prefix}-quiet`)).to.equal(undefined)
    expect(repo(repoIdentity(quiet).key)).to.equal(undefined)
  })

  it('a Repo create refused half-way (403) fails create before any pod, and removes the Repos it had made', async () => {
    const first = hosted(makeUpstream('first'))
    const second = hosted(makeUpstream('second'))
    // The first Repo create goes through; then the next one is forbidden.
    const forbidden = {
      code: 403,
      reason: 'Forbidden',
      message: 'repos.yard.dev is forbidden: User "dev" cannot create resource "repos" in API group "yard.dev"',
    }
    const before = cluster.api.calls.length
    cluster.onCreated = (created) => {
      if (created.resource !== 'repos') return
      cluster.api.inject({verb: 'create', resource: 'repos'}, forbidden)
      cluster.onCreated = undefined
    }

    const failed = await run(['sandbox', 'create', 'half', '--repo', first, '--repo', second])
    expect(failed.exitCode, failed.stderr).to.equal(1)
    expect(failed.stderr).to.include('forbidden: repos.yard.dev is forbidden')
    const creates = cluster.api.calls
      .slice(before)
      .filter((call) => call.verb === 'create' && call.resource === 'repos')
    expect(creates).to.have.length(2)
    expect(repo(repoIdentity(first).key)).to.equal(undefined)
    expect(repo(repoIdentity(second).key)).to.equal(undefined)
    expect(cluster.api.calls.slice(before).some((call) => call.verb === 'create' && call.resource === 'pods')).to.equal(
      false,
    )
  })

  it('create without kubectl on PATH is refused with exit 2 and the install hint before any Repo or pod exists (docs/sandboxes.md, Create step 1)', async () => {
    const fresh = hosted(makeUpstream('nokubectl'))
    // node, git and podman, and no kubectl (this machine may have a real one next to them).
    const bin = tempDir('yard-no-kubectl')
    for (const tool of ['node', 'git', 'podman'])
      symlinkSync(execFileSync('sh', ['-c', `command -v ${tool}`], {encoding: 'utf8'}).trim(), path.join(bin, tool))
    const local = readFileSync(path.join(fixture.app, 'yard.local.toml'), 'utf8')
    const before = cluster.api.calls.length
    const refused = await yard(['sandbox', 'create', 'nokc', '--repo', fresh], {
      cwd: fixture.app,
      env: {...fixture.env, ...cluster.env, PATH: bin},
    })
    expect(refused.exitCode, refused.stderr).to.equal(2)
    expect(refused.stderr).to.include('kubectl is not installed or not on PATH').and.to.include('install kubectl')
    const made = cluster.api.calls
      .slice(before)
      .filter((call) => call.verb === 'create' || call.verb === 'patch' || call.verb === 'delete')
    expect(made, 'API calls that change the cluster').to.deep.equal([])
    expect(repo(repoIdentity(fresh).key)).to.equal(undefined)
    expect(readFileSync(path.join(fixture.app, 'yard.local.toml'), 'utf8')).to.equal(local)
  })

  it('an attach that fails after the pod started deletes the pod and the Repos this create made; a Repo another pod mounts stays', async () => {
    const fresh = hosted(makeUpstream('orphan'))
    const keyFresh = repoIdentity(fresh).key
    // No podman-runtime pod of that name: the fake kubectl's exec, and so attach, fails.
    const before = cluster.api.calls.length
    const failed = await run(['sandbox', 'create', 'orphan', '--repo', fresh, '--repo', `app=${upstreamApp}`])
    expect(failed.exitCode, failed.stderr).to.equal(1)
    expect(failed.stderr).to.include(`no podman-runtime pod ${prefix}-orphan`)
    const calls = cluster.api.calls.slice(before)
    expect(
      calls.some((call) => call.verb === 'create' && call.resource === 'pods'),
      'the pod was created',
    ).to.equal(true)
    expect(
      calls.some((call) => call.verb === 'create' && call.resource === 'repos'),
      'the Repo was created',
    ).to.equal(true)
    expect(fakePod(`${prefix}-orphan`)).to.equal(undefined)
    expect(repo(keyFresh), 'the Repo this create made').to.equal(undefined)
    expect(repo(keyApp), 'the Repo the feat pod mounts').to.not.equal(undefined)
  })

  it('worktree add asks the cluster for sandboxes on [cluster] runtime kubernetes and pins a clashing newcomer (alpha and feat both hash to 59)', async () => {
    const listsBefore = cluster.api.calls.filter((call) => call.verb === 'list' && call.resource === 'pods').length
    const added = await run(['worktree', 'add', 'alpha', '--json'])
    expect(added.exitCode, added.stderr).to.equal(0)
    expect(added.json).to.deep.include({
      offset: 1,
      offsetSource: 'pin',
      pinned: {hashOffset: 59, clashedWith: ['feat']},
    })
    const lists = cluster.api.calls
      .filter((call) => call.verb === 'list' && call.resource === 'pods')
      .slice(listsBefore)
    expect(lists.map((call) => call.labelSelector)).to.deep.equal([
      `app.kubernetes.io/managed-by=yard,yard.dev/prefix=${prefix}`,
    ])
  })

  it('an unreachable cluster fails sandbox commands naming the context and its server, and is left out of worktree offset checks with a note', async () => {
    // A port nothing listens on (not 9: fetch, which client-node 2 uses, refuses the "bad ports").
    const closed = net.createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const {port} = closed.address() as net.AddressInfo
    await new Promise((resolve) => closed.close(resolve))
    const kubeconfig = cluster.api.writeKubeconfig({
      currentContext: 'gone',
      contexts: {gone: `http://127.0.0.1:${port}`},
    })
    const env = {...fixture.env, ...cluster.env, KUBECONFIG: kubeconfig}
    const listed = await yard(['sandbox', 'list'], {cwd: fixture.app, env})
    expect(listed.exitCode, listed.stderr).to.equal(1)
    expect(listed.stderr).to.include(
      `cannot reach the Kubernetes API server http://127.0.0.1:${port} (kube context "gone")`,
    )
    const added = await yard(['worktree', 'add', 'beta'], {cwd: fixture.app, env})
    expect(added.exitCode, added.stderr).to.equal(0)
    expect(added.stderr).to.match(
      /note: sandboxes of the k8s-sandbox backend \(runtime kubernetes\) are left out of the offset check/,
    )
  })

  it('a cluster that accepts connections but never answers is left out of worktree offset checks after 2 s, and the yard process exits: its request is aborted, not left pending (DESIGN.md §3.4)', async () => {
    const sockets = new Set<net.Socket>()
    const open = new Set<net.Socket>()
    const silent = net.createServer((socket) => {
      sockets.add(socket)
      open.add(socket)
      socket.on('close', () => open.delete(socket))
    })
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    try {
      const kubeconfig = cluster.api.writeKubeconfig({
        currentContext: 'hang',
        contexts: {hang: `https://127.0.0.1:${(silent.address() as net.AddressInfo).port}`},
      })
      // Its own process: a request left pending keeps the event loop, and so the process, alive
      // for as long as the listener lives, long after the output is printed.
      const started = Date.now()
      const adding = cliAsync(fixture, {...cluster.env, KUBECONFIG: kubeconfig}, ['worktree', 'add', 'gamma'])
      const added = await Promise.race([adding, delay(30_000, undefined, {ref: false})])
      expect(
        added,
        `yard worktree add still running after ${Date.now() - started} ms, ${open.size} connection(s) open`,
      ).to.not.equal(undefined)
      expect(added!.status, added!.stderr).to.equal(0)
      expect(added!.stderr).to.match(
        /note: sandboxes of the k8s-sandbox backend \(runtime kubernetes\) are left out of the offset check: .*within 2 s/,
      )
      expect(sockets.size, 'yard never connected to the silent cluster').to.be.above(0)
    } finally {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => silent.close(resolve))
    }
  })

  it('rm checks unsaved work through kubectl exec, --force copies the bundle out with kubectl cp, then deletes the cluster pod only: the podman pod of the same name and the Repos stay', async () => {
    inPod(pod, 'sh', '-c', 'echo draft > /work/app/feat-login/notes.txt')
    inPod(pod, 'git', '-C', '/work/app/feat-login', 'commit', '-q', '--allow-empty', '-m', 'on the cluster')
    const refused = await run(['sandbox', 'rm', 'feat'])
    expect(refused.exitCode, refused.stderr).to.equal(3)
    expect(refused.stderr).to.include('/work/app/feat-login: ?? notes.txt')
    expect(fakePod()).to.not.equal(undefined)

    cluster.kubectl.clear()
    const removed = await run(['sandbox', 'rm', 'feat', '--force', '--json'])
    expect(removed.exitCode, removed.stderr).to.equal(0)
    const {saved} = removed.json as {saved: string[]}
    // lib holds nothing the cache lacks: no bundle of it; app's bundle holds just the branch with the new commit.
    expect(saved.map((file) => path.basename(file)).sort()).to.deep.equal(['app-feat-login.patch', 'app.bundle'])
    expect(
      execFileSync('git', ['bundle', 'list-heads', saved.find((file) => file.endsWith('app.bundle'))!], {
        encoding: 'utf8',
      })
        .trim()
        .split('\n')
        .map((line) => line.split(' ', 2)[1]),
    ).to.deep.equal(['refs/heads/feat/login'])
    expect(
      readFileSync(
        saved.find((file) => file.endsWith('.patch'))!,
        'utf8',
      ),
    ).to.include('+draft')
    expect(cluster.kubectl.verb('cp').map((call) => call.argv.slice(5, 8))).to.deep.include([
      '-c',
      'workspace',
      `${pod}:/tmp/yard-save/app.bundle`,
    ])
    expect(fakePod()).to.equal(undefined)
    expect(
      cluster.api.calls.some((call) => call.verb === 'delete' && call.resource === 'pods' && call.name === pod),
    ).to.equal(true)
    expect(podExists(pod)).to.equal(true)
    expect(repo(keyApp)).to.not.equal(undefined)
    expect(repo(keyLib)).to.not.equal(undefined)
  })
})
