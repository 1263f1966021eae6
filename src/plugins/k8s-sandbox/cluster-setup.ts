/**
 * `yard cluster install|status` for the k8s-sandbox backend (DESIGN.md §5.2): applies the objects
 * of cluster-objects.ts through client-node — read, then create, or merge-patch (RFC 7386) what
 * differs, so a second run changes nothing and fields others set stay — and reports the cache
 * agent per node and every Repo's per-node state.
 */
import type {
  ClusterCredential,
  ClusterCredentialInput,
  ClusterInstallStep,
  ClusterRepo,
  ClusterStatus,
  SandboxClusterSetup,
} from '../../sdk/sandbox.js'
import type {ClusterSettings} from '../../sdk/target.js'

import * as credentials from './cluster-credentials.js'
import {AGENT_NAME, AGENT_SELECTOR, clusterObjects} from './cluster-objects.js'
import * as repos from './cluster-repos.js'
import {isMissingKind, type Kube, kubeCall, kubeError, kubeGet, openKube} from './kube.js'
import {type Repo, REPO_GROUP, REPO_PLURAL, REPO_VERSION} from './repo-resource.js'

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- bodies pass through to typed clients
type KubeObject = Record<string, any>

/** How one kind is read, created and patched with the typed clients. */
interface KindClient {
  read(kube: Kube, name: string, namespace: string): Promise<KubeObject>
  create(kube: Kube, body: KubeObject, namespace: string): Promise<KubeObject>
  patch(kube: Kube, name: string, namespace: string, body: KubeObject): Promise<KubeObject>
}

const KINDS: Record<string, KindClient> = {
  Namespace: {
    read: async (kube, name) => kube.core.readNamespace({name}),
    create: async (kube, body) => kube.core.createNamespace({body}),
    patch: async (kube, name, _, body) => kube.core.patchNamespace({name, body}, kube.mergePatch),
  },
  CustomResourceDefinition: {
    read: async (kube, name) => kube.apiextensions.readCustomResourceDefinition({name}),
    create: async (kube, body) => kube.apiextensions.createCustomResourceDefinition({body: body as never}),
    patch: async (kube, name, _, body) =>
      kube.apiextensions.patchCustomResourceDefinition({name, body}, kube.mergePatch),
  },
  ServiceAccount: {
    read: async (kube, name, namespace) => kube.core.readNamespacedServiceAccount({name, namespace}),
    create: async (kube, body, namespace) => kube.core.createNamespacedServiceAccount({namespace, body}),
    patch: async (kube, name, namespace, body) =>
      kube.core.patchNamespacedServiceAccount({name, namespace, body}, kube.mergePatch),
  },
  Role: {
    read: async (kube, name, namespace) => kube.rbac.readNamespacedRole({name, namespace}),
    create: async (kube, body, namespace) => kube.rbac.createNamespacedRole({namespace, body}),
    patch: async (kube, name, namespace, body) =>
      kube.rbac.patchNamespacedRole({name, namespace, body}, kube.mergePatch),
  },
  RoleBinding: {
    read: async (kube, name, namespace) => kube.rbac.readNamespacedRoleBinding({name, namespace}),
    create: async (kube, body, namespace) => kube.rbac.createNamespacedRoleBinding({namespace, body: body as never}),
    patch: async (kube, name, namespace, body) =>
      kube.rbac.patchNamespacedRoleBinding({name, namespace, body}, kube.mergePatch),
  },
  DaemonSet: {
    read: async (kube, name, namespace) => kube.apps.readNamespacedDaemonSet({name, namespace}),
    create: async (kube, body, namespace) => kube.apps.createNamespacedDaemonSet({namespace, body}),
    patch: async (kube, name, namespace, body) =>
      kube.apps.patchNamespacedDaemonSet({name, namespace, body}, kube.mergePatch),
  },
}

