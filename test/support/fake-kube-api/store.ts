/**
 * The FAKE API server's objects and verbs, apart from HTTP: create, get, list, update, patch and
 * delete with the real server's answers (404 NotFound, 409 AlreadyExists / Conflict, 422 Invalid
 * naming the field), resourceVersions from one counter, a status subresource that separates
 * status writes from spec writes, and the event log that watches replay.
 */
import {randomUUID} from 'node:crypto'

import {type OpenApiSchema, structuralViolations, validateAndPrune} from './openapi.js'
import {applyPatch} from './patch.js'
import {apiVersionOf, builtinResources, type ResourceType, validateBuiltin, validateMeta} from './resources.js'

export type KubeObject = Record<string, any>

/** A Kubernetes `Status` failure; the HTTP layer sends it as the body with `code`. */
export class StatusError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message)
  }

  body(): KubeObject {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      details: this.details,
      code: this.code,
    }
  }
}

export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED'
  object: KubeObject
  resourceVersion: number
  resource: ResourceType
}

const typeKey = (type: Pick<ResourceType, 'group' | 'plural'>) => `${type.group}/${type.plural}`
const objectKey = (namespace: string | undefined, name: string) => `${namespace ?? ''}/${name}`
const clone = <T>(value: T): T => structuredClone(value)
/** JSON with object keys sorted: equal for equal content whatever the key order. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_, item) =>
    item && typeof item === 'object' && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => a.localeCompare(b)))
      : item,
  ) ?? 'undefined'

/** 409 Conflict: a write for another resourceVersion than the object's (the real server's message). */
const conflict = (type: ResourceType, name: string) =>
  new StatusError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${type.plural}${type.group ? `.${type.group}` : ''} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    {name, group: type.group, kind: type.plural},
  )

export const notFoundKind = () => new StatusError(404, 'NotFound', 'the server could not find the requested resource')

export class Store {
  private readonly types = new Map<string, ResourceType>()
  private readonly objects = new Map<string, Map<string, KubeObject>>()
  private revision = 0
  readonly events: WatchEvent[] = []
  /** Events at or below this revision were compacted away: a watch from before it gets 410 Gone. */
  private compacted = 0
  readonly listeners = new Set<(event: WatchEvent) => void>()
  /** Fields pruned from custom objects (the server's "unknown field" warnings). */
  readonly warnings: string[] = []

  constructor() {
    for (const type of builtinResources()) this.types.set(`${type.group}/${type.version}/${type.plural}`, type)
  }

  get resourceVersion(): number {
    return this.revision
  }

  /** The revision up to which the event log was compacted (0: never). */
  get compactedRevision(): number {
    return this.compacted
  }

  /** Drops the event log so far, as etcd's compaction does: watches must start from now. */
  compact(): void {
    this.events.splice(0)
    this.compacted = this.revision
  }

  /** The type served at `group/version/plural`, or undefined. */
  type(group: string, version: string, plural: string): ResourceType | undefined {
    return this.types.get(`${group}/${version}/${plural}`)
  }

  /** The type of a plural (any group), or of `plural.group`. */
  typeOf(resource: string): ResourceType {
    for (const type of this.types.values()) {
      if (type.plural === resource || `${type.plural}.${type.group}` === resource) return type
    }

    throw new Error(`fake API server: no resource "${resource}"`)
  }

  /** The type of an object by its apiVersion and kind. */
  typeOfObject(object: KubeObject): ResourceType {
    for (const type of this.types.values())
      if (apiVersionOf(type) === object.apiVersion && type.kind === object.kind) return type
    throw new StatusError(404, 'NotFound', `no matches for kind "${object.kind}" in version "${object.apiVersion}"`)
  }

  private bucket(type: ResourceType): Map<string, KubeObject> {
    const key = typeKey(type)
    if (!this.objects.has(key)) this.objects.set(key, new Map())
    return this.objects.get(key)!
  }

  private emit(type: WatchEvent['type'], resourceType: ResourceType, object: KubeObject): void {
    const event = {
      type,
      object: clone(object),
      resourceVersion: Number(object.metadata.resourceVersion),
      resource: resourceType,
    }
    this.events.push(event)
    for (const listener of this.listeners) listener(event)
  }

  private notFound(type: ResourceType, name: string): StatusError {
    return new StatusError(404, 'NotFound', `${type.plural}${type.group ? `.${type.group}` : ''} "${name}" not found`, {
      name,
      group: type.group,
      kind: type.plural,
    })
  }

