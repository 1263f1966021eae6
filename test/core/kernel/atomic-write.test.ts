/**
 * atomicWrite (src/core/kernel/atomic-write.ts): through a link by default (a yard.local.toml kept
 * in a dotfiles repository stays a link), never through one for yard's own records, and a cycle of
 * links is an error rather than a loop.
 */
import {expect} from 'chai'
import {lstatSync, readdirSync, readFileSync, symlinkSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {atomicWrite} from '../../../src/core/kernel/atomic-write.js'
import {cleanupTemp, tempDir} from '../../support/repo.js'

describe('atomicWrite', () => {
  afterEach(cleanupTemp)

  it('replaces the file a link points at and keeps the link a link', async () => {
    const dir = tempDir('atomic')
    writeFileSync(path.join(dir, 'real.toml'), 'old\n')
    symlinkSync('real.toml', path.join(dir, 'yard.local.toml'))
    await atomicWrite(path.join(dir, 'yard.local.toml'), 'new\n')
    expect(lstatSync(path.join(dir, 'yard.local.toml')).isSymbolicLink()).to.equal(true)
    expect(readFileSync(path.join(dir, 'real.toml'), 'utf8')).to.equal('new\n')
  })

  it('with followLinks false replaces a link planted at the name, writing nothing through it', async () => {
    const dir = tempDir('atomic')
    const victim = path.join(tempDir('victim'), 'bashrc')
    writeFileSync(victim, 'mine\n')
    symlinkSync(victim, path.join(dir, 'record.json'))
    await atomicWrite(path.join(dir, 'record.json'), '{}\n', {followLinks: false})
    expect(readFileSync(victim, 'utf8')).to.equal('mine\n')
    expect(lstatSync(path.join(dir, 'record.json')).isFile()).to.equal(true)
    expect(readFileSync(path.join(dir, 'record.json'), 'utf8')).to.equal('{}\n')
  })

  it('refuses a cycle of links with ELOOP, leaving no temporary file', async () => {
    const dir = tempDir('atomic')
    symlinkSync('b', path.join(dir, 'a'))
    symlinkSync('a', path.join(dir, 'b'))
    const error = await atomicWrite(path.join(dir, 'a'), 'x\n').then(
      () => undefined,
      (error_: NodeJS.ErrnoException) => error_,
    )
    expect(error?.code).to.equal('ELOOP')
    expect(readdirSync(dir).sort()).to.deep.equal(['a', 'b'])
    // Not followed, the cycle is simply replaced.
    await atomicWrite(path.join(dir, 'a'), 'x\n', {followLinks: false})
    expect(readFileSync(path.join(dir, 'a'), 'utf8')).to.equal('x\n')
  })
})
