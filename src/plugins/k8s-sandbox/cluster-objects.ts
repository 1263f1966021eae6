/**
 * The objects `yard cluster install` puts in a cluster (DESIGN.md §5.2, "Runtimes"), as plain
 * Kubernetes objects in the order they are applied: the Namespace, the Repo CRD, and the cache
 * agent's ServiceAccount, Role, RoleBinding and DaemonSet. Rendering needs no cluster and no
 * client-node: `--dry-run` prints exactly these.
 */
import {clusterAsksRoot} from './cluster-asks.js'
import {REPO_GROUP, REPO_PLURAL, repoCrd} from './repo-resource.js'

/** The name of the agent's ServiceAccount, Role, RoleBinding and DaemonSet. */
export const AGENT_NAME = 'yard-cache-agent'

/** Labels of the agent's pods; `yard cluster status` finds them by `app.kubernetes.io/name`. */
export const AGENT_SELECTOR = {'app.kubernetes.io/name': AGENT_NAME}

/** The container of the agent's pods. */
export const AGENT_CONTAINER = 'agent'

/** The Secret `yard cluster credentials` writes, one entry per url prefix; the agent's pods mount it. */
export const CREDENTIALS_SECRET = 'yard-cache-credentials'

/** Where the agent's pods mount it (read-only; `YARD_CREDENTIALS_DIR`). */
export const CREDENTIALS_DIR = '/etc/yard/credentials'

const COMMON_LABELS = {'app.kubernetes.io/part-of': 'yard', 'app.kubernetes.io/managed-by': 'yard'}

/** What the rendering depends on. */
export interface ClusterObjectOptions {
  /** `[cluster] namespace`: sandboxes, Repos and the agent all live there. */
  namespace: string
  /** `[cluster] cache-root`: the caches' directory on every node (absolute). */
  cacheRoot: string
  /** The agent's image (node, git and yard; deploy/Containerfile). */
  image: string
  /** yard's version, labelled on the DaemonSet. */
  version: string
}

/** One rule of a Role (rbac.authorization.k8s.io/v1 PolicyRule). */
export interface PolicyRule {
  apiGroups: string[]
  resources: string[]
  verbs: string[]
}

/**
 * Exactly what the cache agent (`yard cache agent --kubernetes`, cache-demand.ts) does with the
 * API, in its own namespace: list and watch the pods (on its node, by field selector), list and watch the Repos, and
 * merge-patch the status subresource of a Repo (its node's entry). Nothing else: no secrets, no
 * writes to pods or to a Repo's spec (Kubernetes docs, "Using RBAC Authorization"; least privilege).
 */
export function agentRoleRules(): PolicyRule[] {
  return [
    {apiGroups: [''], resources: ['pods'], verbs: ['list', 'watch']},
    {apiGroups: [REPO_GROUP], resources: [REPO_PLURAL], verbs: ['list', 'watch']},
    {apiGroups: [REPO_GROUP], resources: [`${REPO_PLURAL}/status`], verbs: ['patch']},
  ]
}

/**
 * The objects of `yard cluster install`, in apply order (a Namespace before what lives in it, the
 * CRD before any Repo, the Role before its binding, the ServiceAccount before the pods using it).
 *
 * The Namespace enforces the `privileged` Pod Security Standard: sandbox pods and the agent mount
 * hostPath volumes, which `baseline` forbids (Kubernetes docs, "Pod Security Standards").
 * The DaemonSet's pods run `yard cache agent --kubernetes` with `NODE_NAME` from the downward API
 * (`spec.nodeName`), `YARD_NAMESPACE` from `metadata.namespace` and `YARD_CACHE_ROOT`; the cache
 * root is a hostPath (`DirectoryOrCreate`) mounted at the same path, and so is the sandbox pods'
 * asks root beside it (`<cache root>.asks`, cluster-asks.ts); the root filesystem is
 * read-only with an emptyDir for `/tmp` (HOME and yard's state directory); the credentials
 * Secret is mounted read-only (mode 0400, optional) at CREDENTIALS_DIR — the kubelet reads it
 * with the node's rights, so the agent's Role needs no Secret rights at all; as uid 0 — kubelet
 * creates the pods' hostPath directories as root — but with every capability dropped and no
 * privilege escalation.
 */
