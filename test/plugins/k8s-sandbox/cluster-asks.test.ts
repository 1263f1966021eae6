/**
 * The node's side of kubernetes fetch-through (cluster-asks.ts): which hostPath volumes are a
 * pod's asks directories (its own, of a cache, a pod that has not ended), the volumes a create
 * adds, and the sweep of directories whose pod is gone, checked against a fresh list first.
 */
import {expect} from 'chai'
import {existsSync, mkdirSync, statSync} from 'node:fs'
import path from 'node:path'

import type {PodVolumes} from '../../../src/plugins/k8s-sandbox/cache-demand.js'

import {clusterAsksRoot, NodeAsks, podAskDirs, withClusterAsks} from '../../../src/plugins/k8s-sandbox/cluster-asks.js'
import {cleanupTemp, tempDir} from '../../support/repo.js'

const KEY = 'app-1a2b3c4d'
const pod = (name: string, paths: string[], phase = 'Running'): PodVolumes => ({
  metadata: {name},
  spec: {volumes: paths.map((hostPath) => ({hostPath: {path: hostPath}}))},
  status: {phase},
})

describe('cluster asks: the asks directories of the pods on a node', () => {
  after(() => cleanupTemp())

  it('adds one writable asks volume per cache key beside the cache root, and finds it back', () => {
    const manifest = {
      metadata: {name: 'app-feat'},
      spec: {
        volumes: [{name: 'work', emptyDir: {}}],
        containers: [{name: 'workspace', volumeMounts: [{name: 'work', mountPath: '/work'}]}],
      },
    }
    const played = withClusterAsks(manifest, '/var/lib/yard/yard/caches/', [KEY, KEY]) as {
      spec: {volumes: unknown[]; containers: Array<{volumeMounts: unknown[]}>}
    }
    expect(played.spec.volumes).to.deep.equal([
      {name: 'work', emptyDir: {}},
      {
        name: `asks-${KEY}`,
        hostPath: {path: `/var/lib/yard/yard/caches.asks/app-feat/${KEY}`, type: 'DirectoryOrCreate'},
      },
    ])
    expect(played.spec.containers[0].volumeMounts).to.deep.equal([
      {name: 'work', mountPath: '/work'},
      {name: `asks-${KEY}`, mountPath: `/yard/asks/${KEY}`},
    ])
    expect(podAskDirs([played as PodVolumes], '/var/lib/yard/yard/caches')).to.deep.equal([
      {pod: 'app-feat', key: KEY, dir: `/var/lib/yard/yard/caches.asks/app-feat/${KEY}`},
    ])
  })

  it("counts only a pod's own directories of cache-named keys, of pods that have not ended", () => {
    const root = '/r/caches'
    const asks = clusterAsksRoot(root)
    const pods = [
      pod('a', [
        `${root}/${KEY}`,
        `${asks}/a/${KEY}`,
        `${asks}/b/${KEY}`,
        `${asks}/a/not-a-key`,
        `${asks}/a/../b/${KEY}`,
      ]),
      pod('done', [`${asks}/done/${KEY}`], 'Succeeded'),
    ]
    expect(podAskDirs(pods, root)).to.deep.equal([{pod: 'a', key: KEY, dir: `${asks}/a/${KEY}`}])
  })

  it('makes the directories writable for any user, and sweeps those of pods gone after a fresh list', async () => {
    const root = path.join(tempDir('yard-node'), 'caches')
    const asks = clusterAsksRoot(root)
    const node = new NodeAsks(root)
    const live = pod('live', [`${asks}/live/${KEY}`])
    const seen = podAskDirs([live], root)
    expect(await node.ready(seen)).to.deep.equal(seen)
    expect(statSync(`${asks}/live/${KEY}`).mode & 0o777).to.equal(0o777)
    // gone: deleted; late: bound to the node, its directory made by the kubelet, not yet in the watch.
    for (const name of ['gone', 'late']) mkdirSync(`${asks}/${name}/${KEY}`, {recursive: true})
    let lists = 0
    await node.sweep(seen, async () => {
      lists++
      return [live, pod('late', [`${asks}/late/${KEY}`])]
    })
    expect([lists, existsSync(`${asks}/gone`), existsSync(`${asks}/late`), existsSync(`${asks}/live`)]).to.deep.equal([
      1,
      false,
      true,
      true,
    ])
    // Within a minute of a sweep, no list again.
    await node.sweep(seen, async () => {
      lists++
      return []
    })
    expect(lists).to.equal(1)
  })
})
