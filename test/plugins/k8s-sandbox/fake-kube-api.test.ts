/**
 * The FAKE API server of test/support/fake-kube-api/ answers client-node the way a real API
 * server does: the verbs, their failures, selectors, status subresources, watches, schema
 * validation and the call record the RBAC checks rely on.
 */
import {expect} from 'chai'

import {type Kube, openKube} from '../../../src/plugins/k8s-sandbox/kube.js'
import {
  nodeStatusPatch,
  REPO_GROUP,
  REPO_PLURAL,
  REPO_VERSION,
  repoCrd,
  repoObject,
} from '../../../src/plugins/k8s-sandbox/repo-resource.js'
import {allowedBy, type FakeKubeApi, startFakeKubeApi} from '../../support/fake-kube-api/index.js'

const pod = (name: string, labels: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {name, labels},
  spec: {containers: [{name: 'workspace', image: 'localhost/yard:test', command: ['sleep', 'infinity']}]},
})

async function failure(promise: Promise<unknown>): Promise<{code: number; body: any}> {
  try {
    await promise
  } catch (error) {
    const {code, body} = error as {code: number; body: string}
    return {code, body: JSON.parse(body)}
  }

  throw new Error('expected the call to fail')
}

describe('fake Kubernetes API server (client-node against it)', () => {
  let api: FakeKubeApi
  let kube: Kube

  beforeEach(async () => {
    api = await startFakeKubeApi({namespaces: ['yard'], crds: [repoCrd()]})
    kube = await openKube({namespace: 'yard'}, {KUBECONFIG: api.kubeconfigPath})
  })

  afterEach(async () => api.close())

  it('creates and reads a pod with server fields, 409 AlreadyExists on a second create, 404 NotFound for a missing one', async () => {
    const created = await kube.core.createNamespacedPod({
      namespace: 'yard',
      body: pod('app-feat', {'yard.dev/name': 'feat'}),
    })
    expect(created.metadata?.uid).to.match(/^[0-9a-f-]{36}$/)
    expect(created.metadata?.namespace).to.equal('yard')
    expect(Number(created.metadata?.resourceVersion)).to.be.greaterThan(0)
    expect(created.status?.phase).to.equal('Pending')
    const read = await kube.core.readNamespacedPod({name: 'app-feat', namespace: 'yard'})
    expect(read.spec?.containers[0].image).to.equal('localhost/yard:test')

    const again = await failure(kube.core.createNamespacedPod({namespace: 'yard', body: pod('app-feat')}))
    expect(again.code).to.equal(409)
    expect(again.body).to.include({kind: 'Status', reason: 'AlreadyExists', message: 'pods "app-feat" already exists'})
    const missing = await failure(kube.core.readNamespacedPod({name: 'nope', namespace: 'yard'}))
    expect(missing.code).to.equal(404)
    expect(missing.body).to.include({reason: 'NotFound', message: 'pods "nope" not found'})
    const noNamespace = await failure(kube.core.createNamespacedPod({namespace: 'elsewhere', body: pod('x')}))
    expect(noNamespace.body.message).to.equal('namespaces "elsewhere" not found')
  })

  it('rejects an invalid body with 422 Invalid naming the field, and stores nothing', async () => {
    const bad = pod('bad') as any
    bad.spec.containers[0].ports = [{containerPort: 'eighty'}]
    // client-node's serializer passes the string through; the schema refuses it.
    const answer = await failure(kube.core.createNamespacedPod({namespace: 'yard', body: bad}))
    expect(answer.code).to.equal(422)
    expect(answer.body.reason).to.equal('Invalid')
    expect(answer.body.message).to.contain('spec.containers[0].ports[0].containerPort')
    const badLabel = await failure(
      kube.core.createNamespacedPod({namespace: 'yard', body: pod('bad', {'yard.dev/name': 'x'.repeat(64)})}),
    )
    expect(badLabel.code).to.equal(422)
    expect(badLabel.body.message).to.contain('metadata.labels.yard.dev/name')
    expect(api.objects('pods', 'yard')).to.deep.equal([])
  })

  it('lists with label selectors (=, !=, in, notin, existence) and field selectors (spec.nodeName, metadata.name)', async () => {
    await kube.core.createNamespacedPod({namespace: 'yard', body: pod('a', {app: 'x', tier: 'web'})})
    await kube.core.createNamespacedPod({namespace: 'yard', body: pod('b', {app: 'y'})})
    await kube.core.createNamespacedPod({namespace: 'yard', body: pod('c', {})})
    await api.setPodReady('yard', 'a', {node: 'node-1'})
    const names = async (labelSelector?: string, fieldSelector?: string) =>
      (await kube.core.listNamespacedPod({namespace: 'yard', labelSelector, fieldSelector})).items.map(
        (item) => item.metadata?.name,
      )
    expect(await names('app=x')).to.deep.equal(['a'])
    expect(await names('app!=x')).to.deep.equal(['b', 'c'])
    expect(await names('app in (x, y)')).to.deep.equal(['a', 'b'])
    expect(await names('app notin (x)')).to.deep.equal(['b', 'c'])
    expect(await names('tier')).to.deep.equal(['a'])
    expect(await names('!app')).to.deep.equal(['c'])
    expect(await names(undefined, 'spec.nodeName=node-1')).to.deep.equal(['a'])
    expect(await names(undefined, 'metadata.name=b')).to.deep.equal(['b'])
    const bad = await failure(kube.core.listNamespacedPod({namespace: 'yard', fieldSelector: 'spec.image=x'}))
    expect(bad.code).to.equal(400)
  })

  it('upserts a Repo, patches only its own node status entry through /status, and validates it against the CRD schema', async () => {
    await kube.custom.createNamespacedCustomObject({
      group: REPO_GROUP,
      version: REPO_VERSION,
      namespace: 'yard',
      plural: REPO_PLURAL,
      body: repoObject('app-0123abcd', 'yard', {url: 'https://example.com/app.git'}),
    })
    const patch = async (node: string, present: boolean) =>
      kube.custom.patchNamespacedCustomObjectStatus(
        {
          group: REPO_GROUP,
          version: REPO_VERSION,
          namespace: 'yard',
          plural: REPO_PLURAL,
          name: 'app-0123abcd',
          body: nodeStatusPatch(node, {present, lastFetched: '2026-11-29T10:00:00Z', lastError: null}),
        },
        kube.mergePatch,
      )
    await patch('node-1', true)
    await patch('node-2', false)
    const repo = api.get('repos', 'yard', 'app-0123abcd')!
    // In a merge patch null removes the key (RFC 7386): a cleared lastError is absent.
    expect(repo.status.nodes).to.deep.equal({
      'node-1': {present: true, lastFetched: '2026-11-29T10:00:00Z'},
      'node-2': {present: false, lastFetched: '2026-11-29T10:00:00Z'},
    })
    // A write of the object itself leaves the status alone (status is a subresource).
    await kube.custom.patchNamespacedCustomObject(
      {
        group: REPO_GROUP,
        version: REPO_VERSION,
        namespace: 'yard',
        plural: REPO_PLURAL,
        name: 'app-0123abcd',
        body: {spec: {askedAt: '2026-11-29T11:00:00Z'}, status: {nodes: {}}},
      },
      kube.mergePatch,
    )
    expect(api.get('repos', 'yard', 'app-0123abcd')!.status.nodes).to.have.keys('node-1', 'node-2')

    const invalid = await failure(
      kube.custom.createNamespacedCustomObject({
        group: REPO_GROUP,
        version: REPO_VERSION,
        namespace: 'yard',
        plural: REPO_PLURAL,
        body: repoObject('other-0123abcd', 'yard', {url: 'x', refreshInterval: 'often'}),
      }),
    )
    expect(invalid.code).to.equal(422)
    expect(invalid.body.message).to.contain('spec.refreshInterval')
    const noStatusType = await failure(patch('node-3', 'yes' as unknown as boolean))
    expect(noStatusType.body.message).to.contain('status.nodes.node-3.present')
  })

  it('answers 404 for a kind whose CRD is not installed, and serves it once the CRD is created', async () => {
    const bare = await startFakeKubeApi({namespaces: ['yard']})
    try {
      const client = await openKube({namespace: 'yard'}, {KUBECONFIG: bare.kubeconfigPath})
      const list = async () =>
        client.custom.listNamespacedCustomObject({
          group: REPO_GROUP,
          version: REPO_VERSION,
          namespace: 'yard',
          plural: REPO_PLURAL,
        })
      const missing = await failure(list())
      expect(missing.code).to.equal(404)
      expect(missing.body.message).to.equal('the server could not find the requested resource')
      await client.apiextensions.createCustomResourceDefinition({body: repoCrd() as any})
      expect(((await list()) as {items: unknown[]}).items).to.deep.equal([])
      const nonStructural = repoCrd() as any
      nonStructural.metadata.name = 'things.yard.dev'
      nonStructural.spec.names = {plural: 'things', kind: 'Thing'}
      delete nonStructural.spec.versions[0].schema.openAPIV3Schema.properties.spec.type
      const refused = await failure(client.apiextensions.createCustomResourceDefinition({body: nonStructural}))
      expect(refused.code).to.equal(422)
      expect(refused.body.message).to.contain('properties[spec].type: Required value')
    } finally {
      await bare.close()
    }
  })

  it('watches from a resourceVersion: ADDED, MODIFIED, DELETED after it, in order', async () => {
    const first = await kube.core.createNamespacedPod({namespace: 'yard', body: pod('before')})
    const events: string[] = []
    const watch = new kube.lib.Watch(kube.config)
    let done!: () => void
    const finished = new Promise<void>((resolve) => (done = resolve))
    const controller = await watch.watch(
      '/api/v1/namespaces/yard/pods',
      {resourceVersion: first.metadata!.resourceVersion},
      (type, object) => {
        events.push(`${type} ${object.metadata.name} ${object.status?.phase ?? ''}`.trim())
        if (type === 'DELETED') done()
      },
      () => undefined,
    )
    await kube.core.createNamespacedPod({namespace: 'yard', body: pod('after')})
    await api.setPodReady('yard', 'after')
    await kube.core.deleteNamespacedPod({name: 'after', namespace: 'yard'})
    await finished
    controller.abort()
    expect(events).to.deep.equal([
      'ADDED after Pending',
      'MODIFIED after Pending',
      'MODIFIED after Running',
      'DELETED after Running',
    ])
  })

  it('a patch carrying metadata.resourceVersion applies only to that version: a stale one is 409 Conflict and changes nothing', async () => {
    const created = await kube.core.createNamespacedPod({namespace: 'yard', body: pod('x')})
    const version = created.metadata!.resourceVersion!
    const patched = await kube.core.patchNamespacedPod(
      {name: 'x', namespace: 'yard', body: {metadata: {resourceVersion: version, labels: {first: 'yes'}}}},
      kube.mergePatch,
    )
    expect(patched.metadata?.labels).to.deep.equal({first: 'yes'})
    expect(patched.metadata?.resourceVersion).not.to.equal(version)
    const stale = await failure(
      kube.core.patchNamespacedPod(
        {name: 'x', namespace: 'yard', body: {metadata: {resourceVersion: version, labels: {second: 'yes'}}}},
        kube.mergePatch,
      ),
    )
    expect(stale.code).to.equal(409)
    expect(stale.body).to.include({reason: 'Conflict'})
    expect(stale.body.message).to.include('the object has been modified')
    const read = await kube.core.readNamespacedPod({name: 'x', namespace: 'yard'})
    expect(read.metadata?.labels).to.deep.equal({first: 'yes'})
    // Without a resourceVersion a patch is unconditional.
    await kube.core.patchNamespacedPod(
      {name: 'x', namespace: 'yard', body: {metadata: {labels: {second: 'yes'}}}},
      kube.mergePatch,
    )
    expect((await kube.core.readNamespacedPod({name: 'x', namespace: 'yard'})).metadata?.labels).to.deep.equal({
      first: 'yes',
      second: 'yes',
    })
  })

  it('records each call with its RBAC verb, and injected failures answer in its place', async () => {
    api.calls.length = 0
    await kube.core.createNamespacedPod({namespace: 'yard', body: pod('x')})
    await kube.core.listNamespacedPod({namespace: 'yard', labelSelector: 'a=b'})
    await kube.core.patchNamespacedPod(
      {name: 'x', namespace: 'yard', body: {metadata: {labels: {a: 'b'}}}},
      kube.mergePatch,
    )
    await kube.core.replaceNamespacedPodStatus({
      name: 'x',
      namespace: 'yard',
      body: {...(await kube.core.readNamespacedPod({name: 'x', namespace: 'yard'})), status: {phase: 'Running'}},
    })
    await kube.core.deleteNamespacedPod({name: 'x', namespace: 'yard'})
    expect(
      api.calls.map((call) =>
        `${call.verb} ${call.resource}${call.subresource ? `/${call.subresource}` : ''} ${call.name ?? ''}`.trim(),
      ),
    ).to.deep.equal(['create pods', 'list pods', 'patch pods x', 'get pods x', 'update pods/status x', 'delete pods x'])
    expect(api.calls[1].labelSelector).to.equal('a=b')
    expect(api.calls[2].contentType).to.equal('application/merge-patch+json')
    const rules = [{apiGroups: [''], resources: ['pods'], verbs: ['create', 'list', 'get', 'patch', 'delete']}]
    expect(api.calls.filter((call) => !allowedBy(rules, call)).map((call) => call.verb)).to.deep.equal(['update'])

    api.inject(
      {verb: 'list', resource: 'pods'},
      {code: 403, reason: 'Forbidden', message: 'pods is forbidden: User "x" cannot list resource "pods"'},
    )
    expect((await failure(kube.core.listNamespacedPod({namespace: 'yard'}))).code).to.equal(403)
    expect((await kube.core.listNamespacedPod({namespace: 'yard'})).items).to.deep.equal([])
  })

  it('runs onCreate after a create, so a test scripts the pod (scheduled, Ready) and its events', async () => {
    const scripted = await startFakeKubeApi({
      namespaces: ['yard'],
      async onCreate({resource, namespace, object}, fake) {
        if (resource !== 'pods') return
        if (object.metadata.labels?.stuck) {
          await fake.setPodUnschedulable(
            namespace!,
            object.metadata.name,
            '0/1 nodes are available: 1 Insufficient cpu.',
          )
          await fake.addEvent(object, {
            reason: 'FailedScheduling',
            message: '0/1 nodes are available: 1 Insufficient cpu.',
          })
        } else await fake.setPodReady(namespace!, object.metadata.name, {node: 'node-7'})
      },
    })
    try {
      const client = await openKube({namespace: 'yard'}, {KUBECONFIG: scripted.kubeconfigPath})
      await client.core.createNamespacedPod({namespace: 'yard', body: pod('ready')})
      await client.core.createNamespacedPod({namespace: 'yard', body: pod('stuck', {stuck: 'yes'})})
      const ready = await client.core.readNamespacedPod({name: 'ready', namespace: 'yard'})
      expect(ready.spec?.nodeName).to.equal('node-7')
      expect(ready.status?.conditions?.find((condition) => condition.type === 'Ready')?.status).to.equal('True')
      const stuck = await client.core.readNamespacedPod({name: 'stuck', namespace: 'yard'})
      expect(stuck.status?.conditions?.[0]).to.include({type: 'PodScheduled', status: 'False', reason: 'Unschedulable'})
      const events = await client.core.listNamespacedEvent({
        namespace: 'yard',
        fieldSelector: 'involvedObject.name=stuck',
      })
      expect(events.items.map((event) => `${event.reason}: ${event.message}`)).to.deep.equal([
        'FailedScheduling: 0/1 nodes are available: 1 Insufficient cpu.',
      ])
    } finally {
      await scripted.close()
    }
  })
})
