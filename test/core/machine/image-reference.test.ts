import {expect} from 'chai'

import {imageReferenceProblem, validateImageReference} from '../../../src/core/machine/image-reference.js'
import {InputError} from '../../../src/sdk/errors.js'

describe('image references (distribution/reference grammar)', () => {
  it('accepts the forms podman names images by', () => {
    for (const image of [
      'debian',
      'debian:12',
      'library/debian:12-slim',
      'docker.io/library/node:22',
      'localhost/yard-default:1029a6e101c7',
      'registry.example.com:5000/team/app',
      'Registry.Example.com/a__b/c-d.e',
      'Host:5000/app',
      '[::1]:5000/app:v1',
      'app@sha256:' + 'a'.repeat(64),
      'quay.io/x/y:tag@sha256:' + 'F'.repeat(64),
      '7e0aa2d69a15',
      'a---b',
      'a_b',
      'w'.repeat(128) + ':' + 'T'.repeat(128),
    ])
      expect(imageReferenceProblem(image), image).to.equal(undefined)
  })

  it('refuses flags and everything outside the grammar', () => {
    for (const image of [
      '--privileged',
      '-v',
      '--volume=/:/host',
      '',
      'Upper',
      'a/B',
      // A first component without "." or ":" is no registry domain, so no upper case.
      'UPPER/x:1',
      'Team/app',
      'a:',
      'a:-tag',
      ':tag',
      'a@sha256:abc',
      'a..b',
      'a/',
      '/a',
      'a b',
      'a:' + 't'.repeat(129),
      'a'.repeat(256),
      'host:port/x',
      'docker://alpine',
      'a_-b',
      '.a',
    ])
      expect(imageReferenceProblem(image), image).to.be.a('string')
    expect(imageReferenceProblem('--privileged')).to.contain('option')
  })

  it('names the source in the error (exit 2)', () => {
    expect(() => validateImageReference('--privileged', '--image')).to.throw(
      InputError,
      'invalid image "--privileged" from --image: it starts with "-"',
    )
  })
})
