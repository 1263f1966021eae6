/**
 * The FAKE API server's watches, read as raw HTTP (newline-delimited JSON, Kubernetes docs
 * "Efficient detection of changes"): events with resourceVersions, `watch=1`, bookmarks,
 * `timeoutSeconds`, `410 Gone` for a compacted resourceVersion, a restart that cuts watches and
 * keeps objects, and the call record that counts requests.
 */
import {expect} from 'chai'
import http from 'node:http'

import {type FakeKubeApi, type KubeObject, startFakeKubeApi} from '../../support/fake-kube-api/index.js'

const pod = (name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {name, namespace: 'yard'},
  spec: {containers: [{name: 'workspace', image: 'localhost/yard:test'}]},
})

interface Streamed {
  events: Array<{type: string; object: KubeObject}>
  /** Resolves with every event once the server ends the stream. */
  ended: Promise<Array<{type: string; object: KubeObject}>>
  close(): void
}

/** Opens `GET path?query` and collects the events it streams. */
async function stream(api: FakeKubeApi, query: string): Promise<Streamed> {
  return new Promise((resolve, reject) => {
    const events: Streamed['events'] = []
    const request = http.get(`${api.url}/api/v1/namespaces/yard/pods?${query}`, (response) => {
      let buffer = ''
      const ended = new Promise<Streamed['events']>((done) => {
        response.on('data', (chunk: Buffer) => {
          buffer += chunk.toString('utf8')
          const lines = buffer.split('\n')
          buffer = lines.pop()!
          for (const line of lines) if (line) events.push(JSON.parse(line))
        })
        response.on('end', () => done(events))
        response.on('close', () => done(events))
      })
      resolve({events, ended, close: () => request.destroy()})
    })
    request.on('error', reject)
  })
}

async function until(condition: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`still waiting after ${ms} ms`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe('fake Kubernetes API server: watches', function () {
  this.timeout(20_000)
  let api: FakeKubeApi

  beforeEach(async () => {
    api = await startFakeKubeApi({namespaces: ['yard']})
  })

  afterEach(async () => api.close())

  it('streams ADDED, MODIFIED, DELETED after the resourceVersion asked, each with its own, for watch=1 and watch=true', async () => {
    const first = await api.put(pod('a'))
    const since = first.metadata.resourceVersion
    for (const flag of ['1', 'true']) {
      const watch = await stream(api, `watch=${flag}&resourceVersion=${since}`)
      await api.put(pod(`b-${flag}`))
      await api.patchStatus('pods', 'yard', `b-${flag}`, {phase: 'Running'})
      api.remove('pods', 'yard', `b-${flag}`)
      await until(() => watch.events.filter((event) => event.object.metadata.name === `b-${flag}`).length === 3)
      const mine = watch.events.filter((event) => event.object.metadata.name === `b-${flag}`)
      expect(mine.map((event) => event.type)).to.deep.equal(['ADDED', 'MODIFIED', 'DELETED'])
      const versions = mine.map((event) => Number(event.object.metadata.resourceVersion))
      expect(versions).to.deep.equal([...versions].sort((x, y) => x - y))
      expect(versions[0]).to.be.greaterThan(Number(since))
      // Nothing from before the resourceVersion asked for.
      expect(watch.events.some((event) => event.object.metadata.name === 'a')).to.equal(false)
      watch.close()
    }

    expect(api.calls.filter((call) => call.verb === 'watch')).to.have.length(2)
  })

  it('ends a watch at timeoutSeconds (scaled by timeScale) with a last BOOKMARK when bookmarks were asked, and sends one on demand', async () => {
    await api.close()
    api = await startFakeKubeApi({namespaces: ['yard'], timeScale: 100})
    const start = Date.now()
    const plain = await stream(api, 'watch=true&resourceVersion=1&timeoutSeconds=50')
    const marked = await stream(api, 'watch=true&resourceVersion=1&timeoutSeconds=50&allowWatchBookmarks=true')
    await until(() => api.openWatches() === 2)
    await api.addEvent({metadata: {name: 'elsewhere', namespace: 'yard'}}, {reason: 'Other', message: 'not a pod'})
    api.bookmark()
    const [plainEvents, markedEvents] = await Promise.all([plain.ended, marked.ended])
    expect(Date.now() - start).to.be.within(300, 5000)
    expect(plainEvents).to.deep.equal([])
    expect(markedEvents.map((event) => event.type)).to.deep.equal(['BOOKMARK', 'BOOKMARK'])
    // A bookmark carries the server's current resourceVersion, and only that.
    const last = markedEvents[1].object
    expect(last).to.deep.equal({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {resourceVersion: last.metadata.resourceVersion},
    })
    expect(Number(last.metadata.resourceVersion)).to.be.greaterThan(1)
    expect(api.openWatches()).to.equal(0)
  })

  it('answers a watch from a compacted resourceVersion with one ERROR event, 410 Expired, and ends it', async () => {
    const first = await api.put(pod('a'))
    await api.put(pod('b'))
    api.compact()
    const gone = await stream(api, `watch=true&resourceVersion=${first.metadata.resourceVersion}`)
    const events = await gone.ended
    expect(events).to.have.length(1)
    expect(events[0].type).to.equal('ERROR')
    expect(events[0].object).to.deep.include({kind: 'Status', status: 'Failure', code: 410, reason: 'Expired'})
    // From the current resourceVersion (a fresh list's), the watch is served.
    const list = await (await fetch(`${api.url}/api/v1/namespaces/yard/pods`)).json()
    const fresh = await stream(api, `watch=true&resourceVersion=${list.metadata.resourceVersion}`)
    await api.put(pod('c'))
    await until(() => fresh.events.length === 1)
    expect(fresh.events[0]).to.deep.include({type: 'ADDED'})
    fresh.close()
  })

  it('restarts on the same port: open watches are cut, nothing answers while down, objects stay', async () => {
    await api.put(pod('a'))
    const watch = await stream(api, 'watch=true&resourceVersion=1')
    await until(() => api.openWatches() === 1)
    const restarting = api.restart({downMs: 300})
    await watch.ended
    await new Promise((resolve) => setTimeout(resolve, 100))
    const refused = await fetch(`${api.url}/api/v1/namespaces/yard/pods`).then(
      () => 'answered',
      (error: Error & {cause?: {code?: string}}) => error.cause?.code ?? error.message,
    )
    expect(refused).to.equal('ECONNREFUSED')
    await restarting
    const list = await (await fetch(`${api.url}/api/v1/namespaces/yard/pods`)).json()
    expect(list.items.map((item: KubeObject) => item.metadata.name)).to.deep.equal(['a'])
    expect(api.calls.map((call) => call.verb)).to.deep.equal(['watch', 'list'])
  })
})
