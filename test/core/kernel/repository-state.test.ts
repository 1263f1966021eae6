/**
 * The per-repository state (src/core/kernel/repository-state.ts): inside yard's state directory,
 * one directory per git common dir, written through a temporary file that is never a link someone
 * planted.
 */
import {expect} from 'chai'
import {execFileSync} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {readKeptFile} from '../../../src/core/kernel/kept-file.js'
import {keepFile, repositoryStateDir} from '../../../src/core/kernel/repository-state.js'
import {cleanupTemp, tempDir} from '../../support/repo.js'

describe('repository state (per repository, in the state directory)', () => {
  afterEach(cleanupTemp)

  it('gives each common dir its own directory below YARD_STATE_DIR, the same every time', () => {
    const env = {YARD_STATE_DIR: tempDir('state')}
    const one = repositoryStateDir(env, '/repos/app/.git')
    expect(path.dirname(one)).to.equal(path.join(env.YARD_STATE_DIR, 'repositories'))
    expect(path.basename(one)).to.match(/^[0-9a-f]{16}$/)
    expect(repositoryStateDir(env, '/repos/app/.git')).to.equal(one)
    expect(repositoryStateDir(env, '/repos/other/.git')).not.to.equal(one)
  })

  it('keeps a file whole, and never writes through a link planted at its temporary name', () => {
    const file = path.join(tempDir('state'), 'repositories', 'x', 'kept.json')
    keepFile(file, 'one\n')
    expect(readFileSync(file, 'utf8')).to.equal('one\n')
    const victim = path.join(tempDir('victim'), 'bashrc')
    writeFileSync(victim, 'mine\n')
    const {random} = Math
    Math.random = () => 0.5
    try {
      symlinkSync(victim, `${file}.${process.pid}.8.tmp`)
      keepFile(file, 'two\n')
    } finally {
      Math.random = random
    }

    expect(readFileSync(victim, 'utf8')).to.equal('mine\n')
    expect(readFileSync(file, 'utf8'), 'left as it was').to.equal('one\n')
    expect(existsSync(`${file}.${process.pid}.8.tmp`), 'the planted link is not removed by yard either').to.equal(true)
  })

  it('reads back only a regular file within its size: a FIFO, a device, a directory or a large file is no kept file', () => {
    const dir = tempDir('kept')
    writeFileSync(path.join(dir, 'kept.json'), '{"a":1}\n')
    expect(readKeptFile(path.join(dir, 'kept.json'), 100)).to.equal('{"a":1}\n')
    expect(readKeptFile(path.join(dir, 'kept.json'), 4), 'larger than allowed').to.equal(undefined)
    expect(readKeptFile(path.join(dir, 'absent.json'), 100)).to.equal(undefined)
    mkdirSync(path.join(dir, 'directory'))
    expect(readKeptFile(path.join(dir, 'directory'), 100)).to.equal(undefined)
    // A FIFO with no writer would block a plain read for ever.
    execFileSync('mkfifo', [path.join(dir, 'fifo')])
    expect(readKeptFile(path.join(dir, 'fifo'), 100)).to.equal(undefined)
    symlinkSync('/dev/zero', path.join(dir, 'zero'))
    expect(readKeptFile(path.join(dir, 'zero'), 100)).to.equal(undefined)
  })
})