  /**
   * Checks an object as the server would: apiVersion and kind, object meta, then the kind's schema
   * (kubernetes-models for built-ins, the CRD's schema — pruning unknown fields — for custom).
   * @throws StatusError 400 for a wrong kind, 422 Invalid naming every bad field.
   */
  async validate(type: ResourceType, object: KubeObject): Promise<void> {
    if (object.apiVersion !== apiVersionOf(type) || object.kind !== type.kind) {
      throw new StatusError(
        400,
        'BadRequest',
        `the API version in the data (${object.apiVersion}) or kind (${object.kind}) does not match the expected ${apiVersionOf(type)} ${type.kind}`,
      )
    }

    const problems = validateMeta(type, object)
    if (type.model) {
      problems.push(...(await validateBuiltin(type, object)))
    } else if (type.schema) {
      const {apiVersion, kind, metadata, ...rest} = object
      const {problems: schemaProblems, pruned} = validateAndPrune(rest, {
        ...type.schema,
        properties: {
          ...type.schema.properties,
          apiVersion: {type: 'string'},
          kind: {type: 'string'},
          metadata: {type: 'object'},
        },
      })
      for (const key of Object.keys(object)) if (!['apiVersion', 'kind', 'metadata'].includes(key)) delete object[key]
      Object.assign(object, rest, {apiVersion, kind, metadata})
      problems.push(...schemaProblems.map((problem) => ({field: problem.field, message: problem.message})))
      this.warnings.push(...pruned.map((field) => `unknown field "${field}" in ${type.kind} "${metadata?.name}"`))
    }

    if (type.kind === 'CustomResourceDefinition') problems.push(...crdProblems(object))
    if (problems.length > 0) {
      const name = object.metadata?.name ?? ''
      throw new StatusError(
        422,
        'Invalid',
        `${type.kind}${type.group ? `.${type.group}` : ''} "${name}" is invalid: ${problems.map((problem) => `${problem.field}: ${problem.message}`).join(', ')}`,
        {
          name,
          group: type.group,
          kind: type.kind,
          causes: problems.map((problem) => ({
            reason: 'FieldValueInvalid',
            message: problem.message,
            field: problem.field,
          })),
        },
      )
    }
  }

  get(type: ResourceType, namespace: string | undefined, name: string): KubeObject {
    const object = this.bucket(type).get(objectKey(type.namespaced ? namespace : undefined, name))
    if (!object) throw this.notFound(type, name)
    return clone(object)
  }

  find(type: ResourceType, namespace: string | undefined, name: string): KubeObject | undefined {
    const object = this.bucket(type).get(objectKey(type.namespaced ? namespace : undefined, name))
    return object && clone(object)
  }

  list(
    type: ResourceType,
    namespace: string | undefined,
    filter: (object: KubeObject) => boolean = () => true,
  ): KubeObject[] {
    return [...this.bucket(type).values()]
      .filter((object) => namespace === undefined || object.metadata.namespace === namespace)
      .filter(filter)
      .sort((a, b) =>
        objectKey(a.metadata.namespace, a.metadata.name).localeCompare(
          objectKey(b.metadata.namespace, b.metadata.name),
        ),
      )
      .map(clone)
  }

  /**
   * Creates an object (POST). `dryRun` validates without storing.
   * @throws StatusError 400 (namespace mismatch), 404 (namespace missing), 409 AlreadyExists, 422 Invalid.
   */
  async create(
    type: ResourceType,
    namespace: string | undefined,
    body: KubeObject,
    dryRun = false,
  ): Promise<KubeObject> {
    const object = clone(body)
    object.metadata ??= {}
    if (type.namespaced) {
      if (object.metadata.namespace !== undefined && object.metadata.namespace !== namespace) {
        throw new StatusError(
          400,
          'BadRequest',
          'the namespace of the provided object does not match the namespace sent on the request',
        )
      }

      object.metadata.namespace = namespace
      if (!this.find(this.typeOf('namespaces'), undefined, namespace!)) {
        throw new StatusError(404, 'NotFound', `namespaces "${namespace}" not found`, {
          name: namespace,
          kind: 'namespaces',
        })
      }
    } else delete object.metadata.namespace
    if (!object.metadata.name && object.metadata.generateName)
      object.metadata.name = `${object.metadata.generateName}${randomUUID().slice(0, 5)}`
    await this.validate(type, object)
    if (this.find(type, namespace, object.metadata.name)) {
      throw new StatusError(
        409,
        'AlreadyExists',
        `${type.plural}${type.group ? `.${type.group}` : ''} "${object.metadata.name}" already exists`,
        {name: object.metadata.name, group: type.group, kind: type.plural},
      )
    }

    if (type.statusSubresource) {
      // The server sets a new object's status itself; a custom object starts without one.
      const status = initialStatus(type, object)
      if (status === undefined) delete object.status
      else object.status = status
    }

    for (const key of ['uid', 'resourceVersion', 'creationTimestamp', 'deletionTimestamp', 'generation'])
      delete object.metadata[key]
    Object.assign(object.metadata, {
      uid: randomUUID(),
      creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      generation: 1,
    })
    if (dryRun) return object
    object.metadata.resourceVersion = String(++this.revision)
    this.bucket(type).set(objectKey(object.metadata.namespace, object.metadata.name), object)
    if (type.kind === 'CustomResourceDefinition') this.registerCrd(object)
    this.emit('ADDED', type, object)
    return clone(object)
  }

