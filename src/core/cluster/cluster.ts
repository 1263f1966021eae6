/**
 * Use cases of `yard cluster install|status` (DESIGN.md §5.2): which cluster settings and sandbox
 * backend apply, the agent image, and the install plan. Inside a checkout the settings are its
 * `[cluster]` table; outside one (a cluster admin's shell) `YARD_NAMESPACE` (default `yard`),
 * `YARD_KUBE_CONTEXT` and the default cache root `/var/lib/yard/<namespace>/caches`.
 */
import {stringify} from 'yaml'

import type {ClusterInstallStep, ClusterStatus, SandboxClusterSetup} from '../../sdk/sandbox.js'
import type {ClusterSettings} from '../../sdk/target.js'
import type {YardContext} from '../kernel/context.js'
import type {Backends} from '../registry/backends.js'

import {InputError} from '../../sdk/errors.js'
import {NAME_PATTERN} from '../identity/identity.js'
import {imageReferenceProblem} from '../machine/image-reference.js'
import {clusterSettings} from '../sandbox/cluster-settings.js'
import {mainConfigIfAny} from '../workspace/workspace.js'

/** The agent image when `--image` is not given: what docs/cluster.md builds from deploy/Containerfile. */
export const defaultAgentImage = (version: string): string => `localhost/yard-agent:${version}`

/**
 * Checks an image reference given with `--image` (the distribution/reference grammar, core/machine/image-reference.ts).
 * @throws InputError (exit 2) naming the value and the expected form.
 */
export function validateImage(image: string): string {
  const problem = imageReferenceProblem(image)
  if (problem !== undefined) {
    throw new InputError(`invalid image reference ${JSON.stringify(image)}: ${problem}`, {
      why: 'an image is [registry[:port]/]name[:tag][@digest], the name in lower case',
      fix: 'pass --image like registry.example.com/team/yard-agent:0.1.0',
    })
  }

  return image
}

/**
 * The Kubernetes namespace outside a checkout: `YARD_NAMESPACE`, default `yard` (DESIGN.md §5.2).
 * @throws InputError (exit 2) when it is not a DNS-1123 label.
 */
export function namespaceFromEnv(context: YardContext): string {
  const namespace = context.env.YARD_NAMESPACE?.trim() || 'yard'
  if (namespace.length > 63 || !NAME_PATTERN.test(namespace)) {
    throw new InputError(`invalid Kubernetes namespace ${JSON.stringify(namespace)} from env YARD_NAMESPACE`, {
      why: 'a namespace is a DNS-1123 label: a-z, 0-9 and inner hyphens, at most 63 characters',
      fix: 'set YARD_NAMESPACE to the namespace yard cluster install used, or run the command in a checkout whose [cluster] namespace is set',
    })
  }

  return namespace
}

/**
 * The `[cluster]` settings and sandbox backend id: the checkout's config, or the environment
 * outside a checkout.
 * @throws InputError (exit 2) for invalid config or an invalid YARD_NAMESPACE.
 */
export async function clusterTarget(context: YardContext): Promise<{settings: ClusterSettings; backend: string}> {
  const config = await mainConfigIfAny(context)
  if (config) return {settings: clusterSettings({config}), backend: config.cluster.backend}
  const namespace = namespaceFromEnv(context)
  const kubeContext = context.env.YARD_KUBE_CONTEXT?.trim() || undefined
  return {
    settings: {
      namespace,
      cacheRoot: `/var/lib/yard/${namespace}/caches`,
      readyTimeoutMs: 120_000,
      cacheTimeoutMs: 600_000,
      ...(kubeContext && {context: kubeContext}),
    },
    backend: 'k8s-sandbox',
  }
}

/**
 * The cluster setup of the `[cluster] backend`, for those settings.
 * @throws InputError (exit 2) for an unknown backend or one without a cluster setup.
 */
export async function openClusterSetup(
  context: YardContext,
  backends: Backends,
): Promise<{setup: SandboxClusterSetup; settings: ClusterSettings}> {
  const {settings, backend: id} = await clusterTarget(context)
  const backend = await backends.sandbox(context, id, {cluster: settings})
  if (!backend.clusterSetup) {
    throw new InputError(`the sandbox backend ${id} has no cluster to install`, {
      why: 'yard cluster install and status set up what a cluster runtime needs; this backend does not declare one',
      fix: 'set [cluster] backend = "k8s-sandbox" in yard.toml',
    })
  }

  return {setup: await backend.clusterSetup(), settings}
}

export interface ClusterInstallRequest {
  /** `--image`, else `defaultAgentImage(version)`. */
  image?: string
  /** yard's version. */
  version: string
  /** Render only: no kubeconfig, no cluster. */
  dryRun: boolean
  onStep?: (step: ClusterInstallStep) => void
}

export interface ClusterInstallResult {
  namespace: string
  image: string
  /** The objects as multi-document YAML (what `--dry-run` prints). */
  yaml: string
  /** `{kind, name, namespace?}` of each object, in apply order. */
  objects: Array<{kind: string; name: string; namespace?: string}>
  /** What install did to each (empty with `dryRun`). */
  steps: ClusterInstallStep[]
}

/**
 * `yard cluster install [--dry-run] [--image IMAGE]` (DESIGN.md §5.2): renders the objects and,
 * unless `dryRun`, creates or updates each in order.
 * @throws InputError (exit 2) for a bad image, config or kubeconfig; OperationError (exit 1) when
 *   the cluster refuses or cannot be reached.
 */
export async function clusterInstall(
  context: YardContext,
  backends: Backends,
  request: ClusterInstallRequest,
): Promise<ClusterInstallResult> {
  const image = validateImage(request.image ?? defaultAgentImage(request.version))
  const {setup, settings} = await openClusterSetup(context, backends)
  const objects = setup.objects({image, version: request.version})
  const yaml = objects.map((object) => stringify(object, {lineWidth: 0})).join('---\n')
  const listed = objects.map((object) => {
    const metadata = object.metadata as {name: string; namespace?: string}
    return {kind: String(object.kind), name: metadata.name, ...(metadata.namespace && {namespace: metadata.namespace})}
  })
  const steps = request.dryRun ? [] : await setup.install({image, version: request.version, onStep: request.onStep})
  return {namespace: settings.namespace, image, yaml, objects: listed, steps}
}

/**
 * `yard cluster status` (DESIGN.md §5.2): the agent per node and every Repo's per-node state.
 * @throws InputError (exit 2) for config or kubeconfig; OperationError (exit 1) for the cluster.
 */
export async function clusterStatus(context: YardContext, backends: Backends): Promise<ClusterStatus> {
  const {setup} = await openClusterSetup(context, backends)
  return setup.status()
}
