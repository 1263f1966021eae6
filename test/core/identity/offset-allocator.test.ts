import {expect} from 'chai'

import {hashOffset} from '../../../src/core/identity/identity.js'
import {chooseOffset} from '../../../src/core/identity/offset-allocator.js'

const worktree = (name: string, offset: number) => ({name, offset, kind: 'worktree'})
const sandbox = (name: string, offset: number) => ({name, offset, kind: 'sandbox'})

describe('offset allocator rules', () => {
  describe('chooseOffset (DESIGN.md §3.4, "Collisions")', () => {
    it('keeps a free offset', () => {
      expect(chooseOffset('alpha', 59, [worktree('review', 61)])).to.deep.equal({
        offset: 59,
        clashedWith: [],
        full: false,
      })
    })

    it('moves a clashing newcomer to the lowest free offset, naming what it clashed with', () => {
      expect(hashOffset('feat')).to.equal(59)
      expect(hashOffset('alpha')).to.equal(59)
      expect(chooseOffset('alpha', 59, [worktree('feat', 59), worktree('one', 1), sandbox('box', 2)])).to.deep.equal({
        offset: 3,
        pin: 3,
        clashedWith: ['feat'],
        full: false,
      })
    })

    it('counts a sandbox of another name as a clash, and one of the same name as the same identity', () => {
      expect(chooseOffset('alpha', 59, [sandbox('feat', 59)])).to.deep.include({
        offset: 1,
        pin: 1,
        clashedWith: ['feat'],
      })
      expect(chooseOffset('alpha', 59, [sandbox('alpha', 17), worktree('x', 17)])).to.deep.equal({
        offset: 17,
        pin: 17,
        clashedWith: [],
        full: false,
      })
      expect(chooseOffset('alpha', 17, [sandbox('alpha', 17)])).to.deep.equal({
        offset: 17,
        clashedWith: [],
        full: false,
      })
    })

    it('keeps the clash and says the slots are full when all 89 are taken', () => {
      const all = Array.from({length: 89}, (_, index) => worktree(`w${index + 1}`, index + 1))
      expect(chooseOffset('alpha', 59, all)).to.deep.equal({offset: 59, clashedWith: ['w59'], full: true})
    })

    it('names a worktree and the sandbox of its identity once among the clashes', () => {
      expect(chooseOffset('alpha', 59, [worktree('feat', 59), sandbox('feat', 59)])).to.deep.equal({
        offset: 1,
        pin: 1,
        clashedWith: ['feat'],
        full: false,
      })
    })

    it('lends a sandbox newcomer the offset of the worktree of its name', () => {
      expect(chooseOffset('alpha', 17, [worktree('alpha', 17), sandbox('x', 17)])).to.deep.equal({
        offset: 17,
        clashedWith: [],
        full: false,
      })
    })
  })
})