  /**
   * Replaces an object (PUT), or only its status (`subresource` "status").
   * @throws StatusError 400 (name mismatch), 404, 409 Conflict (stale resourceVersion), 422 Invalid.
   */
  async update(
    type: ResourceType,
    namespace: string | undefined,
    name: string,
    body: KubeObject,
    subresource?: string,
  ): Promise<KubeObject> {
    const current = this.get(type, namespace, name)
    if (body.metadata?.name !== undefined && body.metadata.name !== name)
      throw new StatusError(
        400,
        'BadRequest',
        `the name of the object (${body.metadata.name}) does not match the name on the URL (${name})`,
      )
    if (
      body.metadata?.resourceVersion !== undefined &&
      body.metadata.resourceVersion !== current.metadata.resourceVersion
    ) {
      throw conflict(type, name)
    }

    return this.write(type, current, clone(body), subresource)
  }

  /**
   * Patches an object or its status with a merge, strategic-merge or JSON patch. A patch that
   * sets `metadata.resourceVersion` is conditional, as on the real server: it applies only to
   * that version of the object (optimistic concurrency; Kubernetes API concepts, "Resource
   * versions").
   * @throws StatusError 404, 415, 400, 409 Conflict (another resourceVersion), 422 Invalid.
   */
  async patch(
    type: ResourceType,
    namespace: string | undefined,
    name: string,
    patch: unknown,
    contentType: string,
    subresource?: string,
  ): Promise<KubeObject> {
    const current = this.get(type, namespace, name)
    let patched: KubeObject
    try {
      patched = applyPatch(current, patch, contentType)
    } catch (error) {
      const code = (error as {code?: number}).code ?? 400
      throw new StatusError(
        code,
        code === 415 ? 'UnsupportedMediaType' : code === 422 ? 'Invalid' : 'BadRequest',
        (error as Error).message,
      )
    }

    const version = (patched.metadata as KubeObject | undefined)?.resourceVersion
    if (version !== undefined && version !== current.metadata.resourceVersion) throw conflict(type, name)
    return this.write(type, current, patched, subresource)
  }

  private async write(
    type: ResourceType,
    current: KubeObject,
    next: KubeObject,
    subresource?: string,
  ): Promise<KubeObject> {
    let object: KubeObject
    if (subresource === 'status') {
      object = {...clone(current), status: next.status}
    } else if (subresource === undefined) {
      object = next
      if (type.statusSubresource) {
        if (current.status === undefined) delete object.status
        else object.status = clone(current.status)
      }
    } else {
      throw new StatusError(404, 'NotFound', 'the server could not find the requested resource')
    }

    object.metadata = {
      ...object.metadata,
      name: current.metadata.name,
      namespace: current.metadata.namespace,
      uid: current.metadata.uid,
      creationTimestamp: current.metadata.creationTimestamp,
      resourceVersion: current.metadata.resourceVersion,
      generation: current.metadata.generation,
    }
    if (object.metadata.namespace === undefined) delete object.metadata.namespace
    if (object.metadata.generation === undefined) delete object.metadata.generation
    if (object.apiVersion === undefined) object.apiVersion = current.apiVersion
    if (object.kind === undefined) object.kind = current.kind
    await this.validate(type, object)
    // Like the real server, a write that changes nothing (keys in any order) keeps the resourceVersion.
    if (canonical(object) === canonical(current)) return object
    if (
      subresource === undefined &&
      canonical(object.spec) !== canonical(current.spec) &&
      object.metadata.generation !== undefined
    )
      object.metadata.generation++
    object.metadata.resourceVersion = String(++this.revision)
    this.bucket(type).set(objectKey(object.metadata.namespace, object.metadata.name), object)
    if (type.kind === 'CustomResourceDefinition') this.registerCrd(object)
    this.emit('MODIFIED', type, object)
    return clone(object)
  }

