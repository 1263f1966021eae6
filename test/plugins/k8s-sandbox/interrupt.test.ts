/**
 * A `yard sandbox create` interrupted once its pod exists (real podman kube play): SIGINT to the
 * yard process alone (as `kill -INT` sends it; a terminal's Ctrl-C also reaches its children)
 * lets the step in flight finish, then undoes the create as a failure would — pod, lease, locks
 * gone — and exits 130 saying so. Node's default would end the process at once and leave the pod,
 * the lease on the cache and the create's locks behind.
 */
import {expect} from 'chai'
import {spawn} from 'node:child_process'
import {existsSync, readdirSync} from 'node:fs'
import path from 'node:path'

import {repoIdentity} from '../../../src/sdk/repo-identity.js'
import {ensureDefaultImage, sweep} from '../../support/podman.js'
import {cleanupTemp} from '../../support/repo.js'
import {
  cli,
  devJs,
  fixtureEnv,
  makeApp,
  makeUpstream,
  podExists,
  SANDBOX_TEST_PREFIX,
  type SandboxFixture,
} from './support.js'

const prefix = `${SANDBOX_TEST_PREFIX}i`
const sleep = async (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('an interrupted sandbox create (podman kube play)', function () {
  this.timeout(240_000)
  let fixture: SandboxFixture
  let upstream: string

  before(async () => {
    sweep(prefix)
    await ensureDefaultImage()
    upstream = makeUpstream('intr')
    fixture = makeApp(prefix, 'WEB_PORT = 39100')
  })

  after(() => {
    sweep(prefix)
    cleanupTemp()
  })

  it('SIGINT once the pod exists: the create finishes its step, undoes pod, lease and locks, exits 130', async () => {
    const pod = `${prefix}-intr`
    const child = spawn(process.execPath, [devJs, 'sandbox', 'create', 'intr', '--repo', upstream], {
      cwd: fixture.app,
      env: fixtureEnv(fixture),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.stdout.resume()
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    let ended = false
    void exited.then(() => (ended = true))

    // The pod appears under the offsets lock; attach (checkouts in the pod) comes after it.
    const deadline = Date.now() + 120_000
    while (!ended && !podExists(pod) && Date.now() < deadline) await sleep(50)
    expect(ended, `the create ended before its pod was seen:\n${stderr}`).to.equal(false)
    child.kill('SIGINT')
    const code = await exited

    expect(code, stderr).to.equal(130)
    expect(stderr).to.include('interrupted: yard sandbox create intr stops at its next step and undoes what it made')
    expect(stderr).to.include('yard sandbox create intr was interrupted; what it had made was undone')
    expect(podExists(pod), 'pod').to.equal(false)
    const leases = path.join(fixture.state, 'caches', `${repoIdentity(upstream).key}.leases`)
    expect(existsSync(path.join(leases, `sandbox.${pod}`)), 'lease').to.equal(false)
    const locks = path.join(fixture.state, 'locks')
    expect(existsSync(locks) ? readdirSync(locks) : [], 'locks').to.deep.equal([])
    const listed = cli(fixture, ['sandbox', 'list', '--json'])
    expect(JSON.parse(listed.stdout), listed.stderr).to.deep.equal([])

    // Nothing stands in the way of the same create again.
    const again = cli(fixture, ['sandbox', 'create', 'intr', '--repo', upstream])
    expect(again.status, again.stderr).to.equal(0)
    expect(podExists(pod)).to.equal(true)
  })
})