export function clusterObjects(options: ClusterObjectOptions): Array<Record<string, unknown>> {
  const {namespace} = options
  const agentLabels = {...AGENT_SELECTOR, 'app.kubernetes.io/component': 'cache-agent', ...COMMON_LABELS}
  return [
    {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {name: namespace, labels: {...COMMON_LABELS, 'pod-security.kubernetes.io/enforce': 'privileged'}},
    },
    repoCrd(),
    {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: {name: AGENT_NAME, namespace, labels: agentLabels},
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: {name: AGENT_NAME, namespace, labels: agentLabels},
      rules: agentRoleRules(),
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: {name: AGENT_NAME, namespace, labels: agentLabels},
      roleRef: {apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: AGENT_NAME},
      subjects: [{kind: 'ServiceAccount', name: AGENT_NAME, namespace}],
    },
    agentDaemonSet(options, agentLabels),
  ]
}

function agentDaemonSet(options: ClusterObjectOptions, labels: Record<string, string>): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: {
      name: AGENT_NAME,
      namespace: options.namespace,
      labels: {...labels, 'app.kubernetes.io/version': options.version},
    },
    spec: {
      selector: {matchLabels: AGENT_SELECTOR},
      updateStrategy: {type: 'RollingUpdate', rollingUpdate: {maxUnavailable: 1}},
      template: {
        metadata: {labels},
        spec: {
          serviceAccountName: AGENT_NAME,
          // Fetches in flight finish after SIGTERM (yard cache agent stops after them).
          terminationGracePeriodSeconds: 120,
          securityContext: {runAsUser: 0, runAsGroup: 0, seccompProfile: {type: 'RuntimeDefault'}},
          containers: [
            {
              name: AGENT_CONTAINER,
              image: options.image,
              imagePullPolicy: 'IfNotPresent',
              command: ['yard', 'cache', 'agent', '--kubernetes'],
              env: [
                {name: 'NODE_NAME', valueFrom: {fieldRef: {fieldPath: 'spec.nodeName'}}},
                {name: 'YARD_NAMESPACE', valueFrom: {fieldRef: {fieldPath: 'metadata.namespace'}}},
                {name: 'YARD_CACHE_ROOT', value: options.cacheRoot},
                {name: 'HOME', value: '/tmp'},
                {name: 'YARD_STATE_DIR', value: '/tmp/yard'},
                {name: 'YARD_CREDENTIALS_DIR', value: CREDENTIALS_DIR},
              ],
              resources: {requests: {cpu: '50m', memory: '128Mi'}, limits: {memory: '1Gi'}},
              securityContext: {
                readOnlyRootFilesystem: true,
                allowPrivilegeEscalation: false,
                capabilities: {drop: ['ALL']},
              },
              volumeMounts: [
                {name: 'caches', mountPath: options.cacheRoot},
                {name: 'asks', mountPath: clusterAsksRoot(options.cacheRoot)},
                {name: 'tmp', mountPath: '/tmp'},
                {name: 'credentials', mountPath: CREDENTIALS_DIR, readOnly: true},
              ],
            },
          ],
          volumes: [
            {name: 'caches', hostPath: {path: options.cacheRoot, type: 'DirectoryOrCreate'}},
            // The sandbox pods' fetch-through asks (cluster-asks.ts), beside the caches.
            {name: 'asks', hostPath: {path: clusterAsksRoot(options.cacheRoot), type: 'DirectoryOrCreate'}},
            {name: 'tmp', emptyDir: {}},
            // Optional: the agent starts before any credentials exist, and the kubelet adds the
            // files once the Secret appears (and updates them in place when it changes).
            {name: 'credentials', secret: {secretName: CREDENTIALS_SECRET, optional: true, defaultMode: 0o400}},
          ],
        },
      },
    },
  }
}
