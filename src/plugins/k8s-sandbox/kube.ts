import type * as k8s from '@kubernetes/client-node'

/**
 * The one way yard talks to a Kubernetes API server (DESIGN.md §5.2, "Runtimes"): a kubeconfig
 * and context chosen like kubectl does, typed client-node API clients for `[cluster] namespace`,
 * and client-node's failures turned into yard errors that say what, why and how to fix.
 *
 * `@kubernetes/client-node` is 56 MB: it is imported on the first `openKube`, never when a
 * command module loads (DESIGN.md §9). Only its types are imported at the top.
 */
import {existsSync} from 'node:fs'
import path from 'node:path'

import {InputError, OperationError, YardError} from '../../sdk/errors.js'
import {shellQuote} from '../../sdk/shell.js'

/**
 * Which cluster and namespace: `[cluster] context` (undefined: the kubeconfig's current one) and
 * `[cluster] namespace`.
 */
export interface KubeTarget {
  context?: string
  namespace: string
  /**
   * Another way out, added to the fix of a missing kubeconfig when the caller has one (the
   * sandbox commands: "use --runtime podman"); the cluster commands and the agent have none.
   */
  otherwise?: string
}

/** An open connection: the typed clients, all bound to one context. */
export interface Kube {
  /** The client-node module itself (Watch, PatchStrategy, models), loaded once. */
  lib: typeof k8s
  config: k8s.KubeConfig
  /** The context in use: the requested one, the kubeconfig's current one, or `inClusterContext`. */
  context: string
  /** The API server's url, for messages. */
  server: string
  namespace: string
  core: k8s.CoreV1Api
  apps: k8s.AppsV1Api
  rbac: k8s.RbacAuthorizationV1Api
  apiextensions: k8s.ApiextensionsV1Api
  custom: k8s.CustomObjectsApi
  /**
   * Request options that send a patch as `application/merge-patch+json` (RFC 7386). Pass as the
   * second argument of any `patch…` call; client-node's default is a JSON patch (RFC 6902).
   */
  mergePatch: k8s.ConfigurationOptions
}

let clientNode: Promise<typeof k8s> | undefined

/** client-node, imported on first use (56 MB; DESIGN.md §9). */
export async function loadClientNode(): Promise<typeof k8s> {
  clientNode ??= import('@kubernetes/client-node')
  return clientNode
}

/**
 * The kubeconfig files kubectl would read: every entry of `KUBECONFIG` (`:`-separated) that
 * exists, else `~/.kube/config` when it exists, else none.
 */
export function kubeconfigFiles(env: NodeJS.ProcessEnv): string[] {
  const listed = (env.KUBECONFIG ?? '').split(path.delimiter).filter((file) => file !== '')
  if (listed.length > 0) return listed.filter((file) => existsSync(file))
  const home = env.HOME ?? env.USERPROFILE
  const fallback = home ? path.join(home, '.kube', 'config') : undefined
  return fallback && existsSync(fallback) ? [fallback] : []
}

/**
 * Opens the cluster of `target`: loads the kubeconfig (`KUBECONFIG` or `~/.kube/config`, merged
 * like kubectl: the first file that names a current context wins; inside a pod with no
 * kubeconfig, the pod's service account), selects `target.context` or the current context, and
 * builds the API clients. Nothing is sent to the server yet.
 * @throws InputError (exit 2) when no kubeconfig is found, a file cannot be read or parsed, there
 *   is no current context and none was asked for, or the asked context does not exist — naming
 *   the context, the files read and the fix.
 */
