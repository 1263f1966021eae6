/**
 * The pure parts of the kubernetes runtime (DESIGN.md §5.2): the soft cache affinity, the kubectl
 * argv (words that would be flags refused before anything runs) and the Ready diagnostics.
 */
import {expect} from 'chai'

import {mountedCacheKeys} from '../../../src/plugins/k8s-sandbox/cache-demand.js'
import {copyOutArgv, execArgv, portForwardArgv, WORKDIR_SCRIPT} from '../../../src/plugins/k8s-sandbox/kubectl.js'
import {describePodState, recentEvents, withCacheAffinity} from '../../../src/plugins/k8s-sandbox/kubernetes-pod.js'
import {InputError} from '../../../src/sdk/errors.js'

const target = {context: 'kind-dev', namespace: 'yard'}
const manifest = {apiVersion: 'v1', kind: 'Pod', metadata: {name: 'app-feat'}, spec: {containers: []}}

describe('kubernetes runtime: pod additions and kubectl argv (DESIGN.md §5.2)', () => {
  it('gives one preferred term of weight 1 per cache key that some node holds, never a required one', () => {
    const pod = withCacheAffinity(manifest, {
      'lib-1234abcd': ['node-b', 'node-a'],
      'app-0badc0de': ['node-a'],
      'new-00000000': [],
    }) as {spec: {affinity: unknown}}
    expect(pod.spec.affinity).to.deep.equal({
      nodeAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          {weight: 1, preference: {matchFields: [{key: 'metadata.name', operator: 'In', values: ['node-a']}]}},
          {
            weight: 1,
            preference: {matchFields: [{key: 'metadata.name', operator: 'In', values: ['node-a', 'node-b']}]},
          },
        ],
      },
    })
    expect(withCacheAffinity(manifest, {'new-00000000': []})).to.equal(manifest)
  })

  it('wraps the working directory in the fixed sh -c script and keeps the user words as arguments', () => {
    expect(
      execArgv(target, 'app-feat', ['git', 'log', '$(id)'], {workdir: '/work/app/feat', stdin: true, tty: true}),
    ).to.deep.equal([
      '--context',
      'kind-dev',
      '--namespace',
      'yard',
      'exec',
      '-it',
      'app-feat',
      '-c',
      'workspace',
      '--',
      'sh',
      '-c',
      WORKDIR_SCRIPT,
      'sh',
      '/work/app/feat',
      'git',
      'log',
      '$(id)',
    ])
    expect(execArgv(target, 'app-feat', ['git', 'status'], {env: {GIT_INDEX_FILE: '/tmp/i'}})).to.deep.equal([
      '--context',
      'kind-dev',
      '--namespace',
      'yard',
      'exec',
      'app-feat',
      '-c',
      'workspace',
      '--',
      'env',
      'GIT_INDEX_FILE=/tmp/i',
      'git',
      'status',
    ])
    expect(portForwardArgv(target, 'app-feat', [{key: 'WEB_PORT', local: 3059, container: 3000}])).to.deep.equal([
      '--context',
      'kind-dev',
      '--namespace',
      'yard',
      'port-forward',
      'pod/app-feat',
      '3059:3000',
    ])
  })

  it('refuses words kubectl would read as flags, relative paths and host paths holding ":"', () => {
    expect(() => execArgv({context: '--kubeconfig=/x', namespace: 'yard'}, 'app-feat', ['true'])).to.throw(
      InputError,
      'kube context',
    )
    expect(() => execArgv(target, '-app', ['true'])).to.throw(InputError, 'pod name')
    expect(() => execArgv(target, 'app-feat', ['true'], {workdir: 'work'})).to.throw(InputError, 'not absolute')
    expect(() => execArgv(target, 'app-feat', [])).to.throw(InputError, 'no command')
    expect(() => copyOutArgv(target, 'app-feat', '/tmp/a.bundle', '/state/x:y/a.bundle')).to.throw(
      InputError,
      'holds ":"',
    )
    expect(copyOutArgv(target, 'app-feat', '/tmp/a.bundle', '/state/a.bundle')).to.deep.equal([
      '--context',
      'kind-dev',
      '--namespace',
      'yard',
      'cp',
      '-c',
      'workspace',
      'app-feat:/tmp/a.bundle',
      '/state/a.bundle',
    ])
  })

  it('describes a stuck pod by phase, conditions, container reasons and the newest events last', () => {
    const pod = {
      spec: {nodeName: 'node-a', containers: []},
      status: {
        phase: 'Pending',
        conditions: [
          {
            type: 'Ready',
            status: 'False',
            reason: 'ContainersNotReady',
            message: 'containers with unready status: [workspace]',
          },
        ],
        containerStatuses: [
          {
            name: 'workspace',
            image: 'x',
            imageID: '',
            ready: false,
            restartCount: 0,
            state: {waiting: {reason: 'ErrImagePull', message: 'pull access denied'}},
          },
        ],
      },
    }
    const events = recentEvents([
      {
        involvedObject: {},
        metadata: {},
        type: 'Warning',
        reason: 'Failed',
        message: 'Error: ErrImagePull',
        lastTimestamp: new Date('2026-11-29T11:00:05Z'),
      },
      {
        involvedObject: {},
        metadata: {},
        type: 'Normal',
        reason: 'Pulling',
        message: 'Pulling image "x"',
        lastTimestamp: new Date('2026-11-29T11:00:01Z'),
      },
    ])
    expect(describePodState(pod, events)).to.equal(
      [
        'phase Pending on node node-a',
        '  conditions: Ready=False (ContainersNotReady: containers with unready status: [workspace])',
        '  container workspace: ErrImagePull: pull access denied',
        '  events:',
        '    2026-11-29T11:00:01.000Z Normal Pulling: Pulling image "x"',
        '    2026-11-29T11:00:05.000Z Warning Failed: Error: ErrImagePull',
      ].join('\n'),
    )
  })

  it('finds the cache keys a pod mounts directly under the cache root', () => {
    const pod = {
      spec: {
        containers: [],
        volumes: [
          {name: 'a', hostPath: {path: '/var/lib/yard/yard/caches/app-0badc0de'}},
          {name: 'b', hostPath: {path: '/var/lib/yard/yard/caches/x/y'}},
          {name: 'c', hostPath: {path: '/elsewhere/lib-1234abcd'}},
          {name: 'work', emptyDir: {}},
        ],
      },
    }
    expect([...mountedCacheKeys([pod], '/var/lib/yard/yard/caches')]).to.deep.equal(['app-0badc0de'])
  })
})
