import {expect} from 'chai'

import {InputError} from '../../src/sdk/errors.js'
import {CACHE_ENTRY_PATTERN, cacheKey, identitySlug, repoIdentity} from '../../src/sdk/repo-identity.js'
import {redactUrl, withoutCredentials} from '../../src/sdk/repo-url.js'
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
      expect({scheme: result.scheme, identity: result.identity, key: result.key}).to.deep.equal({
        scheme: vector.scheme,
        identity: vector.identity,
        key: vector.key,
      })
      expect(result.url).to.equal(withoutCredentials(vector.url.trim()))
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

    expect(why(' '.repeat(3))).to.include('empty')
    expect(why('-')).to.include('option')
    expect(why('infra')).to.include('absolute')
    expect(why('ftp://host/x.git')).to.include('ftp')
    expect(why('https://github.com/')).to.include('path is empty')
    expect(why('/')).to.include('path is empty')
    expect(why('file://host/srv/x')).to.include('host')
    expect(why('ext::sh -c touch% /tmp/x'))
      .to.include('remote-helper url (<transport>::<address>, here ext::)')
      .and.to.include('runs any command')
    expect(why('fd::17')).to.include('here fd::')
    expect(why('git-remote-x::https://host/x.git')).to.include('here git-remote-x::')
  })

  /** The refusal's why, or undefined when the url is accepted. */
  const refusal = (url: string) => {
    try {
      repoIdentity(url)
    } catch (error) {
      expect(error).to.be.instanceOf(InputError)
      return (error as InputError).why
    }

    return undefined
  }

  it('refuses what URL parsers read differently: backslash, control characters, whitespace', () => {
    // WHATWG reads "\\" as "/" (host = host, path /x) while git and curl send "host\\" as the user to evil.
    expect(refusal(String.raw`http://host\@evil/../x`)).to.include('backslash')
    expect(refusal(String.raw`https://github.com\@evil.example/Acme/App.git`)).to.include('backslash')
    expect(refusal(String.raw`ssh://host\@evil/x`)).to.include('backslash')
    expect(refusal('http://ho\tst/x')).to.include('U+0009')
    expect(refusal('https://github.com/Acme/App\n.git')).to.include('U+000A')
    expect(refusal('https://github.com/Acme/\u0000App')).to.include('U+0000')
    expect(refusal('https://github.com/Acme/App\u007F')).to.include('U+007F')
    expect(refusal('https://github.com/Acme/My App.git')).to.include('whitespace')
    expect(refusal('https://github.com/Acme/App\u00A0.git')).to.include('whitespace')
  })

  it('refuses authorities and paths the WHATWG parser rewrites', () => {
    expect(refusal('https://a@evil@github.com/Acme/App')).to.include('more than one "@"')
    expect(refusal('http://0x7f.1/x')).to.include('is read as "127.0.0.1"')
    expect(refusal('http://[0:0::1]/x')).to.include('is read as "[::1]"')
    expect(refusal('https://ev%69l.example/x')).to.include('not a plain ASCII host')
    expect(refusal('https://gith\u00FCb.com/Acme/App')).to.include('not a plain ASCII host')
    expect(refusal('https://github.com/evil/%2e%2e/Acme/App')).to.include('percent-encoded "." or ".."')
    expect(refusal('https://host:abc/x')).to.include('port "abc" is not a number')
    expect(refusal('evil:x@github.com:Acme/App.git')).to.include('up to the first ":" as the host')
    expect(refusal('a@b@github.com:Acme/App.git')).to.include('up to the first ":" as the host')
  })

  it('refuses hosts starting with "-", and empty users or hosts', () => {
    expect(refusal('ssh://-oProxyCommand=touch%20x/y')).to.include('starts with "-"')
    expect(refusal('git@-oProxyCommand=x:y')).to.include('starts with "-"')
    expect(refusal('ssh://-oProxyCommand=x@host/y')).to.include('user name starts with "-"')
    expect(refusal('https://-host/x')).to.include('starts with "-"')
    expect(refusal('ssh://@host/x')).to.include('user name is empty')
    expect(refusal('ssh://:pw@host/x')).to.include('user name is empty')
    expect(refusal('@host:x/y')).to.include('user name is empty')
    expect(refusal('git@:x/y')).to.include('names no host')
    expect(refusal('ssh://git@/x')).to.include('names no host')
  })

  it('strips credentials from the url git gets, keeping the ssh login', () => {
    expect(repoIdentity('https://user:tok@github.com/Acme/App.git').url).to.equal('https://github.com/Acme/App.git')
    expect(repoIdentity('https://ghp_token@github.com/Acme/App.git').url).to.equal('https://github.com/Acme/App.git')
    expect(repoIdentity('http://u:p@host:8080/x?y#z').url).to.equal('http://host:8080/x?y#z')
    expect(repoIdentity('ssh://git:pw@github.com:2222/a/b').url).to.equal('ssh://git@github.com:2222/a/b')
    expect(repoIdentity('git@github.com:Acme/App.git').url).to.equal('git@github.com:Acme/App.git')
    expect(repoIdentity('https://u%40x:t%3Ak@github.com/Acme/App').url).to.equal('https://github.com/Acme/App')
  })

  it('redacts a password in messages as user:***@', () => {
    expect(redactUrl('https://user:tok@host/x y')).to.equal('https://user:***@host/x y')
    expect(redactUrl('https://host/x')).to.equal('https://host/x')
    let message = ''
    try {
      repoIdentity('https://user:s3cret@host/a b')
    } catch (error) {
      message = (error as InputError).render()
    }

    expect(message).to.include('https://user:***@host/a b').and.not.include('s3cret')
  })

  it('never climbs above the root and drops only one .git', () => {
    expect(repoIdentity('https://h/../../a/./b//c.git.git').identity).to.equal('h/a/b/c.git')
    expect(repoIdentity('/srv/x/.git').identity).to.equal('/srv/x')
    expect(repoIdentity('ssh://h/a/b/.git/').identity).to.equal('h/a/b')
    expect(repoIdentity('  git+ssh://git@H.example:22/o/r  ')).to.deep.include({
      scheme: 'ssh',
      identity: 'h.example/o/r',
      url: 'git+ssh://git@H.example:22/o/r',
    })
    expect(repoIdentity('user@[::1]:o/r.git')).to.deep.include({scheme: 'ssh', identity: '[::1]/o/r'})
  })

  it('slugs the last segment: ≤ 40 characters, repo when nothing is left', () => {
    expect(identitySlug('h/o/My_Repo.V2')).to.equal('my-repo-v2')
    expect(identitySlug('h/o/___')).to.equal('repo')
    expect(identitySlug(`h/${'a'.repeat(39)}-bc`)).to.equal('a'.repeat(39))
    expect(cacheKey('h/o/___')).to.match(/^repo-[0-9a-f]{8}$/)
  })
})
