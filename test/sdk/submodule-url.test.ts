import {expect} from 'chai'

import {resolveSubmoduleUrl} from '../../src/sdk/submodule-url.js'

describe('resolveSubmoduleUrl (gitsubmodules(7), git submodule init)', () => {
  it("resolves ../ and ./ against the superproject's url as git does, and keeps an absolute url", () => {
    const cases: Array<[string, string, string]> = [
      ['https://host/org/app.git', '../lib.git', 'https://host/org/lib.git'],
      ['https://host/org/app.git/', '../lib.git', 'https://host/org/lib.git'],
      ['https://host/app.git', '../lib.git', 'https://host/lib.git'],
      ['https://host/org/app.git', '../../other/lib.git', 'https://host/other/lib.git'],
      ['https://host/org/app.git', './sub.git', 'https://host/org/app.git/sub.git'],
      ['git@host:org/app.git', '../lib.git', 'git@host:org/lib.git'],
      ['git@host:app.git', '../lib.git', 'git@host:lib.git'],
      ['/srv/git/app.git', '../lib.git', '/srv/git/lib.git'],
      ['/srv/git/app.git', 'https://elsewhere/x.git', 'https://elsewhere/x.git'],
    ]
    for (const [base, url, expected] of cases)
      expect(resolveSubmoduleUrl(base, url), `${base} + ${url}`).to.equal(expected)
  })
})