export class K8sClusterSetup implements SandboxClusterSetup {
  constructor(
    private readonly settings: ClusterSettings,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  objects(options: {image: string; version: string}): Array<Record<string, unknown>> {
    return clusterObjects({
      namespace: this.settings.namespace,
      cacheRoot: this.settings.cacheRoot,
      image: options.image,
      version: options.version,
    })
  }

  async install(options: {
    image: string
    version: string
    onStep?: (step: ClusterInstallStep) => void
  }): Promise<ClusterInstallStep[]> {
    const kube = await openKube({context: this.settings.context, namespace: this.settings.namespace}, this.env)
    const steps: ClusterInstallStep[] = []
    for (const object of this.objects(options) as KubeObject[]) {
      const step = await applyObject(kube, object)
      steps.push(step)
      options.onStep?.(step)
    }

    return steps
  }

  private async open(): Promise<Kube> {
    return openKube({context: this.settings.context, namespace: this.settings.namespace}, this.env)
  }

  async setCredential(input: ClusterCredentialInput): Promise<{action: 'created' | 'updated'; secret: string}> {
    return credentials.setCredential(await this.open(), input)
  }

  async listCredentials(): Promise<ClusterCredential[]> {
    return credentials.listCredentials(await this.open())
  }

  async removeCredential(prefix: string): Promise<boolean> {
    return credentials.removeCredential(await this.open(), prefix)
  }

  async addRepos(
    list: Array<{key: string; url: string}>,
    options: {refreshInterval?: string},
  ): Promise<Array<{key: string; url: string; action: 'created' | 'updated' | 'unchanged'}>> {
    return repos.addRepos(await this.open(), list, options)
  }

  async listRepos(): Promise<ClusterRepo[]> {
    return repos.listRepos(await this.open())
  }

  async removeRepos(keys: string[]): Promise<Array<{key: string; removed: boolean; mountedBy: string[]}>> {
    return repos.removeRepos(await this.open(), keys, this.settings.cacheRoot)
  }

  async status(): Promise<ClusterStatus> {
    const kube = await openKube({context: this.settings.context, namespace: this.settings.namespace}, this.env)
    const {namespace} = kube
    const daemonSet = await kubeGet(kube, `read DaemonSet ${namespace}/${AGENT_NAME}`, async () =>
      kube.apps.readNamespacedDaemonSet({name: AGENT_NAME, namespace}),
    )
    const labelSelector = Object.entries(AGENT_SELECTOR)
      .map(([key, value]) => `${key}=${value}`)
      .join(',')
    const pods = await kubeCall(kube, `list the cache agent's pods in ${namespace}`, async () =>
      kube.core.listNamespacedPod({namespace, labelSelector}),
    )
    let repos: Repo[] = []
    try {
      repos = (
        (await kube.custom.listNamespacedCustomObject({
          group: REPO_GROUP,
          version: REPO_VERSION,
          namespace,
          plural: REPO_PLURAL,
        })) as {items: Repo[]}
      ).items
    } catch (error) {
      // No CRD yet: nothing installed, so no Repos (the agent rows say so too).
      if (!isMissingKind(error)) throw kubeError(error, `list Repos in ${namespace}`, kube)
    }

    return {
      context: kube.context,
      namespace,
      agent: daemonSet
        ? {
            image: daemonSet.spec?.template.spec?.containers[0]?.image ?? '',
            desired: daemonSet.status?.desiredNumberScheduled ?? 0,
            ready: daemonSet.status?.numberReady ?? 0,
          }
        : null,
      agents: pods.items
        .map((pod) => ({
          node: pod.spec?.nodeName ?? null,
          pod: pod.metadata?.name ?? '',
          phase: pod.status?.phase ?? 'Unknown',
          ready:
            pod.status?.conditions?.some((condition) => condition.type === 'Ready' && condition.status === 'True') ??
            false,
          restarts: (pod.status?.containerStatuses ?? []).reduce((sum, container) => sum + container.restartCount, 0),
        }))
        .sort((a, b) => (a.node ?? '').localeCompare(b.node ?? '') || a.pod.localeCompare(b.pod)),
      repos: repos
        .map((repo) => ({
          key: repo.metadata.name,
          url: repo.spec?.url ?? '',
          askedAt: repo.spec?.askedAt ?? null,
          nodes: Object.entries(repo.status?.nodes ?? {})
            .map(([node, state]) => ({
              node,
              present: state.present,
              lastFetched: state.lastFetched ?? null,
              lastError: state.lastError ?? null,
              credentials: state.credentials ?? null,
            }))
            .sort((a, b) => a.node.localeCompare(b.node)),
        }))
        .sort((a, b) => a.key.localeCompare(b.key)),
    }
  }
}

/**
 * Creates `object`, or merge-patches it with itself when it exists: a patch that changes nothing
 * leaves the resourceVersion as it was, which is how "unchanged" is told from "updated".
 */
async function applyObject(kube: Kube, object: KubeObject): Promise<ClusterInstallStep> {
  const client = KINDS[object.kind as string]
  const {name, namespace = ''} = object.metadata as {name: string; namespace?: string}
  const what = `${object.kind} ${namespace ? `${namespace}/` : ''}${name}`
  const step = {kind: object.kind as string, name, ...(namespace && {namespace})}
  const existing = await kubeGet(kube, `read ${what}`, async () => client.read(kube, name, namespace))
  if (!existing) {
    await kubeCall(kube, `create ${what}`, async () => client.create(kube, object, namespace))
    return {...step, action: 'created'}
  }

  const patched = await kubeCall(kube, `update ${what}`, async () => client.patch(kube, name, namespace, object))
  return {
    ...step,
    action: patched.metadata?.resourceVersion === existing.metadata?.resourceVersion ? 'unchanged' : 'updated',
  }
}
