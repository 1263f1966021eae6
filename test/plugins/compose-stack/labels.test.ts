/** The label override (DESIGN.md §4.2): every service, volume and network gets yard's labels. */
import {expect} from 'chai'

import type {Target} from '../../../src/core/backend.js'
import {planLabels} from '../../../src/plugins/compose-stack/labels.js'

const target: Target = {name: 'feat', isMain: false, prefix: 'app', project: 'app-feat', owner: 'abc123', offset: 59, offsetSource: 'hash', ports: {}, checkoutPath: '/x', mainPath: '/m'}
const labels = {'yard.dev/owner': 'abc123', 'yard.dev/project': 'app-feat'}

describe('label override (DESIGN.md §4.2)', () => {
  const model = {
    services: [
      {name: 'web', ports: [], labelsForm: 'list' as const, usesDefaultNetwork: true},
      {name: 'db', ports: [], usesDefaultNetwork: false},
    ],
    volumes: [
      {name: 'data', bare: true, external: false},
      {name: 'cache', bare: false, external: false, labelsForm: 'list' as const},
      {name: 'shared', bare: false, external: true},
    ],
    networks: [{name: 'back', bare: true, external: false}],
  }

  it('writes labels in the form each service uses; bare volumes and networks are created first for podman-compose', () => {
    const plan = planLabels(model, target, {bareInOverride: false})
    expect(plan.override).to.deep.equal({
      services: {web: {labels: ['yard.dev/owner=abc123', 'yard.dev/project=app-feat']}, db: {labels}},
      volumes: {cache: {labels: ['yard.dev/owner=abc123', 'yard.dev/project=app-feat']}},
      networks: {default: {labels}},
    })
    expect(plan.create).to.deep.equal({volumes: ['app-feat_data'], networks: ['app-feat_back']})
  })

  it('puts bare ones in the override for docker providers, which merge them', () => {
    const plan = planLabels(model, target, {bareInOverride: true})
    expect(plan.create).to.deep.equal({volumes: [], networks: []})
    expect(Object.keys(plan.override.volumes as object)).to.deep.equal(['data', 'cache'])
    expect(plan.override.networks).to.deep.equal({back: {labels}, default: {labels}})
  })
})
