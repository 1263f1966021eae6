import {expect} from 'chai'
/**
 * kube.ts: which kubeconfig and context yard uses, and how client-node's failures read as yard
 * errors — against the fake API server and a closed port.
 */
import {mkdtempSync} from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'

import {kubeCall, kubeGet, openKube} from '../../../src/plugins/k8s-sandbox/kube.js'
import {REPO_GROUP, REPO_PLURAL, REPO_VERSION} from '../../../src/plugins/k8s-sandbox/repo-resource.js'
import {InputError, OperationError} from '../../../src/sdk/errors.js'
import {type FakeKubeApi, startFakeKubeApi} from '../../support/fake-kube-api/index.js'

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise
  } catch (error) {
    return error as Error
  }

  throw new Error('expected a rejection')
}

/** A port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const {port} = server.address() as net.AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

describe('kube client (kube.ts)', () => {
  let api: FakeKubeApi

  before(async () => {
    api = await startFakeKubeApi({namespaces: ['yard']})
  })

  after(async () => api.close())

  it("uses the kubeconfig's current context by default and [cluster] context when given", async () => {
    const other = api.writeKubeconfig({currentContext: 'other', contexts: {other: 'http://127.0.0.1:9'}})
    expect((await openKube({namespace: 'yard'}, {KUBECONFIG: other})).context).to.equal('other')
    const chosen = await openKube({context: 'fake', namespace: 'yard'}, {KUBECONFIG: other})
    expect(chosen).to.include({context: 'fake', server: api.url, namespace: 'yard'})
    expect((await chosen.core.readNamespace({name: 'yard'})).metadata?.name).to.equal('yard')
  })

  it('refuses a missing kubeconfig, an unknown context and a kubeconfig without a current context (exit 2, naming the context and the fix)', async () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'yard-kube-home-'))
    const none = await rejection(openKube({namespace: 'yard'}, {HOME: home}))
    expect(none).to.be.instanceOf(InputError)
    expect((none as InputError).render())
      .to.contain('no kubeconfig found')
      .and.to.contain('KUBECONFIG')
    // The way out depends on who asks: only the sandbox commands have a --runtime flag.
    expect((none as InputError).fix).to.not.contain('--runtime')
    const sandboxes = await rejection(openKube({namespace: 'yard', otherwise: 'use --runtime podman'}, {HOME: home}))
    expect((sandboxes as InputError).fix)
      .to.contain('KUBECONFIG')
      .and.to.match(/, or use --runtime podman$/)

    const unknown = await rejection(openKube({context: 'prod', namespace: 'yard'}, {KUBECONFIG: api.kubeconfigPath}))
    expect(unknown).to.be.instanceOf(InputError)
    expect((unknown as InputError).render())
      .to.contain('kube context "prod" not found')
      .and.to.contain('known contexts: fake')
      .and.to.contain('[cluster] context')

    const noCurrent = await rejection(
      openKube({namespace: 'yard'}, {KUBECONFIG: api.writeKubeconfig({currentContext: null})}),
    )
    expect(noCurrent).to.be.instanceOf(InputError)
    expect((noCurrent as InputError).render())
      .to.contain('no current context')
      .and.to.contain('kubectl config use-context')
  })

  it('maps an unreachable server, a 403, a missing kind and a missing object to yard errors', async () => {
    const port = await closedPort()
    const down = await openKube(
      {context: 'down', namespace: 'yard'},
      {KUBECONFIG: api.writeKubeconfig({contexts: {down: `http://127.0.0.1:${port}`}})},
    )
    const refused = await rejection(
      kubeCall(down, 'list pods', async () => down.core.listNamespacedPod({namespace: 'yard'})),
    )
    expect(refused).to.be.instanceOf(OperationError)
    expect((refused as OperationError).render())
      .to.contain(`cannot reach the Kubernetes API server http://127.0.0.1:${port} (kube context "down")`)
      .and.to.contain('cluster-info')

    const kube = await openKube({namespace: 'yard'}, {KUBECONFIG: api.kubeconfigPath})
    api.inject(
      {verb: 'list', resource: 'pods'},
      {code: 403, reason: 'Forbidden', message: 'pods is forbidden: User "dev" cannot list resource "pods"'},
    )
    const forbidden = await rejection(
      kubeCall(kube, 'list pods', async () => kube.core.listNamespacedPod({namespace: 'yard'})),
    )
    expect((forbidden as OperationError).render())
      .to.contain('list pods: forbidden: pods is forbidden')
      .and.to.contain('auth can-i')

    const noKind = await rejection(
      kubeGet(kube, 'read Repo app-0123abcd', async () =>
        kube.custom.getNamespacedCustomObject({
          group: REPO_GROUP,
          version: REPO_VERSION,
          namespace: 'yard',
          plural: REPO_PLURAL,
          name: 'app-0123abcd',
        }),
      ),
    )
    expect((noKind as OperationError).render())
      .to.contain('not found')
      .and.to.contain('yard cluster install')

    expect(
      await kubeGet(kube, 'read pod', async () => kube.core.readNamespacedPod({name: 'absent', namespace: 'yard'})),
    ).to.equal(undefined)
  })
})
