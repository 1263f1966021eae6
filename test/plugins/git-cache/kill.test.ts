import {expect} from 'chai'
import {existsSync} from 'node:fs'
import path from 'node:path'

import {repoIdentity} from '../../../src/sdk/repo-identity.js'
import {cacheState, killPoint, makeBulkyUpstream, startCacheAdd, throttledSsh} from '../../support/kill-points.js'
import {cleanupTemp, tempDir} from '../../support/repo.js'
import {yard} from '../../support/yard.js'

/** The rerun in this process (its start-up is not what is tested; the killed runs are real processes). */
async function rerunInProcess(
  url: string,
  env: Record<string, string>,
): Promise<{code: number | null; stderr: string; ms: number}> {
  const started = Date.now()
  const run = await yard(['cache', 'add', '--', url], {cwd: tempDir('yard-cwd'), env})
  return {code: run.exitCode, stderr: run.stderr, ms: Date.now() - started}
}

describe('git-cache: kill -9 during cache add (real processes)', function () {
  this.timeout(180_000)

  after(() => cleanupTemp())

  it('the next cache add ends the orphaned git clone, succeeds and leaves the state of a clean run, at every kill point', async () => {
    const bare = makeBulkyUpstream(tempDir('yard-bulky'), 4, 2)
    // Over a throttled fake ssh a killed clone outlives the restart of yard; the others run at full speed.
    const throttle = throttledSsh(tempDir('yard-ssh'))
    const env = {GIT_SSH: throttle.ssh, GIT_SSH_VARIANT: 'simple'}
    const url = `ssh://fake.invalid${bare}`

    const cleanRoot = path.join(tempDir('yard-clean'), 'caches')
    const clean = startCacheAdd(url, {...env, YARD_CACHE_ROOT: cleanRoot})
    const marker = path.join(cleanRoot, `${repoIdentity(url).key}.cloning`)
    let exited = false
    void clean.done.then(() => (exited = true))
    while (!existsSync(marker) && !exited) await new Promise((resolve) => setTimeout(resolve, 5))
    const markerSeen = Date.now()
    const cleanRun = await clean.done
    const cloneMs = Date.now() - markerSeen
    expect(cleanRun.code, cleanRun.stderr).to.equal(0)
    const state = cacheState(cleanRoot, url)

    const points = []
    for (const afterMarkerMs of [0, 300, 1500]) {
      throttle.setDelay(100)
      points.push(
        await killPoint(tempDir('yard-kill'), url, env, afterMarkerMs, state, {
          beforeRerun: () => throttle.setDelay(0),
          rerun: rerunInProcess,
        }),
      )
    }

    for (const point of points) {
      const where = `killed ${point.afterMarkerMs} ms after the marker (a clean clone took ${cloneMs} ms)`
      expect(point.rerun.code, `${where}: ${point.rerun.stderr}`).to.equal(0)
      expect(point.sameState, where).to.equal(true)
      expect(point.orphansGone, where).to.equal(true)
    }

    // Killed while git clone ran, the rerun ended the orphaned clone before it cleaned up under it.
    for (const point of points.filter((each) => each.afterMarkerMs > 0)) {
      expect(point.orphans, `${point.afterMarkerMs} ms`).to.be.greaterThan(0)
      expect(point.rerun.stderr).to.match(/took over the stale lock .* process group \d+ was ended/)
    }
  })
})
