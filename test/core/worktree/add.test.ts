import {expect} from 'chai'

import {remoteOf} from '../../../src/core/workspace/git.js'
import {baseRemote} from '../../../src/core/worktree/base.js'
import {gitFailure} from '../../../src/core/worktree/git-failure.js'

describe('worktree add rules', () => {
  describe("the base's remote (DESIGN.md §4.1: fetch it first)", () => {
    it('is the remote of a remote-tracking --from or configured base, none for a local one, origin otherwise', () => {
      const remotes = ['origin', 'up/stream']
      expect(remoteOf('up/stream/main', remotes)).to.equal('up/stream')
      expect(remoteOf('refs/remotes/origin/develop', remotes)).to.equal('origin')
      expect(baseRemote('origin/release', undefined, remotes)).to.equal('origin')
      expect(baseRemote('v1.2', undefined, remotes)).to.equal(undefined)
      expect(baseRemote(undefined, 'up/stream/main', remotes)).to.equal('up/stream')
      expect(baseRemote(undefined, 'main', remotes)).to.equal('origin')
      expect(baseRemote(undefined, undefined, remotes)).to.equal('origin')
      expect(baseRemote(undefined, undefined, [])).to.equal(undefined)
    })
  })

  describe('gitFailure', () => {
    it("keeps git's fatal: and error: lines, not the advice after them", () => {
      const stderr =
        "fatal: '/gone/missing.git' does not appear to be a git repository\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.\n"
      expect(gitFailure(stderr)).to.equal(
        "fatal: '/gone/missing.git' does not appear to be a git repository; fatal: Could not read from remote repository.",
      )
      expect(gitFailure('something odd\nlast words\n')).to.equal('last words')
    })

    it('keeps the first and last 10 of thousands of error: lines (a fetch on a full disk)', () => {
      const stderr = Array.from(
        {length: 5000},
        (_, index) => `error: unable to write object ${index}: No space left on device`,
      ).join('\n')
      const parts = gitFailure(stderr).split('; ')
      expect(parts).to.have.length(21)
      expect([parts[0], parts[10], parts[20]]).to.deep.equal([
        'error: unable to write object 0: No space left on device',
        '… 4980 lines omitted …',
        'error: unable to write object 4999: No space left on device',
      ])
    })
  })
})
