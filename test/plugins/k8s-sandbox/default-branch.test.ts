import {expect} from 'chai'

import {ensureDefaultImage, sweep} from '../../support/podman.js'
import {cleanupTemp, git} from '../../support/repo.js'
import {yard} from '../../support/yard.js'
import {makeApp, makeUpstream, podExists, SANDBOX_TEST_PREFIX} from './support.js'

const prefix = `${SANDBOX_TEST_PREFIX}h`

describe('sandbox create: an origin whose HEAD names a missing branch', function () {
  this.timeout(120_000)

  before(async () => {
    sweep(prefix)
    await ensureDefaultImage()
  })

  after(() => {
    sweep(prefix)
    cleanupTemp()
  })

  it('is refused at the cache step with exit 2, suggesting URL#BRANCH with the branches there are, before any pod exists', async () => {
    const upstream = makeUpstream('app', {develop: true})
    git(upstream, 'symbolic-ref', 'HEAD', 'refs/heads/gone')
    const fixture = makeApp(prefix, 'WEB_PORT = 38960')
    const refused = await yard(['sandbox', 'create', 'nohead', '--repo', upstream], {
      cwd: fixture.app,
      env: fixture.env,
    })
    expect(refused.exitCode, refused.stderr).to.equal(2)
    expect(refused.stderr).to.include(`${upstream} has no default branch: its HEAD names gone, which does not exist`)
    expect(refused.stderr).to.include('its branches are develop, main').and.include(`--repo ${upstream}#main`)
    expect(podExists(`${prefix}-nohead`)).to.equal(false)
  })
})
