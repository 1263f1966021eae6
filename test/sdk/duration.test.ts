/**
 * Intervals users give (sdk/duration.ts): a timer longer than 2^31-1 ms fires after 1 ms in Node,
 * so every interval is bounded, and a too-long one is exit 2 rather than a busy loop.
 */
import {expect} from 'chai'

import {parseInterval} from '../../src/core/cache/cache.js'
import {checkUsername} from '../../src/core/cluster/credentials.js'
import {projectTables} from '../../src/core/config/config-schema.js'
import {MAX_INTERVAL_MS, parseRefreshInterval} from '../../src/sdk/duration.js'
import {InputError} from '../../src/sdk/errors.js'

describe('intervals and names users give (sdk/duration.ts)', () => {
  it('reads a refresh interval as hours, minutes and seconds, up to 7 days', () => {
    expect(parseRefreshInterval('90s')).to.equal(90_000)
    expect(parseRefreshInterval('1h30m')).to.equal(5_400_000)
    expect(parseRefreshInterval('168h')).to.equal(MAX_INTERVAL_MS)
    expect(MAX_INTERVAL_MS).to.be.below(2 ** 31 - 1)
  })

  it('refuses (exit 2) an empty, zero, malformed or longer-than-a-week refresh interval', () => {
    for (const text of ['', '0s', '0h0m', '10', 'm', '1m1h', '169h', '99999999999h', '10080m1s']) {
      expect(() => parseRefreshInterval(text, '--refresh'), text)
        .to.throw(InputError)
        .with.property('code', 2)
    }

    expect(() => parseRefreshInterval('200h', '--refresh')).to.throw(/--refresh "200h": it is more than 7 days/)
  })

  it('bounds a cache agent --interval the same way', () => {
    expect(parseInterval('5m', '--interval')).to.equal(300_000)
    expect(parseInterval('168h', '--interval')).to.equal(MAX_INTERVAL_MS)
    for (const text of ['999h', '0.5s', '1e9s', '', 'soon'])
      expect(() => parseInterval(text, '--interval'), text).to.throw(InputError)
  })

  it('checks [cluster] refresh-interval in yard.toml with the same rule', () => {
    const refresh = projectTables.cluster.shape['refresh-interval']
    expect(refresh.safeParse('10m').success).to.equal(true)
    expect(refresh.safeParse('1000h').success).to.equal(false)
    expect(refresh.safeParse('0s').success).to.equal(false)
  })

  it('refuses (exit 2) a --username that could read as an option or end the user early', () => {
    expect(checkUsername(undefined)).to.equal('x-access-token')
    expect(checkUsername(' oauth2 ')).to.equal('oauth2')
    for (const name of ['-x', '--upload-pack=touch', 'a b', 'user:pass', 'a\u0007b']) {
      expect(() => checkUsername(name), name)
        .to.throw(InputError)
        .with.property('code', 2)
    }
  })
})