export async function openKube(target: KubeTarget, env: NodeJS.ProcessEnv): Promise<Kube> {
  const lib = await loadClientNode()
  const config = new lib.KubeConfig()
  const files = kubeconfigFiles(env)
  if (files.length === 0) {
    if (env.KUBERNETES_SERVICE_HOST && target.context === undefined) {
      config.loadFromCluster()
    } else {
      const looked = env.KUBECONFIG ? `KUBECONFIG (${env.KUBECONFIG})` : '~/.kube/config'
      throw new InputError(
        `no kubeconfig found for ${target.context ? `kube context "${target.context}"` : 'the kubernetes runtime'}`,
        {
          why: `yard reads clusters from ${looked}, like kubectl, and found no file there`,
          fix: `point KUBECONFIG at your cluster's kubeconfig (kind: \`kind export kubeconfig --name NAME\`)${target.otherwise ? `, or ${target.otherwise}` : ''}`,
        },
      )
    }
  } else {
    for (const [index, file] of files.entries()) {
      try {
        if (index === 0) {
          config.loadFromFile(file)
        } else {
          const more = new lib.KubeConfig()
          more.loadFromFile(file)
          config.mergeConfig(more, config.getCurrentContext() !== '')
        }
      } catch (error) {
        throw new InputError(`cannot read the kubeconfig ${file}: ${(error as Error).message}`, {
          why: 'the file is not a kubeconfig client-node can load (YAML with clusters, users and contexts, unique names across KUBECONFIG files)',
          fix: `check ${file} with \`kubectl config view --kubeconfig ${shellQuote(file)}\``,
        })
      }
    }
  }

  const known = config.getContexts().map((context) => context.name)
  const context = target.context ?? config.getCurrentContext()
  const where = files.length > 0 ? files.join(', ') : 'the in-cluster configuration'
  if (!context) {
    throw new InputError(`the kubeconfig has no current context (${where})`, {
      why: known.length > 0 ? `known contexts: ${known.join(', ')}` : 'it lists no contexts at all',
      fix: 'set [cluster] context in yard.toml (or YARD_KUBE_CONTEXT), or run `kubectl config use-context NAME`',
    })
  }

  if (!known.includes(context)) {
    throw new InputError(`kube context "${context}" not found in ${where}`, {
      why: known.length > 0 ? `known contexts: ${known.join(', ')}` : 'the kubeconfig lists no contexts',
      fix: 'set [cluster] context (or YARD_KUBE_CONTEXT) to one of them, or add the context with `kubectl config set-context`',
    })
  }

  config.setCurrentContext(context)
  const cluster = config.getCurrentCluster()
  if (!cluster) {
    throw new InputError(`kube context "${context}" names a cluster that is not in ${where}`, {
      fix: `check the context with \`kubectl config get-contexts ${shellQuote(context)}\``,
    })
  }

  return {
    lib,
    config,
    context,
    server: cluster.server,
    namespace: target.namespace,
    core: config.makeApiClient(lib.CoreV1Api),
    apps: config.makeApiClient(lib.AppsV1Api),
    rbac: config.makeApiClient(lib.RbacAuthorizationV1Api),
    apiextensions: config.makeApiClient(lib.ApiextensionsV1Api),
    custom: config.makeApiClient(lib.CustomObjectsApi),
    mergePatch: lib.setHeaderOptions('Content-Type', lib.PatchStrategy.MergePatch),
  }
}

/**
 * Request options that abort the request when `signal` fires: its connection is closed, so a
 * cluster that accepts connections but never answers keeps nothing running after the caller's
 * budget (DESIGN.md §3.4). Pass as the second argument of any API call; the middleware of
 * `options` (e.g. `kube.mergePatch`) is kept.
 */
export function abortOn(
  kube: Pick<Kube, 'lib'>,
  signal: AbortSignal,
  options: k8s.ConfigurationOptions = {},
): k8s.ConfigurationOptions {
  const abort: k8s.ObservableMiddleware = {
    pre(request) {
      request.setSignal(signal)
      return new kube.lib.Observable(Promise.resolve(request))
    },
    post: (response) => new kube.lib.Observable(Promise.resolve(response)),
  }
  return {...options, middleware: [...(options.middleware ?? []), abort], middlewareMergeStrategy: 'append'}
}

/** The request was aborted through `abortOn` (its budget ran out). */
export const isAborted = (error: unknown): boolean => (error as {name?: unknown})?.name === 'AbortError'

/** A Kubernetes `Status` as found in an error response's body. */
export interface KubeStatus {
  code: number
  reason?: string
  message?: string
}

/**
 * The HTTP status and the server's `Status` of a client-node `ApiException` (its body is the
 * response text), or undefined when `error` is not an API answer (e.g. the server is unreachable).
 */
export function apiStatus(error: unknown): KubeStatus | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  const {code, body} = error as {code?: unknown; body?: unknown}
  if (typeof code !== 'number' || !('body' in error)) return undefined
  let parsed: unknown = body
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body)
    } catch {
      parsed = undefined
    }
  }

  const status = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as {reason?: unknown; message?: unknown}
  return {
    code,
    reason: typeof status.reason === 'string' ? status.reason : undefined,
    message:
      typeof status.message === 'string'
        ? status.message
        : typeof body === 'string' && body !== '' && parsed === undefined
          ? body
          : undefined,
  }
}

/** The server answered 404 Not Found. */
export const isNotFound = (error: unknown): boolean => apiStatus(error)?.code === 404
/**
 * A 404 about the kind itself, not an object: the server has no such resource (a CRD that was
 * never installed). Its Status message is "the server could not find the requested resource".
 */
export const isMissingKind = (error: unknown): boolean => {
  const status = apiStatus(error)
  return status?.code === 404 && (status.message ?? '').includes('could not find the requested resource')
}

/** The server answered 409 (AlreadyExists, or a Conflict on a stale resourceVersion). */
export const isConflict = (error: unknown): boolean => apiStatus(error)?.code === 409

const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
])

