/**
 * A private repository on a cluster (DESIGN.md §5.2: "an HTTPS token or a deploy-key Secret for
 * private ones"; issue 23, acceptance 1). The repository is served over https with basic auth on
 * this machine (test/support/https-git.ts: git http-backend behind a Node https server); the
 * simulated node is `yard cache agent --kubernetes --once` run with the environment and mounts
 * of the DaemonSet `yard cluster install` renders — its credentials volume is a directory the
 * test fills from the Secret, as the kubelet would. Without credentials the node's status says
 * so; after `yard cluster credentials set` the agent clones and fetches; the token is nowhere
 * but the Secret. (No ssh server runs on these machines: the deploy-key path is checked as
 * rendered environment only.)
 */
import {expect} from 'chai'
import {chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import type {CacheAgentPass} from '../../../src/sdk/cache.js'

import {credentialsFor} from '../../../src/plugins/git-cache/credentials.js'
import {
  agentRoleRules,
  clusterObjects,
  CREDENTIALS_DIR,
  CREDENTIALS_SECRET,
} from '../../../src/plugins/k8s-sandbox/cluster-objects.js'
import {repoCrd, repoObject} from '../../../src/plugins/k8s-sandbox/repo-resource.js'
import {repoIdentity} from '../../../src/sdk/repo-identity.js'
import {type FakeKubeApi, type KubeObject, startFakeKubeApi} from '../../support/fake-kube-api/index.js'
import {type HttpsGit, startHttpsGit} from '../../support/https-git.js'
import {cleanupTemp, tempDir} from '../../support/repo.js'
import {yard, type YardRun} from '../../support/yard.js'
import {commitTo, git, makeUpstream} from './support.js'

const NAMESPACE = 'yard'
const NODE = 'node-a'
const TOKEN = 'ghp_pr1vateT0kenOfTheClusterAgent'

function filesHolding(dir: string, needle: string): string[] {
  return readdirSync(dir, {recursive: true, withFileTypes: true})
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name))
    .filter((file) => readFileSync(file).includes(needle))
}

