import type {AddressInfo} from 'node:net'

/**
 * A FAKE Kubernetes API server, in-process (DESIGN.md §8: no API server can run on these
 * machines). It speaks enough of the REST API for client-node — create, get, list with label and
 * field selectors, replace, patch (merge, strategic as merge, JSON patch) including `/status`,
 * delete, and watch from a resourceVersion (newline-delimited ADDED/MODIFIED/DELETED events,
 * BOOKMARK events when asked, `410 Gone` as an ERROR event for a compacted resourceVersion,
 * `timeoutSeconds`) — on core and grouped, namespaced and cluster-scoped paths. It validates every
 * body with the Kubernetes schemas (kubernetes-models) and custom
 * objects with their CRD's openAPIV3Schema, answers 404/409/422 with the real server's Status
 * bodies, and records every call with its RBAC verb so a test can check it against a Role.
 *
 * ```ts
 * const api = await startFakeKubeApi({namespaces: ['yard'], crds: [repoCrd()], onCreate: ({object}, api) => …})
 * yard([...], {env: {KUBECONFIG: api.kubeconfigPath}})   // context "fake", no auth
 * api.calls; api.objects('pods', 'yard'); await api.close()
 * ```
 */
import {mkdtempSync, writeFileSync} from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import {stringify} from 'yaml'

import {apiVersionOf, type ResourceType} from './resources.js'
import {parseFieldSelector, parseLabelSelector, SelectorError} from './selectors.js'
import {type KubeObject, notFoundKind, StatusError, Store, type WatchEvent} from './store.js'

export {allowedBy, type PolicyRule} from './rbac.js'
export type {KubeObject} from './store.js'

/** RBAC verbs (Kubernetes docs, "Authorization": request verbs). */
export type KubeVerb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection'

/** One recorded request, in RBAC's words. `group` is '' for core. */
export interface FakeKubeCall {
  verb: KubeVerb
  group: string
  version: string
  resource: string
  subresource?: string
  namespace?: string
  name?: string
  /** The query string's label and field selectors and the patch Content-Type, when given. */
  labelSelector?: string
  fieldSelector?: string
  contentType?: string
  /** The parsed request body of create, update and patch. */
  body?: unknown
}

/** What a test's hook gets when an object was created through the API. */
export interface CreatedObject {
  resource: string
  group: string
  namespace?: string
  object: KubeObject
}

export interface FakeKubeOptions {
  /** Namespaces to create at start, besides `default`, `kube-system` and `kube-public`. */
  namespaces?: string[]
  /** CustomResourceDefinitions to create at start (e.g. the Repo CRD). */
  crds?: KubeObject[]
  /**
   * Runs after each create through the API, once the object is stored and the answer taken: a
   * test makes a pod scheduled and Ready here (`api.setPodReady`), or leaves it Pending and adds
   * events. It may be async; the client's answer waits for it.
   */
  onCreate?: (created: CreatedObject, api: FakeKubeApi) => void | Promise<void>
  /**
   * Runs after each patch through the API (not of a subresource), with the patched object and the
   * patch body, like onCreate.
   */
  onPatch?: (patched: CreatedObject & {patch: unknown}, api: FakeKubeApi) => void | Promise<void>
  /**
   * How much faster than the wall clock the server's own clock runs (default 1): a watch's
   * `timeoutSeconds` ends after timeoutSeconds / timeScale real seconds. Benches simulate long idle
   * periods with it; clients must scale their own timers alike.
   */
  timeScale?: number
}

