/**
 * A token given in a sandbox's `--repo` url (acceptance 3): the podman runtime's pod, its
 * annotations and manifest, the clones in it, the state directory and every output hold no trace
 * of it. The url is https; git reaches the local upstream through a fake ssh (git's insteadOf).
 */
import {expect} from 'chai'
import {readdirSync, readFileSync} from 'node:fs'
import path from 'node:path'

import {throttledSsh} from '../../support/kill-points.js'
import {ensureDefaultImage, podman, sweep} from '../../support/podman.js'
import {cleanupTemp, tempDir} from '../../support/repo.js'
import {yard, type YardRun} from '../../support/yard.js'
import {inPod, inPodTry, makeApp, makeUpstream, SANDBOX_TEST_PREFIX} from './support.js'

const prefix = `${SANDBOX_TEST_PREFIX}c`
const pod = `${prefix}-feat`
const TOKEN = 'glpat-s3cretT0kenOfTheSandbox'

function filesHolding(dir: string, needle: string): string[] {
  return readdirSync(dir, {recursive: true, withFileTypes: true})
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name))
    .filter((file) => readFileSync(file).includes(needle))
}

describe('sandbox: credentials in --repo urls reach no pod, file or output (acceptance 3)', function () {
  this.timeout(240_000)

  before(async () => {
    sweep(prefix)
    await ensureDefaultImage()
  })

  after(() => {
    sweep(prefix)
    cleanupTemp()
  })

  it('strips the token before the cache, the pod annotations, the manifest, the clones and the push url', async () => {
    const upstream = makeUpstream('app')
    const fixture = makeApp(prefix, 'WEB_PORT = 38950')
    const throttle = throttledSsh(tempDir('yard-ssh'))
    const env = {
      ...fixture.env,
      GIT_SSH: throttle.ssh,
      GIT_SSH_VARIANT: 'simple',
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'url.ssh://fake.invalid/.insteadOf',
      GIT_CONFIG_VALUE_0: 'https://fake.invalid/',
    }
    const run = async (args: string[]) => yard(args, {cwd: fixture.app, env})
    const clean = `https://fake.invalid${upstream}`
    const outputs: YardRun[] = []
    const created = await run([
      'sandbox',
      'create',
      'feat',
      '--repo',
      `https://user:${TOKEN}@fake.invalid${upstream}`,
      '--json',
    ])
    expect(created.exitCode, created.stderr).to.equal(0)
    outputs.push(created)
    outputs.push(await run(['sandbox', 'attach', 'feat', '--branch', 'fix/typo', '--json']))
    outputs.push(await run(['sandbox', 'list', '--json']))
    outputs.push(await run(['sandbox', 'manifest', 'feat']))
    outputs.push(await run(['cache', 'list', '--json']))
    for (const output of outputs) {
      expect(output.exitCode, output.stderr).to.equal(0)
      expect(output.stdout + output.stderr).to.not.include(TOKEN)
    }

    expect(outputs[3].stdout).to.include(clean)

    expect(podman('pod', 'inspect', pod)).to.not.include(TOKEN)
    expect(podman('inspect', `${pod}-workspace`)).to.not.include(TOKEN)
    for (const checkout of ['/work/app/default', '/work/app/fix-typo']) {
      expect(inPod(pod, 'git', '-C', checkout, 'config', '--get', 'remote.origin.pushurl')).to.equal(clean)
      expect(inPod(pod, 'git', '-C', checkout, 'config', '--list')).to.not.include(TOKEN)
    }

    const grep = inPodTry(pod, 'grep', '-r', '-l', TOKEN, '/work', '/repos')
    expect(grep.status, grep.stdout).to.equal(1)
    expect(filesHolding(fixture.state, TOKEN)).to.deep.equal([])
  })
})
