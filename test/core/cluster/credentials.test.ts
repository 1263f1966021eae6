/**
 * The url prefixes `yard cluster credentials set` accepts (docs/cluster.md, "Private
 * repositories"): https/http for a token, ssh for a deploy key, never a secret in the prefix,
 * and a bare host closed with "/" so it covers that host only.
 */
import {expect} from 'chai'

import {checkPrefix} from '../../../src/core/cluster/credentials.js'
import {InputError} from '../../../src/sdk/errors.js'

describe('cluster credentials: url prefixes', () => {
  it('keeps a prefix with a path, and closes a bare host with "/"', () => {
    expect(checkPrefix('https://github.com/acme/', 'token')).to.equal('https://github.com/acme/')
    expect(checkPrefix(' https://git.example.com:8443 ', 'token')).to.equal('https://git.example.com:8443/')
    expect(checkPrefix('ssh://git@github.com', 'ssh')).to.equal('ssh://git@github.com/')
    expect(checkPrefix('git@github.com:acme/', 'ssh')).to.equal('git@github.com:acme/')
  })

  it('refuses (exit 2) a token in the prefix, the wrong kind of url, and option-like or empty text', () => {
    for (const [prefix, kind] of [
      ['https://user:tok@github.com/acme/', 'token'],
      ['https://tok@github.com/acme/', 'token'],
      ['git@github.com:acme/', 'token'],
      ['ssh://git@github.com/', 'token'],
      ['https://github.com/acme/', 'ssh'],
      ['ssh://git:pw@github.com/', 'ssh'],
      ['-https://github.com/', 'token'],
      ['', 'ssh'],
    ] as const) {
      expect(() => checkPrefix(prefix, kind), `${prefix} (${kind})`)
        .to.throw(InputError)
        .with.property('code', 2)
    }

    try {
      checkPrefix('https://user:s3cret@github.com/', 'token')
    } catch (error) {
      expect((error as Error).message).to.not.include('s3cret')
    }
  })
})
