/**
 * The owner kept beside the repository (src/core/workspace/owner.ts): the same value as
 * ownerHash, read back while the root is the same, computed anew for another root or a file that
 * says something else, and computed without keeping where nothing can be written.
 */
import {expect} from 'chai'
import {mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {ownerHash} from '../../../src/core/identity/identity.js'
import {repositoryOwner} from '../../../src/core/workspace/owner.js'
import {cleanupTemp, tempDir} from '../../support/repo.js'

describe('repositoryOwner (DESIGN.md §3)', () => {
  afterEach(cleanupTemp)

  it('keeps ownerHash of the root and reads it back while the root is the same', () => {
    const commonDir = path.join(tempDir('owner'), '.git')
    mkdirSync(commonDir)
    const file = path.join(commonDir, 'yard', 'owner')
    expect(repositoryOwner('/repos/app', commonDir)).to.equal(ownerHash('/repos/app'))
    expect(JSON.parse(readFileSync(file, 'utf8'))).to.deep.equal({root: '/repos/app', owner: ownerHash('/repos/app')})
    // What is kept answers (shown with a value no hash gives for this root).
    writeFileSync(file, JSON.stringify({root: '/repos/app', owner: 'abcdefabcdef'}))
    expect(repositoryOwner('/repos/app', commonDir)).to.equal('abcdefabcdef')
    // A copy of the repository elsewhere computes its own.
    expect(repositoryOwner('/repos/copy', commonDir)).to.equal(ownerHash('/repos/copy'))
    expect(JSON.parse(readFileSync(file, 'utf8')).root).to.equal('/repos/copy')
  })

  it('computes it again from a file it cannot read, and without keeping where nothing can be written', () => {
    const commonDir = path.join(tempDir('owner'), '.git')
    mkdirSync(path.join(commonDir, 'yard'), {recursive: true})
    for (const text of ['{not json', JSON.stringify({root: '/repos/app', owner: 'X'.repeat(12)}), '[]']) {
      writeFileSync(path.join(commonDir, 'yard', 'owner'), text)
      expect(repositoryOwner('/repos/app', commonDir), text).to.equal(ownerHash('/repos/app'))
    }

    // `yard` below a regular file: neither read nor written (root ignores mode bits, so no chmod).
    const blocked = path.join(tempDir('owner'), 'git-file')
    writeFileSync(blocked, '')
    expect(repositoryOwner('/repos/app', blocked)).to.equal(ownerHash('/repos/app'))
  })
})
