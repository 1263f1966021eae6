import {expect} from 'chai'

import {InputError} from '../../src/core/errors.js'
import {CACHE_ENTRY_PATTERN, cacheKey, identitySlug, repoIdentity} from '../../src/core/repo-identity.js'
import {readVectors} from '../support/vectors.js'

interface Vectors {
  cases: Array<{url: string; scheme: string; identity: string; key: string}>
  refused: string[]
}

const vectors = readVectors<Vectors>('identity.json')

describe('repository identity and cache key (DESIGN.md §5.1)', () => {
  for (const vector of vectors.cases) {
    it(`${JSON.stringify(vector.url)} → ${vector.identity} (${vector.scheme}), key ${vector.key}`, () => {
      const result = repoIdentity(vector.url)
      expect({scheme: result.scheme, identity: result.identity, key: result.key}).to.deep.equal({scheme: vector.scheme, identity: vector.identity, key: vector.key})
      expect(result.url).to.equal(vector.url.trim())
      expect(result.key).to.match(CACHE_ENTRY_PATTERN)
    })
  }

  for (const url of vectors.refused) {
    it(`refuses ${JSON.stringify(url)} with the url and a reason`, () => {
      let caught: unknown
      try {
        repoIdentity(url)
      } catch (error) {
        caught = error
      }
      expect(caught).to.be.instanceOf(InputError)
      const error = caught as InputError
      expect(error.code).to.equal(2)
      expect(error.message).to.include(JSON.stringify(url))
      expect(error.why).to.be.a('string').and.not.equal('')
      expect(error.fix).to.be.a('string').and.not.equal('')
    })
  }

  it('says why for each kind of refusal', () => {
    const why = (url: string) => {
      try {
        repoIdentity(url)
      } catch (error) {
        return (error as InputError).why
      }
      return undefined
    }
    expect(why('   ')).to.include('empty')
    expect(why('-')).to.include('option')
    expect(why('infra')).to.include('absolute')
    expect(why('ftp://host/x.git')).to.include('ftp')
    expect(why('https://github.com/')).to.include('path is empty')
    expect(why('/')).to.include('path is empty')
    expect(why('file://host/srv/x')).to.include('host')
    expect(why('ext::sh -c touch% /tmp/x')).to.include('remote-helper url (<transport>::<address>, here ext::)').and.to.include('runs any command')
    expect(why('fd::17')).to.include('here fd::')
    expect(why('git-remote-x::https://host/x.git')).to.include('here git-remote-x::')
  })

  it('never climbs above the root and drops only one .git', () => {
    expect(repoIdentity('https://h/../../a/./b//c.git.git').identity).to.equal('h/a/b/c.git')
    expect(repoIdentity('/srv/x/.git').identity).to.equal('/srv/x')
    expect(repoIdentity('ssh://h/a/b/.git/').identity).to.equal('h/a/b')
    expect(repoIdentity('  git+ssh://git@H.example:22/o/r  ')).to.deep.include({scheme: 'ssh', identity: 'h.example/o/r', url: 'git+ssh://git@H.example:22/o/r'})
    expect(repoIdentity('user@[::1]:o/r.git')).to.deep.include({scheme: 'ssh', identity: '[::1]/o/r'})
  })

  it('slugs the last segment: ≤ 40 characters, repo when nothing is left', () => {
    expect(identitySlug('h/o/My_Repo.V2')).to.equal('my-repo-v2')
    expect(identitySlug('h/o/___')).to.equal('repo')
    expect(identitySlug(`h/${'a'.repeat(39)}-bc`)).to.equal('a'.repeat(39))
    expect(cacheKey('h/o/___')).to.match(/^repo-[0-9a-f]{8}$/)
  })
})