export interface FakeKubeApi {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string
  /** A kubeconfig with the one context `fake` (current), no credentials. */
  readonly kubeconfigPath: string
  readonly context: 'fake'
  /** Every request so far, in order. */
  readonly calls: FakeKubeCall[]
  /** Unknown fields pruned from custom objects (the real server's warnings). */
  readonly warnings: string[]
  /** Stored objects of a resource (plural, or `plural.group`), in a namespace or all; copies. */
  objects(resource: string, namespace?: string): KubeObject[]
  /** One stored object, or undefined. */
  get(resource: string, namespace: string | undefined, name: string): KubeObject | undefined
  /**
   * Seeds an object directly (validated; created, or its spec and status replaced), as a controller
   * would. Not recorded as a call.
   */
  put(object: KubeObject): Promise<KubeObject>
  /** Merges `status` (RFC 7386) into an object's status, as a controller would. */
  patchStatus(resource: string, namespace: string | undefined, name: string, status: KubeObject): Promise<KubeObject>
  /** Schedules a pod on `node` and makes it Running and Ready (conditions, container statuses). */
  setPodReady(namespace: string, name: string, options?: {node?: string}): Promise<KubeObject>
  /** Leaves a pod Pending with PodScheduled=False (reason Unschedulable, `message`). */
  setPodUnschedulable(namespace: string, name: string, message: string): Promise<KubeObject>
  /** Records a core/v1 Event about `involved` (type Normal or Warning). */
  addEvent(
    involved: KubeObject,
    event: {reason: string; message: string; type?: 'Normal' | 'Warning'},
  ): Promise<KubeObject>
  /** Deletes an object directly, as a controller would. */
  remove(resource: string, namespace: string | undefined, name: string): void
  /**
   * Answers the next matching request(s) with a failure Status instead of serving it (e.g. a
   * 403 for one verb). `times` defaults to 1; Infinity keeps it.
   */
  inject(match: Partial<FakeKubeCall>, failure: {code: number; reason?: string; message?: string}, times?: number): void
  /** Watches open now. */
  openWatches(): number
  /**
   * Sends a BOOKMARK event (the current resourceVersion, Kubernetes docs "Watch bookmarks") on
   * every open watch that asked for them (`allowWatchBookmarks=true`).
   */
  bookmark(): void
  /**
   * Compacts the event log (as etcd does): a watch from a resourceVersion before now is answered
   * with an ERROR event, code 410 reason Expired ("410 Gone"), and ends.
   */
  compact(): void
  /**
   * Restarts the server on the same port: every connection (open watches too) is cut, nothing
   * answers for `downMs` (default 0), then it listens again with the same objects.
   */
  restart(options?: {downMs?: number}): Promise<void>
  /** Writes another kubeconfig: another current context (null: none), or more contexts pointing elsewhere. */
  writeKubeconfig(options: {currentContext?: string | null; contexts?: Record<string, string>}): string
  close(): Promise<void>
}

const DEFAULT_NAMESPACES = ['default', 'kube-system', 'kube-public']
const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z')

