/**
 * A node's kubelet for the kubernetes-runtime tests (DESIGN.md §8): plays a pod created through
 * the fake API server with real `podman kube play`, exactly as the cluster got it (hostPath
 * volumes, mounts, image) — what `FakeCluster.kubelet` runs once the pod is bound. Three things
 * podman 4.3 needs are changed: emptyDir volumes get the pod's name (`<pod>-<volume>`, else every
 * pod shares one named volume), annotations longer than 63 characters and the node affinity are
 * left out (podman refuses the first, ignores the second). The fake kubectl then runs in-pod
 * commands in it (fake-kubectl.mjs).
 */
import {execFile} from 'node:child_process'
import {writeFileSync} from 'node:fs'
import path from 'node:path'
import {promisify} from 'node:util'
import {stringify} from 'yaml'

import type {KubeObject} from '../../support/fake-kube-api/index.js'

import {CONTAINERS_CONF_TEXT} from '../../../src/core/machine/containers-conf.js'
import {tempDir} from '../../support/repo.js'

/** Plays `pod` with podman (async: the test process serves the fake API meanwhile). @throws when kube play fails. */
export async function playAsKubelet(pod: KubeObject): Promise<void> {
  const name = pod.metadata.name as string
  const emptyDirs = new Set(
    ((pod.spec.volumes ?? []) as KubeObject[])
      .filter((volume) => volume.emptyDir !== undefined)
      .map((volume) => volume.name as string),
  )
  const rename = (volume: string) => (emptyDirs.has(volume) ? `${name}-${volume}` : volume)
  const {affinity: _affinity, ...spec} = pod.spec as KubeObject
  const played = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      labels: pod.metadata.labels,
      annotations: Object.fromEntries(
        Object.entries((pod.metadata.annotations ?? {}) as Record<string, string>).filter(
          ([, value]) => value.length <= 63,
        ),
      ),
    },
    spec: {
      ...spec,
      volumes: ((spec.volumes ?? []) as KubeObject[]).map((volume) => ({
        ...volume,
        name: rename(volume.name as string),
      })),
      containers: (spec.containers as KubeObject[]).map((container) => ({
        ...container,
        volumeMounts: ((container.volumeMounts ?? []) as KubeObject[]).map((mount) => ({
          ...mount,
          name: rename(mount.name as string),
        })),
      })),
    },
  }
  const dir = tempDir('yard-kubelet')
  const file = path.join(dir, `${name}.yaml`)
  writeFileSync(file, stringify(played, {lineWidth: 0}))
  writeFileSync(path.join(dir, 'containers.conf'), CONTAINERS_CONF_TEXT)
  await promisify(execFile)('podman', ['kube', 'play', '--quiet', file], {
    env: {...process.env, CONTAINERS_CONF: path.join(dir, 'containers.conf')},
  })
}
