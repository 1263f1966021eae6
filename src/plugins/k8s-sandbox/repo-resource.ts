/**
 * The `Repo` custom resource (DESIGN.md §5.2, "Runtimes"): one object per cache key, in the
 * sandboxes' namespace, telling every node's cache agent which repository to hold. Its status
 * is a map keyed by node name, so each agent writes its own entry with a JSON merge patch
 * (`{"status": {"nodes": {"<node>": {…}}}}`, RFC 7386) and never touches another node's.
 *
 * Plain constants and objects: nothing here loads client-node.
 */

export const REPO_GROUP = 'yard.dev'
export const REPO_VERSION = 'v1alpha1'
export const REPO_PLURAL = 'repos'
export const REPO_KIND = 'Repo'
export const REPO_API_VERSION = `${REPO_GROUP}/${REPO_VERSION}`
/** The CRD's name: `<plural>.<group>` (Kubernetes requires it). */
export const REPO_CRD_NAME = `${REPO_PLURAL}.${REPO_GROUP}`

/** What yard asks of the nodes. */
export interface RepoSpec {
  /** The url as the user first gave it (what the agent clones from). */
  url: string
  /**
   * How often a node refreshes its cache: a duration such as `10m`, `1h30m`, `45s`. Absent: the
   * agent's `--interval`.
   */
  refreshInterval?: string
  /**
   * The latest ask for an on-demand fetch (RFC 3339); a node fetches when it is newer than its
   * latest attempt (successful or not: a failing remote is not retried in a loop).
   */
  askedAt?: string
  /** Declared ahead (`yard cluster repo add`): every node clones it before any pod needs it. */
  prefetch?: boolean
}

/** One node's state of the cache (`status.nodes.<node>`), written by that node's agent only. */
export interface RepoNodeStatus {
  /** The bare repository exists on the node (`HEAD` present, DESIGN.md §5.1). */
  present: boolean
  /** Start of the latest successful clone or fetch (RFC 3339), or null. */
  lastFetched?: string | null
  /** git's words when the latest clone or fetch failed, or null. */
  lastError?: string | null
  /** The `spec.askedAt` this node served last: its clone or fetch ran after that ask (a waiting attach reads it). */
  lastAsked?: string | null
  /** The url prefix of the credentials that served it (`yard cluster credentials`), or null: none matched. */
  credentials?: string | null
}

export interface RepoStatus {
  /** Node name → that node's entry. */
  nodes?: Record<string, RepoNodeStatus>
}

/** A Repo object as stored by the API server. */
export interface Repo {
  apiVersion: typeof REPO_API_VERSION
  kind: typeof REPO_KIND
  metadata: {
    name: string
    namespace?: string
    labels?: Record<string, string>
    resourceVersion?: string
    uid?: string
    creationTimestamp?: string
  }
  spec: RepoSpec
  status?: RepoStatus
}

/**
 * A new Repo object named by its cache key (`metadata.name` = key, a DNS-1123 subdomain since
 * keys are `slug-<8 hex>`, DESIGN.md §5.1).
 */
export function repoObject(key: string, namespace: string, spec: RepoSpec, labels: Record<string, string> = {}): Repo {
  return {
    apiVersion: REPO_API_VERSION,
    kind: REPO_KIND,
    metadata: {name: key, namespace, labels: {'app.kubernetes.io/managed-by': 'yard', ...labels}},
    spec,
  }
}

/**
 * The JSON merge patch (RFC 7386) an agent sends to the `status` subresource: only its own
 * node's entry; fields left out stay as they are, null clears one.
 */
export function nodeStatusPatch(
  node: string,
  status: RepoNodeStatus,
): {status: {nodes: Record<string, RepoNodeStatus>}} {
  return {status: {nodes: {[node]: status}}}
}

export {parseRefreshInterval} from '../../sdk/duration.js'

const nodeStatusSchema = {
  type: 'object',
  required: ['present'],
  properties: {
    present: {type: 'boolean', description: 'the bare repository exists on the node'},
    lastFetched: {
      type: 'string',
      format: 'date-time',
      nullable: true,
      description: 'start of the latest successful clone or fetch',
    },
    lastError: {type: 'string', nullable: true, description: "git's words when the latest clone or fetch failed"},
    lastAsked: {
      type: 'string',
      format: 'date-time',
      nullable: true,
      description: 'the spec.askedAt this node served last',
    },
    credentials: {
      type: 'string',
      nullable: true,
      description: 'the url prefix of the credentials this node used for it, or null: none matched',
    },
  },
}

/**
 * The CustomResourceDefinition `repos.yard.dev` (apiextensions.k8s.io/v1): namespaced, one
 * served and stored version `v1alpha1` with a structural openAPIV3Schema (every field typed;
 * Kubernetes docs, "Specifying a structural schema"), and `status` as a subresource so an agent's
 * status patch never races a spec update.
 */
export function repoCrd(): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: REPO_CRD_NAME,
      labels: {'app.kubernetes.io/managed-by': 'yard', 'app.kubernetes.io/part-of': 'yard'},
    },
    spec: {
      group: REPO_GROUP,
      scope: 'Namespaced',
      names: {plural: REPO_PLURAL, singular: 'repo', kind: REPO_KIND, listKind: `${REPO_KIND}List`},
      versions: [
        {
          name: REPO_VERSION,
          served: true,
          storage: true,
          subresources: {status: {}},
          additionalPrinterColumns: [
            {name: 'URL', type: 'string', jsonPath: '.spec.url'},
            {name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp'},
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description:
                'A git repository that the cache agent holds as a bare cache on the nodes that need it (named by its cache key).',
              required: ['spec'],
              properties: {
                apiVersion: {type: 'string'},
                kind: {type: 'string'},
                metadata: {type: 'object'},
                spec: {
                  type: 'object',
                  required: ['url'],
                  properties: {
                    url: {
                      type: 'string',
                      minLength: 1,
                      description: 'the url as first given; the agent clones from it',
                    },
                    refreshInterval: {
                      type: 'string',
                      minLength: 1,
                      pattern: '^([0-9]+h)?([0-9]+m)?([0-9]+s)?$',
                      description: "how often a node fetches, e.g. 10m; default: the agent's --interval",
                    },
                    askedAt: {
                      type: 'string',
                      format: 'date-time',
                      description:
                        'the latest ask for a fetch; a node holding the cache fetches when it is newer than the ask it served last',
                    },
                    prefetch: {
                      type: 'boolean',
                      description: 'declared ahead: every node clones it before any pod needs it',
                    },
                  },
                },
                status: {
                  type: 'object',
                  properties: {
                    nodes: {
                      type: 'object',
                      description: "node name → that node's cache state, written by that node's agent only",
                      additionalProperties: nodeStatusSchema,
                    },
                  },
                },
              },
            },
          },
        },
      ],
    },
  }
}
