import {expect} from 'chai'
import {execFileSync} from 'node:child_process'
import {existsSync} from 'node:fs'
import path from 'node:path'

import {restoreHint} from '../../src/core/worktree/snapshot.js'
import {shellCommand, shellQuote} from '../../src/sdk/shell.js'
import {cleanupTemp, tempDir} from '../support/repo.js'

/** What sh makes of a printed command line: the words `printf` receives. */
function wordsOf(line: string): string[] {
  return execFileSync('sh', ['-c', String.raw`printf '%s\0' ${line}`], {encoding: 'utf8'})
    .split('\0')
    .slice(0, -1)
}

describe('printed commands are shell-quoted (POSIX sh, "Quoting")', () => {
  afterEach(cleanupTemp)

  it('pastes every word back as itself, running nothing', () => {
    const marker = path.join(tempDir('paste'), 'x')
    const words = [
      `fix;touch\${IFS}${marker}`,
      "it's",
      '$(touch x)',
      '`id`',
      'a b',
      '',
      'plain/word-1.2',
      '~',
      '*',
      'new\nline',
    ]
    expect(wordsOf(words.map((word) => shellQuote(word)).join(' '))).to.deep.equal(words)
    expect(existsSync(marker)).to.equal(false)
    expect(shellCommand(['git', 'branch', '-D', 'wt/feat'])).to.equal('git branch -D wt/feat')
    expect(shellCommand(['git', 'branch', '-D', 'fix;x'])).to.equal(`git branch -D 'fix;x'`)
  })

  it('quotes the branch and path of a restore hint', () => {
    const hint = restoreHint('refs/yard/removed/feat-20261201T000000Z', 'feat', 'fix;touch${IFS}/tmp/x', '/work/a b')
    expect(hint).to.equal(
      `yard worktree add feat 'fix;touch\${IFS}/tmp/x' && git -C '/work/a b' cherry-pick --no-commit refs/yard/removed/feat-20261201T000000Z`,
    )
  })
})
