import {expect} from 'chai'
import fc from 'fast-check'
import {spawnSync} from 'node:child_process'

import {validBranchName} from '../../../src/core/workspace/git.js'

/** git's own answer (`git check-ref-format --branch`, outside any repository). */
function gitAccepts(branch: string): boolean {
  return spawnSync('git', ['check-ref-format', '--branch', branch], {cwd: '/', encoding: 'utf8'}).status === 0
}

describe('validBranchName (git-check-ref-format(1) rules, without a process)', () => {
  it('answers as git check-ref-format --branch on the cases the rules name', () => {
    const cases = [
      'main',
      'wt/feat',
      'feature/Login.v2',
      'é',
      'lock',
      'a/HEAD',
      '@',
      'HEAD',
      '-x',
      'a..b',
      'a.lock',
      'a.lock/b',
      'a/.b',
      '.a',
      'a.',
      'a/',
      '/a',
      'a//b',
      'x@{',
      '@{-1}',
      'a b',
      'a\tb',
      'a~1',
      'a^',
      'a:b',
      'a?',
      'a*',
      'a[b',
      String.raw`a\b`,
      'a\u007F',
      'a]b',
      'a{b',
      'a@b',
      'a.b.c',
      '..',
      '.',
    ]
    for (const branch of cases) expect(validBranchName(branch), JSON.stringify(branch)).to.equal(gitAccepts(branch))
  })

  it('answers as git on generated names', () => {
    // Built from the characters the rules are about, so most samples hit one.
    const piece = fc.constantFrom(
      'a',
      'Z',
      '9',
      '/',
      '.',
      '..',
      '.lock',
      '@',
      '{',
      '@{',
      '-',
      ' ',
      '~',
      '^',
      ':',
      '?',
      '*',
      '[',
      '\\',
      '\u0001',
      '\u007F',
      'é',
      'HEAD',
    )
    fc.assert(
      fc.property(
        fc.array(piece, {minLength: 1, maxLength: 6}).map((parts) => parts.join('')),
        (branch) => validBranchName(branch) === gitAccepts(branch),
      ),
      {numRuns: 300},
    )
  })
})
