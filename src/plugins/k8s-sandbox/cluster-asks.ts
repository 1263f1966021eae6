/**
 * Fetch-through on the kubernetes runtime (sdk/fetch-through.ts; DESIGN.md §5.1): a sandbox pod
 * asks its node's cache agent for a refresh through a directory of the node, per pod and per
 * cache it mounts, `<[cluster] cache-root>.asks/<pod>/<key>` (a `DirectoryOrCreate` hostPath
 * mounted writable at `/yard/asks/<key>`) — beside the cache root, not in it, so the pod can
 * write neither a cache nor another pod's asks. The agent's DaemonSet mounts the whole asks root
 * (cluster-objects.ts); the agent finds a pod's directories in the pod's own volumes, read from
 * its watch of the pods on its node (cache-demand.ts), so serving asks costs no API request.
 */
import {promises as fs} from 'node:fs'
import path from 'node:path'

import type {PodVolumes} from './cache-demand.js'

import {podAsksPath} from '../../sdk/fetch-through.js'
import {CACHE_KEY_PATTERN} from '../../sdk/repo-identity.js'

/** `<cache root>.asks`: where the asks directories of every pod on a node live. */
export function clusterAsksRoot(cacheRoot: string): string {
  return `${path.posix.normalize(cacheRoot).replace(/\/+$/, '')}.asks`
}

/** Phases of a pod that has ended (Kubernetes docs, "Pod phase"): its asks are not served. */
const ENDED_PHASES = new Set(['Succeeded', 'Failed'])

/** A pod name as the API allows it (a DNS subdomain): never `.`, `..` or a path. */
const POD_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/

/**
 * The Pod with an asks volume per cache key of its repositories (`keys`, not their submodules'):
 * hostPath `<asks root>/<pod>/<key>` (`DirectoryOrCreate`: the kubelet makes it when the agent has
 * not yet), mounted at `/yard/asks/<key>` in the workspace container.
 */
export function withClusterAsks(
  manifest: Record<string, unknown>,
  cacheRoot: string,
  keys: string[],
): Record<string, unknown> {
  const {name} = manifest.metadata as {name: string}
  const spec = manifest.spec as {
    volumes: Array<Record<string, unknown>>
    containers: Array<{volumeMounts?: Array<Record<string, unknown>>}>
  }
  const [workspace, ...rest] = spec.containers
  const unique = [...new Set(keys)]
  return {
    ...manifest,
    spec: {
      ...spec,
      volumes: [
        ...spec.volumes,
        ...unique.map((key) => ({
          name: `asks-${key}`,
          hostPath: {path: path.posix.join(clusterAsksRoot(cacheRoot), name, key), type: 'DirectoryOrCreate'},
        })),
      ],
      containers: [
        {
          ...workspace,
          volumeMounts: [
            ...(workspace.volumeMounts ?? []),
            ...unique.map((key) => ({name: `asks-${key}`, mountPath: podAsksPath(key)})),
          ],
        },
        ...rest,
      ],
    },
  }
}

/** One asks directory of a pod on this node. */
export interface PodAskDir {
  pod: string
  key: string
  dir: string
}

/**
 * The asks directories of the pods that have not ended: hostPath volumes on
 * `<asks root>/<the pod's own name>/<key>`, `key` named like a cache. A volume naming another
 * pod's directory is not one (each pod asks in its own).
 */
export function podAskDirs(pods: readonly PodVolumes[], cacheRoot: string): PodAskDir[] {
  const root = clusterAsksRoot(cacheRoot)
  const found: PodAskDir[] = []
  for (const pod of pods) {
    const name = pod.metadata?.name ?? ''
    if (!POD_NAME.test(name) || ENDED_PHASES.has(pod.status?.phase ?? '')) continue
    for (const volume of pod.spec?.volumes ?? []) {
      const hostPath = volume.hostPath?.path
      if (!hostPath) continue
      const normalised = path.posix.normalize(hostPath).replace(/\/+$/, '')
      const key = path.posix.basename(normalised)
      if (path.posix.dirname(normalised) === path.posix.join(root, name) && CACHE_KEY_PATTERN.test(key))
        found.push({pod: name, key, dir: normalised})
    }
  }

  return found
}

/** How often at most leftovers of pods gone are looked for with a fresh list, in ms. */
const SWEEP_EVERY_MS = 60_000

/**
 * The node's side of the asks directories: `ready` makes each directory of a pod seen (once) and
 * opens it to the pod's user, whoever the image runs as (the kubelet makes a hostPath directory
 * 0755 for root); `sweep` removes the directories of pods no longer on the node, checked against
 * `livePods` (a fresh list) first, at most once a minute, and only when there are such leftovers.
 */
export class NodeAsks {
  private readonly made = new Set<string>()
  private lastSweep = 0

  constructor(private readonly cacheRoot: string) {}

  /** The directories of `dirs` made and writable; one that cannot be made is left out. */
  async ready(dirs: PodAskDir[]): Promise<PodAskDir[]> {
    const usable: PodAskDir[] = []
    for (const entry of dirs) {
      if (!this.made.has(entry.dir)) {
        const made = await fs
          .mkdir(entry.dir, {recursive: true})
          .then(async () => fs.chmod(entry.dir, 0o777))
          .then(
            () => true,
            () => false,
          )
        if (!made) continue
        this.made.add(entry.dir)
      }

      usable.push(entry)
    }

    return usable
  }

  /** Removes `<asks root>/<pod>` of pods neither in `seen` (the watch's) nor in `livePods()`. */
  async sweep(seen: readonly PodAskDir[], livePods: () => Promise<readonly PodVolumes[]>): Promise<void> {
    if (Date.now() - this.lastSweep < SWEEP_EVERY_MS) return
    const root = clusterAsksRoot(this.cacheRoot)
    const names = new Set(seen.map((entry) => entry.pod))
    const leftovers = (await fs.readdir(root).catch(() => [] as string[])).filter((name) => !names.has(name))
    if (leftovers.length === 0) return
    this.lastSweep = Date.now()
    const live = new Set(podAskDirs(await livePods(), this.cacheRoot).map((entry) => entry.pod))
    for (const name of leftovers.filter((leftover) => !live.has(leftover))) {
      const dir = path.join(root, name)
      await fs.rm(dir, {recursive: true, force: true}).catch(() => undefined)
      for (const made of this.made) if (made.startsWith(`${dir}/`)) this.made.delete(made)
    }
  }
}