describe('git-cache: a private https repository through yard cluster credentials (acceptance 1)', function () {
  this.timeout(60_000)
  let api: FakeKubeApi
  let server: HttpsGit
  let upstream: string
  let url: string
  let root: string
  let mount: string
  let agentEnv: Record<string, string | undefined>
  const outputs: YardRun[] = []

  before(async () => {
    upstream = makeUpstream('private')
    server = await startHttpsGit({root: path.dirname(upstream), user: 'alice', password: TOKEN})
    url = `${server.url}/private.git`
    api = await startFakeKubeApi({namespaces: [NAMESPACE], crds: [repoCrd()]})
    root = path.join(tempDir('yard-node'), 'caches')
    mount = tempDir('yard-credentials-mount')
    // The agent container as rendered: its env, with the downward API filled in and each mount
    // path (the cache root, /tmp, the credentials) on a directory of this machine.
    const objects = clusterObjects({
      namespace: NAMESPACE,
      cacheRoot: root,
      image: 'localhost/yard-agent:test',
      version: 'test',
    })
    const container = (objects.find((object) => object.kind === 'DaemonSet') as KubeObject).spec.template.spec
      .containers[0]
    const tmp = tempDir('yard-agent-tmp')
    // (The test's cache root is itself under this machine's /tmp: only the emptyDir's own paths move.)
    const local = (value: string) =>
      value.startsWith(CREDENTIALS_DIR)
        ? mount + value.slice(CREDENTIALS_DIR.length)
        : value === '/tmp' || value === '/tmp/yard'
          ? tmp + value.slice('/tmp'.length)
          : value
    const fields: Record<string, string> = {'spec.nodeName': NODE, 'metadata.namespace': NAMESPACE}
    agentEnv = Object.fromEntries(
      (container.env as Array<{name: string; value?: string; valueFrom?: {fieldRef: {fieldPath: string}}}>).map(
        (entry) => [
          entry.name,
          entry.value === undefined ? fields[entry.valueFrom!.fieldRef.fieldPath] : local(entry.value),
        ],
      ),
    )
    expect(agentEnv.YARD_CREDENTIALS_DIR).to.equal(mount)
    Object.assign(agentEnv, {
      KUBECONFIG: api.kubeconfigPath,
      YARD_KUBE_CONTEXT: undefined,
      GIT_SSL_CAINFO: server.caFile,
    })
    // Declared ahead: the node wants it before any sandbox.
    await api.put(repoObject(repoIdentity(url).key, NAMESPACE, {url, prefetch: true}))
  })

  after(async () => {
    await server.close()
    await api.close()
    cleanupTemp()
  })

  const key = () => repoIdentity(url).key
  const entry = () =>
    api.get('repos.yard.dev', NAMESPACE, key())?.status?.nodes?.[NODE] as
      {present: boolean; lastError?: string; lastFetched?: string; credentials?: string} | undefined
  const cli = async (args: string[], env: Record<string, string | undefined> = {}) => {
    const run = await yard(args, {
      cwd: tempDir('yard-cwd'),
      env: {KUBECONFIG: api.kubeconfigPath, YARD_NAMESPACE: NAMESPACE, YARD_KUBE_CONTEXT: undefined, ...env},
    })
    outputs.push(run)
    return run
  }

  const agent = async () => {
    const run = await cli(['cache', 'agent', '--kubernetes', '--once', '--json'], agentEnv)
    expect(run.exitCode, run.stderr).to.equal(0)
    return run.json as Required<CacheAgentPass>
  }

  const ask = async () =>
    api.put({
      ...api.get('repos.yard.dev', NAMESPACE, key())!,
      spec: {url, prefetch: true, askedAt: new Date().toISOString()},
    })
  /** The kubelet's part: the Secret's keys as files of the mounted volume (mode 0400). */
  function mountSecret(): void {
    for (const file of readdirSync(mount)) chmodSync(path.join(mount, file), 0o600)
    const secret = api.get('secrets', NAMESPACE, CREDENTIALS_SECRET)
    for (const [name, value] of Object.entries((secret?.data ?? {}) as Record<string, string>)) {
      writeFileSync(path.join(mount, name), Buffer.from(value, 'base64'), {mode: 0o400})
    }
  }

  it('without credentials the node reports why in lastError, naming the missing credentials', async () => {
    const pass = await agent()
    expect(pass.failed).to.deep.equal([key()])
    expect(entry()?.present).to.equal(false)
    // A merge patch's null removes the field: no credentials matched.
    expect(entry()?.credentials ?? null).to.equal(null)
    expect(entry()?.lastError).to.include(`could not read Username for '${server.url}'`)
    expect(entry()?.lastError)
      .to.include(`no yard cluster credentials match ${url}`)
      .and.to.include('yard cluster credentials set')
    expect(server.requests.some((request) => request.user === null)).to.equal(true)
  })

  it('credentials set stores the token in the Secret only; the agent then clones and fetches the private repository', async () => {
    const set = await cli(
      [
        'cluster',
        'credentials',
        'set',
        `${server.url}/`,
        '--token-from-env',
        'YARD_TEST_TOKEN',
        '--username',
        'alice',
        '--json',
      ],
      {YARD_TEST_TOKEN: TOKEN},
    )
    expect(set.exitCode, set.stderr).to.equal(0)
    expect(set.json).to.deep.include({
      action: 'created',
      secret: CREDENTIALS_SECRET,
      entry: {prefix: `${server.url}/`, kind: 'token', username: 'alice', knownHosts: false},
    })
    const secret = api.get('secrets', NAMESPACE, CREDENTIALS_SECRET)!
    expect(secret.metadata.labels).to.include({'app.kubernetes.io/managed-by': 'yard'})
    expect(
      Object.values(secret.data as Record<string, string>).map((value) => Buffer.from(value, 'base64').toString()),
    ).to.include(TOKEN)
    mountSecret()

    await ask()
    expect((await agent()).cloned).to.deep.equal([key()])
    expect(git(path.join(root, key()), ['rev-parse', 'main'])).to.equal(git(upstream, ['rev-parse', 'main']))
    expect(entry()).to.include({present: true, credentials: `${server.url}/`})
    expect(entry()?.lastError ?? null).to.equal(null)

    const later = commitTo(upstream, 'main', 'later', 'pushed to the private repository\n')
    await ask()
    expect((await agent()).fetched).to.deep.equal([key()])
    expect(git(path.join(root, key()), ['rev-parse', 'main'])).to.equal(later)
    expect(server.requests.filter((request) => request.user === 'alice').length).to.be.greaterThan(1)

    const listed = await cli(['cluster', 'credentials', 'list', '--json'])
    expect(listed.json).to.deep.equal([{prefix: `${server.url}/`, kind: 'token', username: 'alice', knownHosts: false}])
    const status = await cli(['cluster', 'status', '--json'])
    expect(
      (status.json as {repos: Array<{nodes: Array<{credentials: string | null}>}>}).repos[0].nodes[0].credentials,
    ).to.equal(`${server.url}/`)
  })

  it('the token is nowhere but the Secret: not in Repos, pods, status, any output, the cache or its config', async () => {
    const everything = JSON.stringify({
      repos: api.objects('repos.yard.dev'),
      pods: api.objects('pods'),
      calls: api.calls.filter((call) => call.resource !== 'secrets'),
    })
    expect(everything).to.not.include(TOKEN)
    for (const output of outputs) expect(output.stdout + output.stderr).to.not.include(TOKEN)
    expect(filesHolding(root, TOKEN)).to.deep.equal([])
    expect(git(path.join(root, key()), ['config', '--local', '--list']))
      .to.not.include(TOKEN)
      .and.to.not.include('credential')
    expect(filesHolding(path.dirname(agentEnv.YARD_STATE_DIR!), TOKEN)).to.deep.equal([])
  })

  it('the helper is scoped to the prefix host, the Role reads no Secrets, and rm removes the entry', async () => {
    const match = credentialsFor(mount, url, {GIT_CONFIG_COUNT: '1'})!
    expect(match.env).to.include({
      GIT_CONFIG_COUNT: '3',
      GIT_CONFIG_KEY_1: 'credential.helper',
      GIT_CONFIG_VALUE_1: '',
      GIT_CONFIG_KEY_2: `credential.${server.url}.helper`,
    })
    expect(JSON.stringify(match.env)).to.not.include(TOKEN)
    expect(credentialsFor(mount, 'https://elsewhere.example/private.git', {})).to.equal(undefined)
    // The kubelet mounts the Secret with the node's rights: the agent's Role has nothing on secrets.
    expect(agentRoleRules().some((rule) => rule.resources.includes('secrets'))).to.equal(false)

    const removed = await cli(['cluster', 'credentials', 'rm', `${server.url}/`])
    expect(removed.exitCode, removed.stderr).to.equal(0)
    expect((await cli(['cluster', 'credentials', 'list', '--json'])).json).to.deep.equal([])
    expect((await cli(['cluster', 'credentials', 'rm', `${server.url}/`])).exitCode).to.equal(2)
    mkdirSync(mount, {recursive: true})
  })
})
