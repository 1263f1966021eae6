/**
 * Repositories declared ahead (`yard cluster repo add|list|rm`; DESIGN.md §5.1 "at boot from the
 * walk", §5.2; issue 23, acceptance 5): on a two-node fake cluster both nodes' agents clone a
 * declared repository before any sandbox exists; after `repo rm` a node evicts it at once when
 * no pod on it mounts it, and the other only once its pod has ended. The agents are `yard cache
 * agent --kubernetes --once` passes with real git on temporary node roots.
 */
import {expect} from 'chai'
import {existsSync} from 'node:fs'
import path from 'node:path'

import type {CacheAgentPass} from '../../../src/sdk/cache.js'
import type {SandboxSpec} from '../../../src/sdk/sandbox.js'
import type {Target} from '../../../src/sdk/target.js'

import {podManifest} from '../../../src/plugins/k8s-sandbox/manifest.js'
import {repoCrd} from '../../../src/plugins/k8s-sandbox/repo-resource.js'
import {repoIdentity} from '../../../src/sdk/repo-identity.js'
import {type FakeKubeApi, type KubeObject, startFakeKubeApi} from '../../support/fake-kube-api/index.js'
import {cleanupTemp, tempDir} from '../../support/repo.js'
import {yard} from '../../support/yard.js'
import {git, makeUpstream} from './support.js'

const NAMESPACE = 'yard'
/** The cluster cannot fetch a path on this machine; git here reads `https://git.test/<path>` as the path. */
const HOSTED_ENV = {GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'url./.insteadOf', GIT_CONFIG_VALUE_0: 'https://git.test/'}

describe('git-cache: repositories declared ahead of any sandbox (yard cluster repo, acceptance 5)', function () {
  this.timeout(60_000)
  let api: FakeKubeApi
  let roots: Record<string, string>
  const env = () => ({
    KUBECONFIG: api.kubeconfigPath,
    YARD_NAMESPACE: NAMESPACE,
    YARD_KUBE_CONTEXT: undefined,
    ...HOSTED_ENV,
  })

  beforeEach(async () => {
    api = await startFakeKubeApi({namespaces: [NAMESPACE], crds: [repoCrd()]})
    roots = {
      'node-a': path.join(tempDir('yard-node-a'), 'caches'),
      'node-b': path.join(tempDir('yard-node-b'), 'caches'),
    }
  })

  afterEach(async () => {
    await api.close()
    cleanupTemp()
  })

  const cli = async (args: string[], extra: Record<string, string | undefined> = {}) =>
    yard(args, {cwd: tempDir('yard-cwd'), env: {...env(), ...extra}})
  async function agent(node: string): Promise<Required<CacheAgentPass>> {
    const run = await cli(['cache', 'agent', '--kubernetes', '--once', '--json'], {
      NODE_NAME: node,
      YARD_CACHE_ROOT: roots[node],
    })
    expect(run.exitCode, run.stderr).to.equal(0)
    return run.json as Required<CacheAgentPass>
  }

  const present = (node: string, key: string) => existsSync(path.join(roots[node], key, 'HEAD'))

  it('repo add makes both nodes clone before any pod; repo rm evicts where no pod mounts it, and elsewhere once its pod ended', async () => {
    const upstream = makeUpstream('app')
    const url = `https://git.test${upstream}`
    const {key} = repoIdentity(url)

    const added = await cli(['cluster', 'repo', 'add', url, '--refresh', '10m', '--json'])
    expect(added.exitCode, added.stderr).to.equal(0)
    expect(added.json).to.deep.equal([{key, url, action: 'created'}])
    expect(api.get('repos.yard.dev', NAMESPACE, key)?.spec).to.deep.equal({url, prefetch: true, refreshInterval: '10m'})
    expect(api.objects('pods', NAMESPACE)).to.deep.equal([])

    for (const node of ['node-a', 'node-b']) {
      expect((await agent(node)).cloned, node).to.deep.equal([key])
      expect(present(node, key), node).to.equal(true)
      expect(git(path.join(roots[node], key), ['rev-parse', 'main'])).to.equal(git(upstream, ['rev-parse', 'main']))
    }

    const listed = await cli(['cluster', 'repo', 'list', '--json'])
    expect(listed.json).to.deep.equal([
      {key, url, refreshInterval: '10m', prefetch: true, present: ['node-a', 'node-b']},
    ])
    // A second add changes nothing.
    expect((await cli(['cluster', 'repo', 'add', url, '--refresh', '10m', '--json'])).json).to.deep.equal([
      {key, url, action: 'unchanged'},
    ])

    // A sandbox pod on node-a mounts it when the Repo goes.
    const target: Target = {
      name: 'feat',
      isMain: false,
      prefix: 'app',
      project: 'app-feat',
      owner: '0123456789ab',
      offset: 7,
      offsetSource: 'hash',
      ports: {},
      checkoutPath: '/src/app',
      mainPath: '/src/app',
    }
    const spec: SandboxSpec = {
      runtime: 'kubernetes',
      image: 'yard-dev:test',
      cacheRoot: roots['node-a'],
      repos: [{slot: 'app', url, ref: null, identity: repoIdentity(url).identity, key}],
      branch: 'wt/feat',
      portBases: {},
    }
    const pod = podManifest(target, spec) as KubeObject
    await api.put({
      ...pod,
      metadata: {...pod.metadata, namespace: NAMESPACE},
      spec: {...pod.spec, nodeName: 'node-a'},
      status: {phase: 'Running'},
    })

    const removed = await cli(['cluster', 'repo', 'rm', url, '--json'], {YARD_CACHE_ROOT: roots['node-a']})
    expect(removed.exitCode, removed.stderr).to.equal(0)
    expect(api.get('repos.yard.dev', NAMESPACE, key)).to.equal(undefined)
    expect((await agent('node-b')).evicted).to.deep.equal([key])
    expect(existsSync(path.join(roots['node-b'], key))).to.equal(false)
    expect((await agent('node-a')).evicted).to.deep.equal([])
    expect(present('node-a', key)).to.equal(true)
    await api.patchStatus('pods', NAMESPACE, 'app-feat', {phase: 'Succeeded'})
    expect((await agent('node-a')).evicted).to.deep.equal([key])
    expect(existsSync(path.join(roots['node-a'], key))).to.equal(false)

    // Nothing left to remove: exit 2.
    expect((await cli(['cluster', 'repo', 'rm', key])).exitCode).to.equal(2)
  })

  it('repo add refuses urls the cluster cannot fetch (exit 2) and makes no Repo', async () => {
    for (const url of [makeUpstream('local'), 'http://localhost:3000/acme/app.git']) {
      const run = await cli(['cluster', 'repo', 'add', 'https://git.example.com/acme/ok.git', url])
      expect(run.exitCode, run.stderr).to.equal(2)
      expect(run.stderr).to.include('cannot be fetched by the cluster')
    }

    expect(
      (await cli(['cluster', 'repo', 'add', 'https://git.example.com/acme/ok.git', '--refresh', '0m'])).exitCode,
    ).to.equal(2)
    expect(api.objects('repos.yard.dev', NAMESPACE)).to.deep.equal([])
  })
})
