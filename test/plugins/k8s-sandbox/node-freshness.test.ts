/**
 * Cache freshness of kubernetes sandboxes as the nodes see it (DESIGN.md §5.1 stale vs cold,
 * §5.2; issue 23, acceptance 3): `yard sandbox list --json` reads each cache's `stale` from the
 * Repo status entry of the node the pod runs on — a node whose latest fetch failed is stale
 * though its cache is present; a sandbox of the same repository on a node that fetched fine is
 * not. Against the fake API server, pods seeded as the scheduler left them; no podman.
 */
import {expect} from 'chai'
import {realpathSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import type {SandboxSpec} from '../../../src/sdk/sandbox.js'
import type {Target} from '../../../src/sdk/target.js'
import type {KubeObject} from '../../support/fake-kube-api/index.js'

import {ownerHash} from '../../../src/core/identity/identity.js'
import {podManifest} from '../../../src/plugins/k8s-sandbox/manifest.js'
import {repoObject} from '../../../src/plugins/k8s-sandbox/repo-resource.js'
import {repoIdentity} from '../../../src/sdk/repo-identity.js'
import {cleanupTemp} from '../../support/repo.js'
import {yard} from '../../support/yard.js'
import {FakeCluster, NAMESPACE} from './kubernetes-support.js'
import {makeApp, type SandboxFixture} from './support.js'

const PREFIX = 'yardtest-k3'
const URL = 'https://git.example.com/acme/app.git'
const LIB = 'https://git.example.com/acme/lib.git'

interface Row {
  name: string
  node: string | null
  repos: Array<{slot: string; key: string; stale: boolean; lastFetched: string | null; lastError: string | null}>
}

describe('sandbox list: a cache is stale when the node its pod runs on failed to fetch it (acceptance 3)', function () {
  this.timeout(60_000)
  let cluster: FakeCluster
  let fixture: SandboxFixture

  before(async () => {
    cluster = await FakeCluster.start()
    fixture = makeApp(PREFIX, 'WEB_PORT = 39750')
    writeFileSync(path.join(fixture.app, 'yard.local.toml'), '[cluster]\nruntime = "kubernetes"\n')
  })

  after(async () => {
    await cluster.close()
    cleanupTemp()
  })

  /** The pod `yard sandbox create` would make for `name`, scheduled on `node` (by default still pulling: Pending). */
  async function scheduledPod(name: string, node: string, urls: string[], phase = 'Pending'): Promise<void> {
    const main = realpathSync(fixture.app)
    const target: Target = {
      name,
      isMain: false,
      prefix: PREFIX,
      project: `${PREFIX}-${name}`,
      owner: ownerHash(main),
      offset: 10,
      offsetSource: 'hash',
      ports: {},
      checkoutPath: main,
      mainPath: main,
    }
    const repos = urls.map((url) => ({...repoIdentity(url), slot: path.basename(url, '.git'), ref: null}))
    const spec: SandboxSpec = {
      runtime: 'kubernetes',
      image: 'yard-dev:test',
      cacheRoot: `/var/lib/yard/${NAMESPACE}/caches`,
      repos: repos.map(({slot, url, ref, identity, key}) => ({slot, url, ref, identity, key})),
      branch: `wt/${name}`,
      portBases: {},
    }
    const pod = podManifest(target, spec) as KubeObject
    await cluster.api.put({
      ...pod,
      metadata: {...pod.metadata, namespace: NAMESPACE},
      spec: {...pod.spec, nodeName: node},
      status: {phase},
    })
  }

  it("reports stale for the sandbox on the failing node only, with that node's last fetch and error", async () => {
    const app = repoIdentity(URL).key
    const lib = repoIdentity(LIB).key
    await cluster.api.put({
      ...repoObject(app, NAMESPACE, {url: URL}),
      status: {
        nodes: {
          'node-a': {
            present: true,
            lastFetched: '2026-11-29T10:00:00Z',
            lastError:
              "fatal: unable to access 'https://git.example.com/acme/app.git/': Could not resolve host: git.example.com",
          },
          'node-b': {present: true, lastFetched: '2026-12-01T09:00:00Z', lastError: null},
        },
      },
    })
    // lib is held fresh on node-a and not at all on node-b.
    await cluster.api.put({
      ...repoObject(lib, NAMESPACE, {url: LIB}),
      status: {nodes: {'node-a': {present: true, lastFetched: '2026-12-01T09:30:00Z', lastError: null}}},
    })
    await scheduledPod('feat', 'node-a', [URL, LIB])
    await scheduledPod('fix', 'node-b', [URL, LIB])

    const run = await yard(['sandbox', 'list', '--json'], {cwd: fixture.app, env: {...fixture.env, ...cluster.env}})
    expect(run.exitCode, run.stderr).to.equal(0)
    const rows = run.json as Row[]
    const slot = (name: string, key: string) =>
      rows.find((row) => row.name === name)!.repos.find((repo) => repo.key === key)!
    expect(rows.map((row) => [row.name, row.node])).to.deep.equal([
      ['feat', 'node-a'],
      ['fix', 'node-b'],
    ])
    expect(slot('feat', app)).to.deep.include({stale: true, lastFetched: '2026-11-29T10:00:00Z'})
    expect(slot('feat', app).lastError).to.include('Could not resolve host')
    expect(slot('fix', app)).to.deep.include({stale: false, lastFetched: '2026-12-01T09:00:00Z', lastError: null})
    expect(slot('feat', lib)).to.deep.include({stale: false, lastError: null})
    // node-b never reported lib: its pod has no fresh cache of it.
    expect(slot('fix', lib)).to.deep.include({stale: true, lastFetched: null})

    const text = await yard(['sandbox', 'list'], {cwd: fixture.app, env: {...fixture.env, ...cluster.env}})
    expect(text.stdout).to.match(/feat .*\n {2}app: git\.example\.com\/acme\/app \[app-[0-9a-f]{8}\] stale/)
  })

  it('lists a running sandbox whose worktrees cannot be read, saying why, and the others as usual', async () => {
    // Running, but no container answers kubectl exec (the fake maps it onto a podman container
    // that does not exist): as a pod whose container died under it.
    await scheduledPod('gone', 'node-a', [URL], 'Running')
    const run = await yard(['sandbox', 'list', '--json'], {cwd: fixture.app, env: {...fixture.env, ...cluster.env}})
    expect(run.exitCode, run.stderr).to.equal(0)
    const rows = run.json as Array<Row & {phase: string; worktreesError?: string}>
    expect(rows.map((row) => row.name)).to.deep.equal(['feat', 'fix', 'gone'])
    const gone = rows.find((row) => row.name === 'gone')!
    expect(gone.phase).to.equal('Running')
    expect(gone.worktreesError).to.include('looking for unsaved work in the sandbox pod')
    expect(rows.filter((row) => row.worktreesError !== undefined).map((row) => row.name)).to.deep.equal(['gone'])

    const text = await yard(['sandbox', 'list'], {cwd: fixture.app, env: {...fixture.env, ...cluster.env}})
    expect(text.exitCode, text.stderr).to.equal(0)
    expect(text.stdout).to.match(/\ngone .*Running.*\n {2}worktrees unreadable: looking for unsaved work/)
  })
})