/** Starts the fake API server on 127.0.0.1 and a free port. */
export async function startFakeKubeApi(options: FakeKubeOptions = {}): Promise<FakeKubeApi> {
  const store = new Store()
  const calls: FakeKubeCall[] = []
  const injected: Array<{
    match: Partial<FakeKubeCall>
    failure: {code: number; reason?: string; message?: string}
    left: number
  }> = []
  const watches = new Map<
    http.ServerResponse,
    {bookmarks: boolean; write: (event: {type: string; object: KubeObject}) => void; type: ResourceType}
  >()
  const timeScale = options.timeScale ?? 1
  const dir = mkdtempSync(path.join(os.tmpdir(), 'yard-fake-kube-api-'))
  let url = ''
  let api: FakeKubeApi

  const server = http.createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      const status =
        error instanceof StatusError
          ? error
          : new StatusError(500, 'InternalError', `fake API server: ${(error as Error).stack ?? error}`)
      if (response.headersSent) {
        response.end()
      } else {
        send(response, status.code, status.body())
      }
    })
  })

  async function handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const requestUrl = new URL(request.url ?? '/', 'http://fake')
    const route = parseRoute(requestUrl.pathname)
    if (!route) {
      send(response, 404, notFoundKind().body())
      return
    }

    const query = requestUrl.searchParams
    const method = request.method ?? 'GET'
    const isWatch = method === 'GET' && (query.get('watch') === 'true' || query.get('watch') === '1')
    const verb: KubeVerb =
      method === 'GET'
        ? isWatch
          ? 'watch'
          : route.name
            ? 'get'
            : 'list'
        : method === 'POST'
          ? 'create'
          : method === 'PUT'
            ? 'update'
            : method === 'PATCH'
              ? 'patch'
              : method === 'DELETE'
                ? route.name
                  ? 'delete'
                  : 'deletecollection'
                : ('unknown' as KubeVerb)
    const call: FakeKubeCall = {verb, group: route.group, version: route.version, resource: route.plural}
    if (route.subresource) call.subresource = route.subresource
    if (route.namespace !== undefined) call.namespace = route.namespace
    if (route.name !== undefined) call.name = route.name
    if (query.get('labelSelector')) call.labelSelector = query.get('labelSelector')!
    if (query.get('fieldSelector')) call.fieldSelector = query.get('fieldSelector')!
    if (method === 'PATCH') call.contentType = request.headers['content-type']
    calls.push(call)
    const body = method === 'POST' || method === 'PUT' || method === 'PATCH' ? await readJson(request) : undefined
    if (body !== undefined) call.body = body

    const failure = injected.find(
      (entry) =>
        entry.left > 0 &&
        Object.entries(entry.match).every(([key, value]) => call[key as keyof FakeKubeCall] === value),
    )
    if (failure) {
      failure.left--
      const {code, reason = 'Forbidden', message = 'injected failure'} = failure.failure
      send(response, code, new StatusError(code, reason, message).body())
      return
    }

    const type = store.type(route.group, route.version, route.plural)
    if (!type || (!type.namespaced && route.namespace !== undefined)) throw notFoundKind()
    if (type.namespaced && route.namespace === undefined && verb !== 'list' && verb !== 'watch') throw notFoundKind()

    switch (verb) {
      case 'get': {
        send(response, 200, store.get(type, route.namespace, route.name!))
        return
      }

      case 'list': {
        const filter = selectors(type, query)
        const items = store
          .list(type, route.namespace, filter)
          .map((item) => (type.model ? withoutTypeMeta(item) : item))
        send(response, 200, {
          apiVersion: apiVersionOf(type),
          kind: `${type.kind}List`,
          metadata: {resourceVersion: String(store.resourceVersion)},
          items,
        })
        return
      }

      case 'watch': {
        watch(type, route.namespace, query, response)
        return
      }

      case 'create': {
        if (route.name !== undefined)
          throw new StatusError(
            405,
            'MethodNotAllowed',
            'the server does not allow this method on the requested resource',
          )
        const created = await store.create(type, route.namespace, body as KubeObject, query.get('dryRun') === 'All')
        if (query.get('dryRun') !== 'All' && options.onCreate)
          await options.onCreate(
            {resource: type.plural, group: type.group, namespace: created.metadata.namespace, object: created},
            api,
          )
        send(response, 201, created)
        return
      }

      case 'update': {
        send(
          response,
          200,
          await store.update(type, route.namespace, route.name!, body as KubeObject, route.subresource),
        )
        return
      }

      case 'patch': {
        const patched = await store.patch(
          type,
          route.namespace,
          route.name!,
          body,
          String(request.headers['content-type'] ?? ''),
          route.subresource,
        )
        if (!route.subresource && options.onPatch)
          await options.onPatch(
            {
              resource: type.plural,
              group: type.group,
              namespace: patched.metadata.namespace,
              object: patched,
              patch: body,
            },
            api,
          )
        send(response, 200, patched)
        return
      }

      case 'delete': {
        const deleted = store.delete(type, route.namespace, route.name!)
        send(
          response,
          200,
          type.kind === 'Pod'
            ? deleted
            : {
                kind: 'Status',
                apiVersion: 'v1',
                metadata: {},
                status: 'Success',
                details: {name: route.name, group: type.group, kind: type.plural, uid: deleted.metadata.uid},
              },
        )
        return
      }

      default: {
        throw new StatusError(
          405,
          'MethodNotAllowed',
          'the server does not allow this method on the requested resource',
        )
      }
    }
  }

  function selectors(type: ResourceType, query: URLSearchParams): (object: KubeObject) => boolean {
    try {
      const labels = parseLabelSelector(query.get('labelSelector') ?? '')
      const fields = parseFieldSelector(query.get('fieldSelector') ?? '', type.kind)
      return (object) => labels(object.metadata?.labels ?? {}) && fields(object)
    } catch (error) {
      if (error instanceof SelectorError) throw new StatusError(400, 'BadRequest', error.message)
      throw error
    }
  }

  function watch(
    type: ResourceType,
    namespace: string | undefined,
    query: URLSearchParams,
    response: http.ServerResponse,
  ): void {
    const filter = selectors(type, query)
    const matches = (event: WatchEvent) =>
      event.resource.group === type.group &&
      event.resource.plural === type.plural &&
      (namespace === undefined || event.object.metadata.namespace === namespace) &&
      filter(event.object)
    const write = (event: {type: string; object: KubeObject}) =>
      response.write(JSON.stringify({type: event.type, object: event.object}) + '\n')
    response.writeHead(200, {'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked'})
    // Headers go out now: client-node's watch awaits them before it reads any event.
    response.flushHeaders()
    const since = query.get('resourceVersion')
    if (since !== null && since !== '' && since !== '0' && Number(since) < store.compactedRevision) {
      // The real server answers 200 and then one ERROR event (Kubernetes docs, "410 Gone responses").
      const gone = new StatusError(
        410,
        'Expired',
        `too old resource version: ${since} (${store.compactedRevision})`,
      ).body()
      write({type: 'ERROR', object: gone})
      response.end()
      return
    }

    const bookmarks = query.get('allowWatchBookmarks') === 'true'
    watches.set(response, {bookmarks, write, type})
    // No resourceVersion, or "0": the current state as ADDED events, then changes (Kubernetes
    // docs, "Efficient detection of changes": "Get State and Start at Most Recent").
    if (since === null || since === '' || since === '0')
      for (const object of store.list(type, namespace, filter)) write({type: 'ADDED', object})
    else for (const event of store.events) if (event.resourceVersion > Number(since) && matches(event)) write(event)
    const listener = (event: WatchEvent) => {
      if (matches(event)) write(event)
    }

    store.listeners.add(listener)
    const finish = () => {
      store.listeners.delete(listener)
      watches.delete(response)
      clearTimeout(timer)
      if (!response.writableEnded) response.end()
    }

    const seconds = Number(query.get('timeoutSeconds') ?? 0)
    // At the timeout the real server ends the watch, with a last bookmark when they were asked for.
    const timer =
      seconds > 0
        ? setTimeout(
            () => {
              if (bookmarks) write(bookmarkOf(type))
              finish()
            },
            (seconds * 1000) / timeScale,
          )
        : undefined
    response.on('close', finish)
  }

  function bookmarkOf(type: ResourceType): {type: string; object: KubeObject} {
    return {
      type: 'BOOKMARK',
      object: {
        apiVersion: apiVersionOf(type),
        kind: type.kind,
        metadata: {resourceVersion: String(store.resourceVersion)},
      },
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const {port} = server.address() as AddressInfo
  url = `http://127.0.0.1:${port}`

  const writeKubeconfig = (file: string, current: string | null, contexts: Record<string, string>) => {
    const names = Object.keys(contexts)
    writeFileSync(
      file,
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        // client-node refuses plain http unless TLS verification is off (there is no TLS to verify).
        clusters: names.map((name) => ({name, cluster: {server: contexts[name], 'insecure-skip-tls-verify': true}})),
        users: names.map((name) => ({name, user: {}})),
        contexts: names.map((name) => ({name, context: {cluster: name, user: name}})),
        ...(!(current === null) && {'current-context': current}),
      }),
    )
    return file
  }

  const kubeconfigPath = writeKubeconfig(path.join(dir, 'kubeconfig'), 'fake', {fake: url})
  let extraConfigs = 0

  api = {
    url,
    kubeconfigPath,
    context: 'fake',
    calls,
    warnings: store.warnings,
    objects: (resource, namespace) => store.list(store.typeOf(resource), namespace),
    get: (resource, namespace, name) => store.find(store.typeOf(resource), namespace, name),
    async put(object) {
      const type = store.typeOfObject(object)
      const namespace = type.namespaced ? (object.metadata?.namespace ?? 'default') : undefined
      const existing = store.find(type, namespace, object.metadata?.name)
      if (!existing) {
        const created = await store.create(type, namespace, object)
        return object.status === undefined
          ? created
          : store.update(type, namespace, created.metadata.name, {...created, status: object.status}, 'status')
      }

      const {resourceVersion: _, ...metadata} = object.metadata ?? {}
      const replaced = await store.update(type, namespace, existing.metadata.name, {...object, metadata})
      return object.status === undefined
        ? replaced
        : store.update(type, namespace, existing.metadata.name, {...replaced, status: object.status}, 'status')
    },
    patchStatus: async (resource, namespace, name, status) =>
      store.patch(store.typeOf(resource), namespace, name, {status}, 'application/merge-patch+json', 'status'),
    async setPodReady(namespace, name, {node = 'node-1'} = {}) {
      const type = store.typeOf('pods')
      const pod = store.get(type, namespace, name)
      const time = now()
      // The scheduler's binding sets spec.nodeName; the kubelet reports status.
      await store.update(type, namespace, name, {...pod, spec: {...pod.spec, nodeName: node}})
      const containers = (pod.spec.containers as KubeObject[]).map((container) => ({
        name: container.name,
        image: container.image,
        imageID: '',
        ready: true,
        started: true,
        restartCount: 0,
        state: {running: {startedAt: time}},
      }))
      return store.patch(
        type,
        namespace,
        name,
        {
          status: {
            phase: 'Running',
            hostIP: '10.0.0.1',
            podIP: '10.244.0.10',
            startTime: time,
            conditions: ['PodScheduled', 'Initialized', 'ContainersReady', 'Ready'].map((condition) => ({
              type: condition,
              status: 'True',
              lastTransitionTime: time,
            })),
            containerStatuses: containers,
          },
        },
        'application/merge-patch+json',
        'status',
      )
    },
    setPodUnschedulable: async (namespace, name, message) =>
      store.patch(
        store.typeOf('pods'),
        namespace,
        name,
        {
          status: {
            phase: 'Pending',
            conditions: [
              {type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message, lastTransitionTime: now()},
            ],
          },
        },
        'application/merge-patch+json',
        'status',
      ),
    async addEvent(involved, {reason, message, type = 'Warning'}) {
      const namespace = involved.metadata.namespace ?? 'default'
      const time = now()
      return store.create(store.typeOf('events'), namespace, {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: {
          name: `${involved.metadata.name}.${Date.now().toString(16)}${Math.floor(Math.random() * 1e6).toString(16)}`,
          namespace,
        },
        involvedObject: {
          apiVersion: involved.apiVersion ?? 'v1',
          kind: involved.kind ?? 'Pod',
          name: involved.metadata.name,
          namespace,
          uid: involved.metadata.uid,
        },
        reason,
        message,
        type,
        count: 1,
        firstTimestamp: time,
        lastTimestamp: time,
        source: {component: reason === 'FailedScheduling' ? 'default-scheduler' : 'kubelet'},
      })
    },
    remove: (resource, namespace, name) => void store.delete(store.typeOf(resource), namespace, name),
    inject(match, failure, times = 1) {
      injected.push({match, failure, left: times})
    },
    writeKubeconfig({currentContext = 'fake', contexts = {}}) {
      return writeKubeconfig(path.join(dir, `kubeconfig-${++extraConfigs}`), currentContext, {fake: url, ...contexts})
    },
    openWatches: () => watches.size,
    bookmark() {
      for (const watch of watches.values()) if (watch.bookmarks) watch.write(bookmarkOf(watch.type))
    },
    compact: () => store.compact(),
    async restart({downMs = 0} = {}) {
      // A crash, not a graceful stop: watches are cut without a last event.
      for (const response of watches.keys()) response.destroy()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await new Promise((resolve) => setTimeout(resolve, downMs))
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
    },
    async close() {
      for (const response of watches.keys()) response.end()
      server.closeAllConnections()
      return new Promise((resolve) => server.close(() => resolve()))
    },
  }

  for (const name of [...DEFAULT_NAMESPACES, ...(options.namespaces ?? [])]) {
    if (!store.find(store.typeOf('namespaces'), undefined, name))
      await store.create(store.typeOf('namespaces'), undefined, {apiVersion: 'v1', kind: 'Namespace', metadata: {name}})
  }

  for (const crd of options.crds ?? []) await store.create(store.typeOf('customresourcedefinitions'), undefined, crd)
  return api
}

