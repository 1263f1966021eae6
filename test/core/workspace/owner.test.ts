/**
 * The owner kept in the repository's directory of yard's state (src/core/workspace/owner.ts): the
 * same value as ownerHash, read back while the root is the same, computed anew for another root
 * or a file that says something else, and computed without keeping where nothing can be written.
 */
import {expect} from 'chai'
import {mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {ownerHash} from '../../../src/core/identity/identity.js'
import {repositoryStateDir} from '../../../src/core/kernel/repository-state.js'
import {repositoryOwner} from '../../../src/core/workspace/owner.js'
import {cleanupTemp, tempDir} from '../../support/repo.js'

describe('repositoryOwner (DESIGN.md §3)', () => {
  afterEach(cleanupTemp)

  it('keeps ownerHash of the root and reads it back while the root is the same, never inside .git', () => {
    const commonDir = path.join(tempDir('owner'), '.git')
    mkdirSync(commonDir)
    const env = {YARD_STATE_DIR: tempDir('state')}
    const file = path.join(repositoryStateDir(env, commonDir), 'owner.json')
    expect(file.startsWith(env.YARD_STATE_DIR)).to.equal(true)
    expect(repositoryOwner('/repos/app', env, commonDir)).to.equal(ownerHash('/repos/app'))
    expect(JSON.parse(readFileSync(file, 'utf8'))).to.deep.equal({root: '/repos/app', owner: ownerHash('/repos/app')})
    // What is kept answers (shown with a value no hash gives for this root).
    writeFileSync(file, JSON.stringify({root: '/repos/app', owner: 'abcdefabcdef'}))
    expect(repositoryOwner('/repos/app', env, commonDir)).to.equal('abcdefabcdef')
    // A copy of the repository elsewhere computes its own.
    expect(repositoryOwner('/repos/copy', env, commonDir)).to.equal(ownerHash('/repos/copy'))
    expect(JSON.parse(readFileSync(file, 'utf8')).root).to.equal('/repos/copy')
  })

  it('computes it again from a file it cannot read, and without keeping where nothing can be written', () => {
    const commonDir = path.join(tempDir('owner'), '.git')
    const env = {YARD_STATE_DIR: tempDir('state')}
    const file = path.join(repositoryStateDir(env, commonDir), 'owner.json')
    mkdirSync(path.dirname(file), {recursive: true})
    for (const text of ['{not json', JSON.stringify({root: '/repos/app', owner: 'X'.repeat(12)}), '[]']) {
      writeFileSync(file, text)
      expect(repositoryOwner('/repos/app', env, commonDir), text).to.equal(ownerHash('/repos/app'))
    }

    // A state directory below a regular file: neither read nor written (root ignores mode bits, so no chmod).
    const blocked = path.join(tempDir('owner'), 'state-file')
    writeFileSync(blocked, '')
    expect(repositoryOwner('/repos/app', {YARD_STATE_DIR: blocked}, commonDir)).to.equal(ownerHash('/repos/app'))
  })
})
