/**
 * Host-only sources on the kubernetes runtime (DESIGN.md §5.2, "Runtimes"; issue 23, acceptance
 * 4): a local path, a `file://` url and loopback hosts are refused with exit 2 before the
 * cluster is asked to create anything — no Repo, no pod. Against the fake API server; no podman.
 */
import {expect} from 'chai'
import {writeFileSync} from 'node:fs'
import path from 'node:path'

import {cleanupTemp} from '../../support/repo.js'
import {yard} from '../../support/yard.js'
import {FakeCluster, NAMESPACE} from './kubernetes-support.js'
import {makeApp, makeUpstream, type SandboxFixture} from './support.js'

describe('sandbox create --runtime kubernetes refuses sources only this machine can reach (acceptance 4)', function () {
  this.timeout(60_000)
  let cluster: FakeCluster
  let fixture: SandboxFixture
  let upstream: string

  before(async () => {
    cluster = await FakeCluster.start()
    upstream = makeUpstream('app')
    fixture = makeApp('yardtest-k4', 'WEB_PORT = 39700')
    writeFileSync(
      path.join(fixture.app, 'yard.local.toml'),
      '[cluster]\nready-timeout-seconds = 2\ncache-timeout-seconds = 2\n',
    )
  })

  after(async () => {
    await cluster.close()
    cleanupTemp()
  })

  const refused = () => [
    upstream,
    `file://${upstream}`,
    'http://localhost:8080/acme/app.git',
    'https://git.localhost/acme/app.git',
    'https://127.0.0.1/acme/app.git',
    'http://127.8.9.10:3000/acme/app.git',
    'http://[::1]:3000/acme/app.git',
    'https://localhost./acme/app.git',
    'https://LOCALHOST/acme/app.git',
    'http://0.0.0.0/acme/app.git',
  ]

  it('exits 2 naming the rule and the fix, and the cluster is asked to create nothing', async () => {
    for (const url of refused()) {
      const before = cluster.api.calls.length
      const run = await yard(
        ['sandbox', 'create', 'feat', '--runtime', 'kubernetes', '--image', 'yard-dev:test', '--repo', url],
        {cwd: fixture.app, env: {...fixture.env, ...cluster.env}},
      )
      expect(run.exitCode, `${url}: ${run.stderr}`).to.equal(2)
      expect(run.stderr).to.include('cannot be fetched by the cluster')
      expect(run.stderr).to.include('push it somewhere the cluster can fetch')
      const writes = cluster.api.calls.slice(before).filter((call) => call.verb !== 'get' && call.verb !== 'list')
      expect(writes, url).to.deep.equal([])
    }

    expect(cluster.api.objects('repos.yard.dev', NAMESPACE)).to.deep.equal([])
    expect(cluster.api.objects('pods', NAMESPACE)).to.deep.equal([])
  })

  it('a second --repo that is host-only refuses the whole create, the good one included', async () => {
    const run = await yard(
      [
        'sandbox',
        'create',
        'feat',
        '--runtime',
        'kubernetes',
        '--image',
        'yard-dev:test',
        '--repo',
        'https://git.example.com/acme/app.git',
        '--repo',
        `lib=file://${upstream}`,
      ],
      {cwd: fixture.app, env: {...fixture.env, ...cluster.env}},
    )
    expect(run.exitCode, run.stderr).to.equal(2)
    expect(cluster.api.objects('repos.yard.dev', NAMESPACE)).to.deep.equal([])
    expect(cluster.api.objects('pods', NAMESPACE)).to.deep.equal([])
  })
})
