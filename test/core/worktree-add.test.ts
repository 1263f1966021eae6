import {expect} from 'chai'

import {hashOffset} from '../../src/core/identity.js'
import {chooseOffset, gitFailure} from '../../src/core/worktree-add.js'
import {remoteOf} from '../../src/core/git.js'
import {baseRemote} from '../../src/core/worktree-base.js'

const worktree = (name: string, offset: number) => ({name, offset, kind: 'worktree'})
const sandbox = (name: string, offset: number) => ({name, offset, kind: 'sandbox'})

describe('worktree add rules', () => {
  describe('chooseOffset (DESIGN.md §3.4, "Collisions")', () => {
    it('keeps a free offset', () => {
      expect(chooseOffset('alpha', 59, [worktree('review', 61)])).to.deep.equal({offset: 59, clashedWith: [], full: false})
    })

    it('moves a clashing newcomer to the lowest free offset, naming what it clashed with', () => {
      expect(hashOffset('feat')).to.equal(59)
      expect(hashOffset('alpha')).to.equal(59)
      expect(chooseOffset('alpha', 59, [worktree('feat', 59), worktree('one', 1), sandbox('box', 2)])).to.deep.equal({offset: 3, pin: 3, clashedWith: ['feat'], full: false})
    })

    it('counts a sandbox of another name as a clash, and one of the same name as the same identity', () => {
      expect(chooseOffset('alpha', 59, [sandbox('feat', 59)])).to.deep.include({offset: 1, pin: 1, clashedWith: ['feat']})
      expect(chooseOffset('alpha', 59, [sandbox('alpha', 17), worktree('x', 17)])).to.deep.equal({offset: 17, pin: 17, clashedWith: [], full: false})
      expect(chooseOffset('alpha', 17, [sandbox('alpha', 17)])).to.deep.equal({offset: 17, clashedWith: [], full: false})
    })

    it('keeps the clash and says the slots are full when all 89 are taken', () => {
      const all = Array.from({length: 89}, (_, index) => worktree(`w${index + 1}`, index + 1))
      expect(chooseOffset('alpha', 59, all)).to.deep.equal({offset: 59, clashedWith: ['w59'], full: true})
    })
  })

  describe('the base\'s remote (DESIGN.md §4.1: fetch it first)', () => {
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
    it('keeps git\'s fatal: and error: lines, not the advice after them', () => {
      const stderr = "fatal: '/gone/missing.git' does not appear to be a git repository\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.\n"
      expect(gitFailure(stderr)).to.equal("fatal: '/gone/missing.git' does not appear to be a git repository; fatal: Could not read from remote repository.")
      expect(gitFailure('something odd\nlast words\n')).to.equal('last words')
    })

    it('keeps the first and last 10 of thousands of error: lines (a fetch on a full disk)', () => {
      const stderr = Array.from({length: 5000}, (_, index) => `error: unable to write object ${index}: No space left on device`).join('\n')
      const parts = gitFailure(stderr).split('; ')
      expect(parts).to.have.length(21)
      expect([parts[0], parts[10], parts[20]]).to.deep.equal(['error: unable to write object 0: No space left on device', '… 4980 lines omitted …', 'error: unable to write object 4999: No space left on device'])
    })
  })
})