interface Route {
  group: string
  version: string
  plural: string
  namespace?: string
  name?: string
  subresource?: string
}

/** `/api/v1/…` or `/apis/GROUP/VERSION/…`, then `namespaces/NS/PLURAL[/NAME[/SUB]]` or `PLURAL[/NAME[/SUB]]`. */
function parseRoute(pathname: string): Route | undefined {
  const parts = pathname.split('/').filter(Boolean).map(decodeURIComponent)
  let group: string
  let version: string
  let rest: string[]
  if (parts[0] === 'api' && parts.length >= 3) [group, version, rest] = ['', parts[1], parts.slice(2)]
  else if (parts[0] === 'apis' && parts.length >= 4) [group, version, rest] = [parts[1], parts[2], parts.slice(3)]
  else return undefined
  if (rest[0] === 'namespaces' && rest.length >= 3 && rest[2] !== 'status' && rest[2] !== 'finalize') {
    return {group, version, namespace: rest[1], plural: rest[2], name: rest[3], subresource: rest[4]}
  }

  if (rest.length > 3) return undefined
  return {group, version, plural: rest[0], name: rest[1], subresource: rest[2]}
}

function withoutTypeMeta(object: KubeObject): KubeObject {
  const {apiVersion: _, kind: __, ...rest} = object
  return rest
}

function send(response: http.ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body)
  response.writeHead(code, {'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text)})
  response.end(text)
}

async function readJson(request: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  const text = Buffer.concat(chunks).toString('utf8')
  try {
    return JSON.parse(text)
  } catch {
    throw new StatusError(400, 'BadRequest', `the body of the request is not JSON: ${text.slice(0, 80)}`)
  }
}
