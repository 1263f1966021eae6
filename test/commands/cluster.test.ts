import {expect} from 'chai'
/**
 * `yard cluster install|status` (DESIGN.md §5.2): the --dry-run YAML against the Kubernetes
 * schemas, install against the FAKE API server (exactly the listed objects, twice without
 * error), status from seeded state, and bad input that changes nothing.
 */
import {execFile} from 'node:child_process'
import {existsSync, readFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import path from 'node:path'
import {promisify} from 'node:util'
import {parseAllDocuments} from 'yaml'

import {agentRoleRules} from '../../src/plugins/k8s-sandbox/cluster-objects.js'
import {repoCrd} from '../../src/plugins/k8s-sandbox/repo-resource.js'
import {repoIdentity} from '../../src/sdk/repo-identity.js'
import {type FakeKubeApi, type KubeObject, startFakeKubeApi} from '../support/fake-kube-api/index.js'
import {structuralViolations} from '../support/fake-kube-api/openapi.js'
import {builtinResources, validateBuiltin, validateMeta} from '../support/fake-kube-api/resources.js'
import {cleanupTemp, makeRepo, tempDir} from '../support/repo.js'
import {projectRoot, yard} from '../support/yard.js'

const EXPECTED = [
  'Namespace yard',
  'CustomResourceDefinition repos.yard.dev',
  'ServiceAccount yard/yard-cache-agent',
  'Role yard/yard-cache-agent',
  'RoleBinding yard/yard-cache-agent',
  'DaemonSet yard/yard-cache-agent',
]
const describeObject = (object: KubeObject) =>
  `${object.kind} ${object.metadata.namespace ? `${object.metadata.namespace}/` : ''}${object.metadata.name}`
/** Where each kind is stored in the fake (plural). */
const PLURAL: Record<string, string> = Object.fromEntries(builtinResources().map((type) => [type.kind, type.plural]))

/** An environment with no kubeconfig anywhere. */
function noKubeconfig(): Record<string, string | undefined> {
  return {
    KUBECONFIG: path.join(tempDir('yard-no-kube'), 'absent'),
    HOME: tempDir('yard-home'),
    YARD_NAMESPACE: undefined,
    YARD_KUBE_CONTEXT: undefined,
    KUBERNETES_SERVICE_HOST: undefined,
  }
}

async function dryRun(cwd: string, args: string[] = []): Promise<KubeObject[]> {
  const run = await yard(['cluster', 'install', '--dry-run', ...args], {cwd, env: noKubeconfig()})
  expect(run.exitCode, run.stderr).to.equal(0)
  const documents = parseAllDocuments(run.stdout)
  for (const document of documents) expect(document.errors).to.deep.equal([])
  return documents.map((document) => document.toJS() as KubeObject)
}

describe('yard cluster install --dry-run', () => {
  after(cleanupTemp)

  it('prints the objects as YAML that validates against the Kubernetes schemas, with a structural CRD, and needs no kubeconfig', async () => {
    const objects = await dryRun(tempDir())
    expect(objects.map(describeObject)).to.deep.equal(EXPECTED)
    for (const object of objects) {
      const type = builtinResources().find((candidate) => candidate.kind === object.kind)!
      expect(validateMeta(type, object), describeObject(object)).to.deep.equal([])
      expect(await validateBuiltin(type, object), describeObject(object)).to.deep.equal([])
    }

    const crd = objects[1]
    expect(crd).to.deep.equal(repoCrd())
    for (const version of crd.spec.versions)
      expect(structuralViolations(version.schema.openAPIV3Schema)).to.deep.equal([])

    expect(objects[3].rules).to.deep.equal(agentRoleRules())
    const pod = objects[5].spec.template.spec
    const container = pod.containers[0]
    expect(container.command).to.deep.equal(['yard', 'cache', 'agent', '--kubernetes'])
    expect(container.image).to.equal(
      `localhost/yard-agent:${JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')).version}`,
    )
    expect(container.env).to.deep.include({name: 'NODE_NAME', valueFrom: {fieldRef: {fieldPath: 'spec.nodeName'}}})
    expect(container.securityContext).to.include({readOnlyRootFilesystem: true, allowPrivilegeEscalation: false})
    expect(container.resources.requests).to.have.keys('cpu', 'memory')
    expect(pod.volumes).to.deep.include({
      name: 'caches',
      hostPath: {path: '/var/lib/yard/yard/caches', type: 'DirectoryOrCreate'},
    })
    expect(pod.serviceAccountName).to.equal('yard-cache-agent')
    expect(objects[5].spec.selector.matchLabels).to.deep.equal({'app.kubernetes.io/name': 'yard-cache-agent'})
    expect(objects[5].spec.template.metadata.labels).to.include(objects[5].spec.selector.matchLabels)
  })

  it('takes [cluster] namespace and cache-root from the checkout, and --image', async () => {
    const repo = makeRepo({'yard.toml': '[cluster]\nnamespace = "team"\ncache-root = "/srv/yard/caches"\n'})
    const objects = await dryRun(repo, ['--image', 'registry.example.com/team/yard-agent:1.2.3'])
    expect(objects.map(describeObject)).to.deep.equal(
      EXPECTED.map((line) => line.replace('Namespace yard', 'Namespace team').replace('yard/', 'team/')),
    )
    const daemonSet = objects[5]
    expect(daemonSet.spec.template.spec.containers[0].image).to.equal('registry.example.com/team/yard-agent:1.2.3')
    expect(daemonSet.spec.template.spec.volumes[0].hostPath.path).to.equal('/srv/yard/caches')
    expect(daemonSet.spec.template.spec.containers[0].env).to.deep.include({
      name: 'YARD_CACHE_ROOT',
      value: '/srv/yard/caches',
    })
    expect(objects[4].subjects).to.deep.equal([{kind: 'ServiceAccount', name: 'yard-cache-agent', namespace: 'team'}])
  })

  it('loads no client-node (imported lazily, DESIGN.md §9), though start-up imports every command module', async () => {
    const record = path.join(tempDir('yard-imports'), 'imports.txt')
    const {stdout} = await promisify(execFile)(
      process.execPath,
      [
        '--import',
        createRequire(import.meta.url).resolve('tsx'),
        '--import',
        path.join(projectRoot, 'test', 'support', 'record-imports.mjs'),
        path.join(projectRoot, 'bin', 'dev.js'),
        'cluster',
        'install',
        '--dry-run',
      ],
      {
        cwd: tempDir(),
        env: {...process.env, ...(noKubeconfig() as Record<string, string>), RECORD_IMPORTS_FILE: record},
      },
    )
    expect(stdout).to.contain('kind: DaemonSet')
    const loaded = readFileSync(record, 'utf8').split('\n')
    expect(
      loaded.some((url) => url.includes('/src/commands/sandbox/create.ts')),
      'the other commands were loaded too',
    ).to.equal(true)
    expect(loaded.filter((url) => url.includes('@kubernetes/client-node'))).to.deep.equal([])
  })

  it('refuses an invalid --image or YARD_NAMESPACE with exit 2', async () => {
    const badImage = await yard(['cluster', 'install', '--dry-run', '--image', '-rm'], {
      cwd: tempDir(),
      env: noKubeconfig(),
    })
    expect(badImage.exitCode).to.equal(2)
    expect(badImage.stderr).to.contain('invalid image reference "-rm"')
    expect(badImage.stdout).to.equal('')
    const badNamespace = await yard(['cluster', 'install', '--dry-run'], {
      cwd: tempDir(),
      env: {...noKubeconfig(), YARD_NAMESPACE: 'Not_A_Label'},
    })
    expect(badNamespace.exitCode).to.equal(2)
    expect(badNamespace.stderr).to.contain('invalid Kubernetes namespace "Not_A_Label" from env YARD_NAMESPACE')
  })
})

describe('yard cluster install and status against the fake API server', () => {
  let api: FakeKubeApi
  let cwd: string
  const env = () => ({KUBECONFIG: api.kubeconfigPath, YARD_NAMESPACE: undefined, YARD_KUBE_CONTEXT: undefined})

  beforeEach(async () => {
    api = await startFakeKubeApi()
    cwd = tempDir()
  })

  afterEach(async () => api.close())

  after(cleanupTemp)

  it('creates exactly the listed objects, as rendered, then changes nothing on a second run', async () => {
    const rendered = await dryRun(cwd)
    const first = await yard(['cluster', 'install'], {cwd, env: env()})
    expect(first.exitCode, first.stderr).to.equal(0)
    expect(first.stdout).to.contain('created   DaemonSet yard/yard-cache-agent')
    expect(first.stdout).to.contain('installed in namespace yard: 6 created, 0 updated, 0 unchanged')

    const created = api.calls
      .filter((call) => call.verb === 'create')
      .map((call) => `${call.resource} ${call.namespace ?? ''}/${(call.body as KubeObject).metadata.name}`)
    expect(created).to.deep.equal([
      'namespaces /yard',
      'customresourcedefinitions /repos.yard.dev',
      'serviceaccounts yard/yard-cache-agent',
      'roles yard/yard-cache-agent',
      'rolebindings yard/yard-cache-agent',
      'daemonsets yard/yard-cache-agent',
    ])
    // Every field rendered reached the server (client-node's serializer drops fields it does not know).
    for (const object of rendered) {
      const stored = api.get(PLURAL[object.kind], object.metadata.namespace, object.metadata.name)!
      const {status: _, ...storedWithoutStatus} = stored
      expect(storedWithoutStatus, describeObject(object)).to.deep.equal({
        ...object,
        metadata: {
          ...object.metadata,
          ...pick(stored.metadata, ['uid', 'creationTimestamp', 'resourceVersion', 'generation']),
        },
      })
    }

    // Nothing else: the only objects besides the fake's own namespaces are the listed ones.
    expect(api.objects('namespaces').map((item) => item.metadata.name)).to.deep.equal([
      'default',
      'kube-public',
      'kube-system',
      'yard',
    ])
    for (const plural of [
      'pods',
      'configmaps',
      'secrets',
      'services',
      'deployments',
      'clusterroles',
      'clusterrolebindings',
    ])
      expect(api.objects(plural), plural).to.deep.equal([])

    const calls = api.calls.length
    const second = await yard(['cluster', 'install', '--json'], {cwd, env: env()})
    expect(second.exitCode, second.stderr).to.equal(0)
    const result = second.json as {steps: Array<{kind: string; action: string}>; objects: unknown[]}
    expect(result.steps.map((step) => step.action)).to.deep.equal(Array.from({length: 6}).fill('unchanged'))
    expect(result.objects).to.have.length(6)
    expect(api.calls.slice(calls).filter((call) => call.verb === 'create')).to.deep.equal([])

    const third = await yard(['cluster', 'install', '--image', 'localhost/yard-agent:next'], {cwd, env: env()})
    expect(third.exitCode, third.stderr).to.equal(0)
    expect(third.stdout)
      .to.contain('updated   DaemonSet yard/yard-cache-agent')
      .and.to.contain('1 updated, 5 unchanged')
    expect(api.get('daemonsets', 'yard', 'yard-cache-agent')!.spec.template.spec.containers[0].image).to.equal(
      'localhost/yard-agent:next',
    )
  })

  it('fails with exit 2 without a kubeconfig and exit 1 when the server refuses, saying why', async () => {
    const none = await yard(['cluster', 'install'], {cwd, env: noKubeconfig()})
    expect(none.exitCode).to.equal(2)
    expect(none.stderr).to.contain('no kubeconfig found')
    // The cluster commands have no --runtime flag: the fix is the kubeconfig alone.
    expect(none.stderr).to.contain('fix: point KUBECONFIG').and.not.to.contain('--runtime')
    const status = await yard(['cluster', 'status'], {cwd, env: noKubeconfig()})
    expect(status.exitCode).to.equal(2)
    expect(status.stderr).to.contain('no kubeconfig found').and.not.to.contain('--runtime')

    api.inject(
      {verb: 'create', resource: 'daemonsets'},
      {
        code: 403,
        reason: 'Forbidden',
        message: 'daemonsets.apps is forbidden: User "dev" cannot create resource "daemonsets"',
      },
    )
    const refused = await yard(['cluster', 'install'], {cwd, env: env()})
    expect(refused.exitCode).to.equal(1)
    expect(refused.stderr).to.contain('create DaemonSet yard/yard-cache-agent: forbidden').and.to.contain('auth can-i')
    // A later run completes what the refused one left out.
    const again = await yard(['cluster', 'install'], {cwd, env: env()})
    expect(again.stdout).to.contain('1 created, 0 updated, 5 unchanged')
  })

  it("status --json: the agent per node and every Repo per node from the cluster's state", async () => {
    expect((await yard(['cluster', 'install'], {cwd, env: env()})).exitCode).to.equal(0)
    const agentPod = (name: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {name, namespace: 'yard', labels: {'app.kubernetes.io/name': 'yard-cache-agent'}},
      spec: {containers: [{name: 'agent', image: 'localhost/yard-agent:test'}]},
    })
    await api.put(agentPod('yard-cache-agent-b'))
    await api.setPodReady('yard', 'yard-cache-agent-b', {node: 'node-b'})
    await api.put(agentPod('yard-cache-agent-a'))
    await api.setPodUnschedulable('yard', 'yard-cache-agent-a', 'not yet')
    await api.put({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {name: 'app-feat', namespace: 'yard', labels: {'yard.dev/name': 'feat'}},
      spec: {containers: [{name: 'workspace', image: 'x'}]},
    })
    await api.patchStatus('daemonsets', 'yard', 'yard-cache-agent', {
      desiredNumberScheduled: 2,
      numberReady: 1,
      currentNumberScheduled: 2,
    })
    await api.put({
      apiVersion: 'yard.dev/v1alpha1',
      kind: 'Repo',
      metadata: {name: 'app-0123abcd', namespace: 'yard'},
      spec: {url: 'https://example.com/app.git'},
      status: {
        nodes: {
          'node-b': {present: true, lastFetched: '2026-11-29T10:00:00Z', credentials: 'https://example.com/'},
          'node-a': {present: false, lastError: 'fatal: could not read from remote'},
        },
      },
    })
    await api.put({
      apiVersion: 'yard.dev/v1alpha1',
      kind: 'Repo',
      metadata: {name: 'lib-89abcdef', namespace: 'yard'},
      spec: {url: 'https://example.com/lib.git', askedAt: '2026-11-29T11:00:00Z'},
    })

    const run = await yard(['cluster', 'status', '--json'], {cwd, env: env()})
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(run.json).to.deep.equal({
      context: 'fake',
      namespace: 'yard',
      agent: {
        image: `localhost/yard-agent:${JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')).version}`,
        desired: 2,
        ready: 1,
      },
      agents: [
        {node: null, pod: 'yard-cache-agent-a', phase: 'Pending', ready: false, restarts: 0},
        {node: 'node-b', pod: 'yard-cache-agent-b', phase: 'Running', ready: true, restarts: 0},
      ],
      repos: [
        {
          key: 'app-0123abcd',
          url: 'https://example.com/app.git',
          askedAt: null,
          nodes: [
            {
              node: 'node-a',
              present: false,
              lastFetched: null,
              lastError: 'fatal: could not read from remote',
              credentials: null,
            },
            {
              node: 'node-b',
              present: true,
              lastFetched: '2026-11-29T10:00:00Z',
              lastError: null,
              credentials: 'https://example.com/',
            },
          ],
        },
        {key: 'lib-89abcdef', url: 'https://example.com/lib.git', askedAt: '2026-11-29T11:00:00Z', nodes: []},
      ],
    })
    const text = await yard(['cluster', 'status'], {cwd, env: env()})
    expect(text.stdout).to.contain('cache agent: 1/2 ready')
    expect(text.stdout).to.match(
      /app-0123abcd\s+https:\/\/example.com\/app.git\s+node-a\s+no\s+-\s+-\s+fatal: could not read from remote/,
    )
    // Which credentials served the node (yard cluster credentials), by prefix.
    expect(text.stdout).to.match(
      /app-0123abcd\s+https:\/\/example.com\/app.git\s+node-b\s+yes\s+\S+ ago\s+https:\/\/example.com\/\s/,
    )
    expect(text.stdout).to.match(/lib-89abcdef\s+https:\/\/example.com\/lib.git\s+\(none yet\)/)
  })

  it("the DaemonSet's environment is what the agent reads: run as its pod would, it serves its node in its namespace under the cache root", async () => {
    const cacheRoot = path.join(tempDir('yard-node'), 'caches')
    const checkout = makeRepo({'yard.toml': `[cluster]\nnamespace = "team"\ncache-root = "${cacheRoot}"\n`})
    expect((await yard(['cluster', 'install'], {cwd: checkout, env: env()})).exitCode).to.equal(0)
    const daemonSet = api.get('daemonsets', 'team', 'yard-cache-agent')!
    const container = daemonSet.spec.template.spec.containers[0]
    // What kubelet would give the pod on node-1: the downward API's values, the literal ones as they are.
    const downward: Record<string, string> = {'spec.nodeName': 'node-1', 'metadata.namespace': 'team'}
    const podEnv = Object.fromEntries(
      (container.env as Array<{name: string; value?: string; valueFrom?: {fieldRef: {fieldPath: string}}}>).map(
        (entry) => [entry.name, entry.value ?? downward[entry.valueFrom!.fieldRef.fieldPath]],
      ),
    )
    expect(podEnv).to.include({NODE_NAME: 'node-1', YARD_NAMESPACE: 'team', YARD_CACHE_ROOT: cacheRoot})
    expect(container.command.slice(0, 4)).to.deep.equal(['yard', 'cache', 'agent', '--kubernetes'])

    const upstream = makeRepo({}, 'lib')
    const {key} = repoIdentity(upstream)
    await api.put({
      apiVersion: 'yard.dev/v1alpha1',
      kind: 'Repo',
      metadata: {name: key, namespace: 'team'},
      spec: {url: upstream},
    })
    await api.put({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {name: 'app-feat', namespace: 'team'},
      spec: {
        nodeName: 'node-1',
        containers: [{name: 'workspace', image: 'x'}],
        volumes: [{name: 'repo', hostPath: {path: path.join(cacheRoot, key), type: 'DirectoryOrCreate'}}],
      },
    })
    // Outside any checkout, as in the pod; the pod's /tmp (HOME, state) is a scratch directory here,
    // and the kubeconfig stands in for the pod's service account.
    const scratch = tempDir('yard-pod-tmp')
    const run = await yard([...container.command.slice(1), '--once', '--json'], {
      cwd: tempDir('yard-pod-cwd'),
      env: {
        ...podEnv,
        HOME: scratch,
        YARD_STATE_DIR: path.join(scratch, 'yard'),
        KUBECONFIG: api.kubeconfigPath,
        YARD_KUBE_CONTEXT: undefined,
      },
    })
    expect(run.exitCode, run.stderr).to.equal(0)
    expect((run.json as {cloned: string[]}).cloned).to.deep.equal([key])
    expect(existsSync(path.join(cacheRoot, key, 'HEAD'))).to.equal(true)
    expect(api.get('repos', 'team', key)!.status.nodes['node-1']).to.include({present: true})
  })

  it('status before install: no agent, no repos', async () => {
    const run = await yard(['cluster', 'status', '--json'], {cwd, env: env()})
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(run.json).to.deep.equal({context: 'fake', namespace: 'yard', agent: null, agents: [], repos: []})
  })
})

function pick(object: KubeObject, keys: string[]): KubeObject {
  return Object.fromEntries(keys.filter((key) => key in object).map((key) => [key, object[key]]))
}
