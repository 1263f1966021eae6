/**
 * Two `yard sandbox create` of one name at once (real podman kube play): one create of a name at
 * a time, so the second waits, then is refused (exit 2) with nothing of the first touched — its
 * pod running, its lease on the cache kept. Without the name's lock both made a pod of one name:
 * the loser's failed play removed the pod by name (the winner's), and its clean-up released the
 * winner's lease (the same borrower), so neither sandbox was left.
 */
import {expect} from 'chai'
import {existsSync} from 'node:fs'
import path from 'node:path'

import {repoIdentity} from '../../../src/sdk/repo-identity.js'
import {ensureDefaultImage, sweep} from '../../support/podman.js'
import {cleanupTemp} from '../../support/repo.js'
import {cli, cliAsync, inPod, makeApp, makeUpstream, SANDBOX_TEST_PREFIX, type SandboxFixture} from './support.js'

const prefix = `${SANDBOX_TEST_PREFIX}d`

describe('two creates of one sandbox name at once (podman kube play)', function () {
  this.timeout(240_000)
  let fixture: SandboxFixture
  let upstream: string

  before(async () => {
    sweep(prefix)
    await ensureDefaultImage()
    upstream = makeUpstream('race')
    fixture = makeApp(prefix, 'WEB_PORT = 38900')
  })

  after(() => {
    sweep(prefix)
    cleanupTemp()
  })

  it('one is made; the other waits, then is refused (exit 2) leaving the first its pod and its lease', async () => {
    const runs = await Promise.all(
      [0, 1].map(async () => cliAsync(fixture, ['sandbox', 'create', 'dup', '--repo', upstream])),
    )
    const statuses = runs.map((run) => run.status).sort()
    expect(statuses, runs.map((run) => run.stderr).join('\n---\n')).to.deep.equal([0, 2])
    expect(runs.find((run) => run.status === 2)!.stderr).to.include('the sandbox dup exists')
    const pod = `${prefix}-dup`
    expect(inPod(pod, 'git', '-C', '/work/race/wt-dup', 'rev-parse', '--abbrev-ref', 'HEAD')).to.equal('wt/dup')
    const lease = path.join(fixture.state, 'caches', `${repoIdentity(upstream).key}.leases`, `sandbox.${pod}`)
    expect(existsSync(lease), lease).to.equal(true)
    const listed = cli(fixture, ['sandbox', 'list', '--json'])
    expect((JSON.parse(listed.stdout) as Array<{name: string}>).map((row) => row.name)).to.deep.equal(['dup'])
  })
})