  /**
   * Deletes an object at once (no graceful period); a Namespace takes its objects along, a CRD
   * its custom objects and its kind.
   * @throws StatusError 404.
   */
  delete(type: ResourceType, namespace: string | undefined, name: string): KubeObject {
    const current = this.get(type, namespace, name)
    if (type.kind === 'Namespace') {
      for (const other of this.types.values()) {
        if (other.namespaced)
          for (const inside of this.list(other, name)) this.delete(other, name, inside.metadata.name)
      }
    }

    if (type.kind === 'CustomResourceDefinition') {
      const crdType = this.crdTypes(current)[0]
      if (crdType)
        for (const inside of this.list(crdType, undefined))
          this.delete(crdType, inside.metadata.namespace, inside.metadata.name)
      for (const version of current.spec.versions)
        this.types.delete(`${current.spec.group}/${version.name}/${current.spec.names.plural}`)
    }

    this.bucket(type).delete(objectKey(current.metadata.namespace, name))
    current.metadata.resourceVersion = String(++this.revision)
    current.metadata.deletionTimestamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
    this.emit('DELETED', type, current)
    return current
  }

  private crdTypes(crd: KubeObject): ResourceType[] {
    return (crd.spec.versions as KubeObject[])
      .filter((version) => version.served)
      .map((version) => ({
        group: crd.spec.group,
        version: version.name,
        plural: crd.spec.names.plural,
        kind: crd.spec.names.kind,
        namespaced: crd.spec.scope === 'Namespaced',
        statusSubresource: version.subresources?.status !== undefined,
        schema: version.schema?.openAPIV3Schema as OpenApiSchema,
      }))
  }

  private registerCrd(crd: KubeObject): void {
    for (const type of this.crdTypes(crd)) this.types.set(`${type.group}/${type.version}/${type.plural}`, type)
  }
}

function initialStatus(type: ResourceType, object: KubeObject): KubeObject | undefined {
  switch (type.kind) {
    case 'Namespace': {
      return {phase: 'Active'}
    }

    case 'Pod': {
      return {phase: 'Pending'}
    }

    case 'DaemonSet': {
      return {currentNumberScheduled: 0, desiredNumberScheduled: 0, numberMisscheduled: 0, numberReady: 0}
    }

    case 'CustomResourceDefinition': {
      return {
        acceptedNames: object.spec.names,
        storedVersions: (object.spec.versions as KubeObject[])
          .filter((version) => version.storage)
          .map((version) => version.name),
        conditions: [
          {
            type: 'NamesAccepted',
            status: 'True',
            reason: 'NoConflicts',
            message: 'no conflicts found',
            lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
          },
          {
            type: 'Established',
            status: 'True',
            reason: 'InitialNamesAccepted',
            message: 'the initial names have been accepted',
            lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
          },
        ],
      }
    }

    default: {
      return type.model ? {} : undefined
    }
  }
}

/** What the real server checks of a CRD beyond its schema: the name rule and structural schemas. */
function crdProblems(crd: KubeObject): Array<{field: string; message: string}> {
  const problems: Array<{field: string; message: string}> = []
  const expected = `${crd.spec?.names?.plural}.${crd.spec?.group}`
  if (crd.metadata?.name !== expected)
    problems.push({
      field: 'metadata.name',
      message: `Invalid value: "${crd.metadata?.name}": must be spec.names.plural+"."+spec.group`,
    })
  const versions = (crd.spec?.versions ?? []) as KubeObject[]
  if (versions.filter((version) => version.storage).length !== 1)
    problems.push({
      field: 'spec.versions',
      message: 'Invalid value: must have exactly one version marked as storage version',
    })
  for (const [index, version] of versions.entries()) {
    const schema = version.schema?.openAPIV3Schema as OpenApiSchema | undefined
    if (!schema) {
      problems.push({
        field: `spec.versions[${index}].schema.openAPIV3Schema`,
        message: 'Required value: schemas are required',
      })
      continue
    }

    for (const violation of structuralViolations(schema))
      problems.push({field: `spec.versions[${index}].schema.openAPIV3Schema`, message: violation})
  }

  return problems
}
