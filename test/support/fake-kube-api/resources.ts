/**
 * The kinds the fake API server serves: the built-in ones yard and its tests use, each validated
 * with the Kubernetes schemas of `kubernetes-models`, and custom ones registered by creating a
 * CustomResourceDefinition, validated with the CRD's own openAPIV3Schema.
 */
import type {OpenApiSchema} from './openapi.js'

export interface ResourceType {
  /** API group; '' for core. */
  group: string
  version: string
  /** Lower-case plural: the URL segment and the RBAC resource name. */
  plural: string
  kind: string
  namespaced: boolean
  /** Writes to the object ignore `status`; `/status` writes only change it. */
  statusSubresource: boolean
  /** Built-in: the kubernetes-models module with the kind's class. */
  model?: string
  /** Custom: the CRD version's schema. */
  schema?: OpenApiSchema
}

const builtin = (
  group: string,
  version: string,
  plural: string,
  kind: string,
  namespaced: boolean,
  statusSubresource: boolean,
): ResourceType => ({
  group,
  version,
  plural,
  kind,
  namespaced,
  statusSubresource,
  model: `kubernetes-models/${group === '' ? '' : `${group}/`}${version}/${kind}`,
})

/** Built-in kinds, by `group/version/plural` (core: `/v1/plural`). */
export function builtinResources(): ResourceType[] {
  return [
    builtin('', 'v1', 'namespaces', 'Namespace', false, true),
    builtin('', 'v1', 'nodes', 'Node', false, true),
    builtin('', 'v1', 'pods', 'Pod', true, true),
    builtin('', 'v1', 'events', 'Event', true, false),
    builtin('', 'v1', 'serviceaccounts', 'ServiceAccount', true, false),
    builtin('', 'v1', 'configmaps', 'ConfigMap', true, false),
    builtin('', 'v1', 'secrets', 'Secret', true, false),
    builtin('', 'v1', 'services', 'Service', true, true),
    builtin('apps', 'v1', 'daemonsets', 'DaemonSet', true, true),
    builtin('apps', 'v1', 'deployments', 'Deployment', true, true),
    builtin('rbac.authorization.k8s.io', 'v1', 'roles', 'Role', true, false),
    builtin('rbac.authorization.k8s.io', 'v1', 'rolebindings', 'RoleBinding', true, false),
    builtin('rbac.authorization.k8s.io', 'v1', 'clusterroles', 'ClusterRole', false, false),
    builtin('rbac.authorization.k8s.io', 'v1', 'clusterrolebindings', 'ClusterRoleBinding', false, false),
    builtin('apiextensions.k8s.io', 'v1', 'customresourcedefinitions', 'CustomResourceDefinition', false, true),
  ]
}

/** `apiVersion` of a resource type: `v1` or `group/version`. */
export const apiVersionOf = (type: ResourceType): string =>
  type.group === '' ? type.version : `${type.group}/${type.version}`

/**
 * Validates a built-in object with its kubernetes-models class (the Kubernetes OpenAPI schema).
 * Returns the problems as `field: message` pairs, the field in the server's dotted form.
 */
export async function validateBuiltin(
  type: ResourceType,
  object: Record<string, unknown>,
): Promise<Array<{field: string; message: string}>> {
  const module = (await import(type.model!)) as Record<string, new (data: unknown) => {validate(): void}>
  const Model = module[type.kind]
  try {
    new Model(object).validate()
    return []
  } catch (error) {
    const {errors} = error as {
      errors?: Array<{instancePath: string; message?: string; params?: Record<string, unknown>}>
    }
    if (!errors) return [{field: '<root>', message: (error as Error).message}]
    return errors.map((item) => {
      const missing = typeof item.params?.missingProperty === 'string' ? `.${item.params.missingProperty}` : ''
      return {field: dotted(item.instancePath) + missing, message: item.message ?? 'invalid'}
    })
  }
}

/** `/spec/containers/0/image` → `spec.containers[0].image`. */
function dotted(instancePath: string): string {
  let out = ''
  for (const token of instancePath.split('/').slice(1))
    out += /^\d+$/.test(token) ? `[${token}]` : out === '' ? token : `.${token}`
  return out || '<root>'
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/
const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/

/**
 * The object-meta rules every kind shares (Kubernetes docs, "Object Names and IDs", "Labels and
 * Selectors"): names are DNS-1123 subdomains (labels for namespaces), label keys `[prefix/]name`
 * and values at most 63 characters of the label alphabet.
 */
export function validateMeta(type: ResourceType, object: Record<string, any>): Array<{field: string; message: string}> {
  const problems: Array<{field: string; message: string}> = []
  const name = object.metadata?.name
  if (typeof name !== 'string' || name === '') {
    problems.push({field: 'metadata.name', message: 'Required value: name or generateName is required'})
  } else {
    const label = type.kind === 'Namespace'
    if (label ? name.length > 63 || !DNS_LABEL.test(name) : name.length > 253 || !DNS_SUBDOMAIN.test(name)) {
      problems.push({
        field: 'metadata.name',
        message: `Invalid value: "${name}": a lowercase RFC 1123 ${label ? 'label' : 'subdomain'} must consist of lower case alphanumeric characters, '-' or '.'`,
      })
    }
  }

  for (const [where, labels] of [
    ['metadata.labels', object.metadata?.labels],
    ['metadata.annotations', object.metadata?.annotations],
  ] as const) {
    for (const [key, value] of Object.entries((labels ?? {}) as Record<string, unknown>)) {
      const [prefix, local] = key.includes('/')
        ? [key.slice(0, key.indexOf('/')), key.slice(key.indexOf('/') + 1)]
        : [undefined, key]
      if (
        (prefix !== undefined && (prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))) ||
        local.length > 63 ||
        !LABEL_NAME.test(local)
      ) {
        problems.push({
          field: where,
          message: `Invalid value: "${key}": name part must consist of alphanumeric characters, '-', '_' or '.', at most 63 characters`,
        })
      }

      if (typeof value !== 'string')
        problems.push({field: `${where}.${key}`, message: `Invalid value: ${JSON.stringify(value)}: must be a string`})
      else if (where === 'metadata.labels' && (value.length > 63 || !LABEL_VALUE.test(value))) {
        problems.push({
          field: `${where}.${key}`,
          message: `Invalid value: "${value}": a valid label must be 63 characters or less and consist of alphanumeric characters, '-', '_' or '.'`,
        })
      }
    }
  }

  return problems
}