/**
 * The yard error for a failed API call. `what` says what yard was doing ("create Pod yard/app-feat").
 * 401/403 say which credentials lack which permission; 404 of a kind (not an object) points at
 * `yard cluster install`; 409 and 422 carry the server's message; an unreachable server names
 * the context and its url. A YardError passes through unchanged.
 */
export function kubeError(
  error: unknown,
  what: string,
  kube: Pick<Kube, 'context' | 'server' | 'namespace'>,
): YardError {
  if (error instanceof YardError) return error
  const status = apiStatus(error)
  const said = status?.message ? `: ${status.message}` : ''
  if (status) {
    switch (status.code) {
      case 401: {
        return new OperationError(`${what}: the API server refused the credentials of kube context "${kube.context}"`, {
          why: 'the token or certificate is missing, expired or not trusted by the cluster',
          fix: `refresh the credentials (\`kubectl --context ${shellQuote(kube.context)} get ns\` shows what kubectl gets)`,
          cause: error,
        })
      }

      case 403: {
        return new OperationError(`${what}: forbidden${said}`, {
          why: `the user of kube context "${kube.context}" lacks an RBAC permission in namespace "${kube.namespace}"`,
          fix: `ask a cluster admin for it (\`kubectl --context ${shellQuote(kube.context)} auth can-i --list -n ${kube.namespace}\` lists yours); docs/cluster.md lists what yard needs`,
          cause: error,
        })
      }

      case 404: {
        return new OperationError(`${what}: not found${said}`, {
          why: isMissingKind(error)
            ? "the cluster does not know this kind: yard's objects are not installed"
            : undefined,
          fix: `check the namespace "${kube.namespace}" and run \`yard cluster install\` if the cluster is new`,
          cause: error,
        })
      }

      case 409: {
        return new OperationError(`${what}: conflict${said}`, {
          why: 'the object already exists or changed meanwhile',
          fix: 'run the command again',
          cause: error,
        })
      }

      case 422: {
        return new OperationError(`${what}: the API server rejected the object${said}`, {
          why: "its body does not pass the cluster's schema (a yard bug, or a cluster too old for it)",
          fix: 'run with --verbose and report it',
          cause: error,
        })
      }

      default: {
        return new OperationError(
          `${what}: the API server answered ${status.code}${status.reason ? ` ${status.reason}` : ''}${said}`,
          {fix: "run the command again; `kubectl get --raw /readyz` shows the server's health", cause: error},
        )
      }
    }
  }

  if (isAborted(error)) {
    return new OperationError(
      `${what}: the Kubernetes API server ${kube.server} (kube context "${kube.context}") did not answer in time`,
      {
        why: 'it accepts connections but sends no answer (an overloaded or half-started server, or a proxy in the way)',
        fix: `check the cluster is healthy (\`kubectl --context ${shellQuote(kube.context)} get --raw /readyz\`), or choose another context with [cluster] context / YARD_KUBE_CONTEXT`,
        cause: error,
      },
    )
  }

  // client-node 2 calls undici's fetch, whose TypeError "fetch failed" carries the socket's error as `cause`.
  const socketError = (error as {cause?: unknown})?.cause instanceof Error ? (error as {cause: Error}).cause : error
  const code = (socketError as {code?: unknown; errno?: unknown})?.code ?? (socketError as {errno?: unknown})?.errno
  const message = (socketError as Error)?.message ?? String(error)
  if (typeof code === 'string' && UNREACHABLE.has(code)) {
    return new OperationError(
      `${what}: cannot reach the Kubernetes API server ${kube.server} (kube context "${kube.context}")`,
      {
        why: message,
        fix: `check the cluster is running (\`kubectl --context ${shellQuote(kube.context)} cluster-info\`), or choose another context with [cluster] context / YARD_KUBE_CONTEXT`,
        cause: error,
      },
    )
  }

  return new OperationError(`${what}: ${message}`, {
    why: `talking to ${kube.server} (kube context "${kube.context}")`,
    fix: 'run the command again with --verbose',
    cause: error,
  })
}

/**
 * Runs one API call, turning its failure into a yard error (see `kubeError`).
 * @throws YardError from `kubeError`.
 */
export async function kubeCall<T>(
  kube: Pick<Kube, 'context' | 'server' | 'namespace'>,
  what: string,
  call: () => Promise<T>,
): Promise<T> {
  try {
    return await call()
  } catch (error) {
    throw kubeError(error, what, kube)
  }
}

/**
 * Like `kubeCall` for a read: an object's 404 Not Found resolves to undefined.
 * @throws YardError from `kubeError` for every other failure, a kind the server does not know included.
 */
export async function kubeGet<T>(
  kube: Pick<Kube, 'context' | 'server' | 'namespace'>,
  what: string,
  call: () => Promise<T>,
): Promise<T | undefined> {
  try {
    return await call()
  } catch (error) {
    if (isNotFound(error) && !isMissingKind(error)) return undefined
    throw kubeError(error, what, kube)
  }
}
