/**
 * `yard sandbox create --runtime kubernetes` waits for its pod's Ready on a watch (DESIGN.md
 * §5.2; docs/cluster.md, "The agent's API load"): the runtime's `play` against the fake API
 * server, whose scripted kubelet makes the pod Ready a while after the create. No podman here.
 */
import {expect} from 'chai'

import type {SandboxSpec} from '../../../src/sdk/sandbox.js'
import type {BackendContext, Target} from '../../../src/sdk/target.js'

import {KubernetesRuntime} from '../../../src/plugins/k8s-sandbox/kubernetes-runtime.js'
import {podManifest} from '../../../src/plugins/k8s-sandbox/manifest.js'
import {repoCrd, repoObject} from '../../../src/plugins/k8s-sandbox/repo-resource.js'
import {ProcessRunner} from '../../../src/sdk/process.js'
import {repoIdentity} from '../../../src/sdk/repo-identity.js'
import {type FakeKubeApi, type KubeObject, startFakeKubeApi} from '../../support/fake-kube-api/index.js'
import {FakeKubectl} from '../../support/fake-kubectl.js'
import {cleanupTemp, tempDir} from '../../support/repo.js'

const NAMESPACE = 'yard'
const NODE = 'node-a'
const CACHE_ROOT = `/var/lib/yard/${NAMESPACE}/caches`
const URL = 'https://git.test/team/app.git'
const READY_AFTER_MS = 1200

describe('kubernetes runtime: create waits for Ready on a watch', function () {
  this.timeout(30_000)
  let api: FakeKubeApi
  let readyAt = 0
  const timers: NodeJS.Timeout[] = []

  beforeEach(async () => {
    readyAt = 0
    api = await startFakeKubeApi({
      namespaces: [NAMESPACE],
      crds: [repoCrd()],
      onCreate({resource, object}, fake) {
        if (resource !== 'pods') return
        timers.push(
          setTimeout(
            () =>
              void fake.setPodReady(NAMESPACE, object.metadata.name, {node: NODE}).then(() => (readyAt = Date.now())),
            READY_AFTER_MS,
          ),
        )
      },
    })
    // The node already holds the cache: the wait for caches ends at once.
    await api.put({
      ...(repoObject(repoIdentity(URL).key, NAMESPACE, {url: URL}) as unknown as KubeObject),
      status: {nodes: {[NODE]: {present: true, lastFetched: '2026-11-29T10:00:00Z', lastError: null}}},
    })
  })

  afterEach(async () => {
    for (const timer of timers.splice(0)) clearTimeout(timer)
    await api.close()
    cleanupTemp()
  })

  function runtime(): KubernetesRuntime {
    const env = {...process.env, ...new FakeKubectl().env, KUBECONFIG: api.kubeconfigPath}
    const context: BackendContext = {
      runner: new ProcessRunner({env}),
      env,
      stateDir: tempDir('yard-state'),
      warn: () => undefined,
    }
    return new KubernetesRuntime(context, {
      namespace: NAMESPACE,
      cacheRoot: CACHE_ROOT,
      readyTimeoutMs: 20_000,
      cacheTimeoutMs: 5000,
    })
  }

  function manifest(name: string): Record<string, unknown> {
    const target: Target = {
      name,
      isMain: false,
      prefix: 'app',
      project: `app-${name}`,
      owner: '0123456789ab',
      offset: 7,
      offsetSource: 'hash',
      ports: {},
      checkoutPath: '/src/app',
      mainPath: '/src/app',
    }
    const {identity, key} = repoIdentity(URL)
    const spec: SandboxSpec = {
      runtime: 'kubernetes',
      image: 'yard-dev:test',
      cacheRoot: CACHE_ROOT,
      repos: [{slot: 'app', url: URL, ref: null, identity, key}],
      branch: `wt/${name}`,
      portBases: {},
    }
    return podManifest(target, spec)
  }

  it('sees the pod turn Ready when it does, with one watch and no read a second', async () => {
    await runtime().play(manifest('feat'))
    const done = Date.now()
    expect(readyAt).to.be.greaterThan(0)
    // Polling read once a second and saw Ready up to a second late.
    expect(done - readyAt).to.be.below(400)
    const pods = api.calls.filter((call) => call.resource === 'pods')
    const watches = pods.filter((call) => call.verb === 'watch')
    expect(watches.length).to.be.at.least(1)
    expect(watches.every((call) => call.fieldSelector === 'metadata.name=app-feat')).to.equal(true)
    expect(pods.filter((call) => call.verb === 'get').length).to.be.at.most(2)
  })

  it('polls when the user may not watch pods (403), and still sees Ready', async () => {
    api.inject(
      {verb: 'watch', resource: 'pods'},
      {code: 403, reason: 'Forbidden', message: 'pods is forbidden: cannot watch'},
      Infinity,
    )
    await runtime().play(manifest('feat'))
    const pods = api.calls.filter((call) => call.resource === 'pods')
    expect(pods.filter((call) => call.verb === 'watch')).to.have.length(1)
    expect(pods.filter((call) => call.verb === 'get').length).to.be.at.least(2)
  })
})
