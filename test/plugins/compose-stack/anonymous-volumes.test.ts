/**
 * Anonymous volumes (DESIGN.md §4.2): podman-compose 1.0.3 names them
 * `<project>_<service>_<sha256>` and labels them with the compose project only, so they are the
 * project's by that label and name — never "another owner's", which would refuse every later up.
 */
import {expect} from 'chai'

import type {Target} from '../../../src/sdk/target.js'

import {isAnonymousVolume, Ownership} from '../../../src/plugins/compose-stack/ownership.js'

const target: Target = {
  name: 'feat',
  isMain: false,
  prefix: 'app',
  project: 'app-feat',
  owner: 'o1',
  offset: 3,
  offsetSource: 'pin',
  ports: {},
  checkoutPath: '/c',
  mainPath: '/m',
}
const hash = 'a'.repeat(64)
const compose = (project: string) => ({'com.docker.compose.project': project, 'io.podman.compose.project': project})

describe('anonymous volumes belong to the project (DESIGN.md §4.2)', () => {
  it("counts the provider's anonymous volume as this owner's, and nothing else without the owner label", () => {
    const anonymous = {name: `app-feat_web_${hash}`, labels: compose('app-feat')}
    const unlabelled = {name: 'app-feat_cache', labels: compose('app-feat')}
    const foreign = {name: `app-feat_web_${'b'.repeat(64)}`, labels: {...compose('app-feat'), 'yard.dev/owner': 'o2'}}
    expect(isAnonymousVolume(target, anonymous)).to.equal(true)
    expect(isAnonymousVolume(target, unlabelled)).to.equal(false)
    expect(isAnonymousVolume(target, {name: `app-feat-b_web_${hash}`, labels: compose('app-feat-b')})).to.equal(false)
    const ownership = new Ownership(target, [], [anonymous, unlabelled, foreign], [])
    expect(ownership.volumes.map((volume) => volume.name)).to.deep.equal([anonymous.name])
    expect(ownership.foreign()).to.deep.equal([`volume ${unlabelled.name}`, `volume ${foreign.name}`])
  })
})
