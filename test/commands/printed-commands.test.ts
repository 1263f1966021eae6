import {expect} from 'chai'
import {execFileSync} from 'node:child_process'
import {existsSync} from 'node:fs'
import path from 'node:path'

import {cleanupTemp, makeRepo, tempDir} from '../support/repo.js'
import {cleanEnv, hasBranch} from '../support/worktrees.js'
import {yard} from '../support/yard.js'

describe('commands yard prints for pasting quote what they embed', () => {
  afterEach(cleanupTemp)

  it('worktree remove prints `git branch -D` with the branch quoted: pasting it deletes that branch and runs nothing else', async () => {
    const repo = makeRepo()
    const marker = path.join(tempDir('paste'), 'x')
    const branch = `fix;touch\${IFS}${marker}`
    const env = {
      ...cleanEnv(tempDir('state')),
      YARD_FIXTURE_STACK_LOG: path.join(tempDir('log'), 'stack.jsonl'),
      YARD_FIXTURE_STACK_FAIL: undefined,
    }
    const added = await yard(['worktree', 'add', 'fix', branch, '--no-fetch'], {
      cwd: repo,
      env,
      plugins: ['recording-stack'],
    })
    expect(added.exitCode, added.stderr).to.equal(0)
    const removed = await yard(['worktree', 'remove', 'fix', '--yes'], {cwd: repo, env, plugins: ['recording-stack']})
    expect(removed.exitCode, removed.stderr).to.equal(0)
    const printed = /delete it with: (.+)$/m.exec(removed.stdout)?.[1]
    expect(printed, removed.stdout).to.be.a('string')
    execFileSync('sh', ['-c', printed!], {cwd: repo, stdio: 'ignore'})
    expect(hasBranch(repo, branch)).to.equal(false)
    expect(existsSync(marker)).to.equal(false)
  })
})
