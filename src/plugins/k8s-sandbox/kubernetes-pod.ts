/**
 * What the `kubernetes` runtime adds to the sandbox Pod and reads back from a cluster (DESIGN.md
 * §5.2): the soft node affinity toward nodes holding the caches, Ready and its diagnostics, and
 * the RuntimePod view of a cluster Pod. Pure functions over plain objects, so they are tested
 * without a cluster.
 */
import type {CoreV1Event, V1Pod} from '@kubernetes/client-node'

import type {SandboxSpec} from '../../sdk/sandbox.js'
import type {RuntimePod} from './runtime.js'

import {PROJECT_LABEL} from '../../sdk/labels.js'
import {SPEC_ANNOTATION} from './manifest.js'
import {WARM_ANNOTATION} from './pool-labels.js'

type Json = Record<string, unknown>

/** A Pod condition as the API reports it. */
export interface PodCondition {
  type: string
  status: string
  reason?: string
  message?: string
}

/** A core/v1 Event, reduced to what a message needs. */
export interface PodEvent {
  type?: string
  reason?: string
  message?: string
  count?: number
  time?: string
}

/**
 * The manifest with a soft node affinity (DESIGN.md §5.2; Kubernetes "Assigning Pods to Nodes",
 * preferredDuringSchedulingIgnoredDuringExecution): per cache key one preferred term of weight 1
 * matching, by `metadata.name`, the nodes whose Repo status says the cache is present, so a node
 * holding more of the caches scores higher. Never a required term: a pod must schedule on a node
 * without the caches, whose agent then clones them. Keys no node holds add no term (an `In`
 * with no values is invalid). Without any term the manifest is returned unchanged.
 */
export function withCacheAffinity(
  manifest: Record<string, unknown>,
  presentNodes: Record<string, string[]>,
): Record<string, unknown> {
  const terms = Object.keys(presentNodes)
    .sort()
    .filter((key) => presentNodes[key].length > 0)
    .map((key) => ({
      weight: 1,
      preference: {matchFields: [{key: 'metadata.name', operator: 'In', values: [...presentNodes[key]].sort()}]},
    }))
  if (terms.length === 0) return manifest
  const spec = manifest.spec as Json
  return {
    ...manifest,
    spec: {...spec, affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: terms}}},
  }
}

/** The SandboxSpec a manifest was made from (its `yard.dev/spec` annotation). */
export function specOf(manifest: Record<string, unknown>): SandboxSpec {
  const annotations = ((manifest.metadata as Json | undefined)?.annotations ?? {}) as Record<string, string>
  return JSON.parse(annotations[SPEC_ANNOTATION] ?? 'null') as SandboxSpec
}

/** Whether the Pod's `Ready` condition is `True`. */
export function isReady(pod: V1Pod): boolean {
  return conditionsOf(pod).some((condition) => condition.type === 'Ready' && condition.status === 'True')
}

export function conditionsOf(pod: V1Pod): PodCondition[] {
  return (pod.status?.conditions ?? []).map(({type, status, reason, message}) => ({type, status, reason, message}))
}

/** Why each container is not running (`ErrImagePull: …`), from the Pod's container statuses. */
export function waitingReasons(pod: V1Pod): string[] {
  return (pod.status?.containerStatuses ?? []).flatMap((status) => {
    const waiting = status.state?.waiting ?? status.state?.terminated
    return waiting?.reason ? [`${status.name}: ${waiting.reason}${waiting.message ? `: ${waiting.message}` : ''}`] : []
  })
}

/**
 * "Ready=False (ContainersNotReady: …); PodScheduled=True" and the recent events, newest last,
 * as the `why` of a failed create: what `kubectl describe pod` would show first.
 */
export function describePodState(pod: V1Pod | undefined, events: PodEvent[]): string {
  const conditions = pod ? conditionsOf(pod) : []
  const lines = [
    `phase ${pod?.status?.phase ?? 'unknown'}${pod?.spec?.nodeName ? ` on node ${pod.spec.nodeName}` : ', not scheduled'}`,
    `conditions: ${conditions.length === 0 ? 'none reported' : conditions.map((condition) => `${condition.type}=${condition.status}${condition.reason ? ` (${condition.reason}${condition.message ? `: ${condition.message}` : ''})` : ''}`).join('; ')}`,
    ...(pod ? waitingReasons(pod).map((reason) => `container ${reason}`) : []),
    events.length === 0
      ? 'events: none'
      : `events:\n${events.map((event) => `    ${[event.time, event.type ?? 'Normal', event.reason].filter(Boolean).join(' ')}${event.count && event.count > 1 ? ` (x${event.count})` : ''}: ${event.message ?? ''}`).join('\n')}`,
  ]
  return lines.join('\n  ')
}

/** core/v1 Events in time order, the last `limit`. */
export function recentEvents(items: CoreV1Event[], limit = 10): PodEvent[] {
  return items
    .map((item) => ({
      type: item.type,
      reason: item.reason,
      message: item.message,
      count: item.count,
      time: stamp(item.lastTimestamp ?? item.eventTime ?? item.firstTimestamp ?? item.metadata?.creationTimestamp),
    }))
    .sort((a, b) => (a.time ?? '').localeCompare(b.time ?? ''))
    .slice(-limit)
}

function stamp(value: unknown): string | undefined {
  if (value instanceof Date) return value.toISOString()
  return typeof value === 'string' ? value : undefined
}

/**
 * A cluster Pod as a RuntimePod: phase as reported (`Unknown` when absent). A sandbox claimed from
 * a warm pool (its `yard.dev/warm` annotation; kube-pool.ts) keeps the pool pod's name: it is
 * named by its `yard.dev/project` label, as a cold pod of that project is.
 */
export function runtimePodOf(pod: V1Pod): RuntimePod {
  const claimed = pod.metadata?.annotations?.[WARM_ANNOTATION] !== undefined
  return {
    name: String((claimed && pod.metadata?.labels?.[PROJECT_LABEL]) || pod.metadata?.name),
    phase: String(pod.status?.phase ?? 'Unknown'),
    labels: pod.metadata?.labels ?? {},
    annotations: pod.metadata?.annotations ?? {},
    ...(pod.spec?.nodeName && {node: pod.spec.nodeName}),
  }
}
