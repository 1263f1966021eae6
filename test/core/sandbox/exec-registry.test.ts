import {expect} from 'chai'
import {spawn} from 'node:child_process'
import {readdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {readsOnly, recordExec, runningExecs} from '../../../src/core/sandbox/exec-registry.js'
import {cleanupTemp, tempDir} from '../../support/repo.js'

const target = {sandbox: 'feat', slot: 'app', directory: 'feat-login'}

describe('exec registry: one agent per sandbox workspace', () => {
  after(cleanupTemp)

  it('tells read-only commands from ones that may write', () => {
    for (const argv of [
      ['git', 'status'],
      ['git', '-C', '/x', 'log', '-1'],
      ['/usr/bin/git', 'diff'],
      ['ls', '-la'],
      ['cat', 'f'],
      ['git'],
    ])
      expect(readsOnly(argv), argv.join(' ')).to.equal(true)
    for (const argv of [
      ['git', 'commit', '-m', 'x'],
      ['git', '-c', 'a=b', 'rebase', 'main'],
      ['claude'],
      ['sh', '-c', 'git status'],
      ['npm', 'test'],
      ['bash', '-l'],
    ])
      expect(readsOnly(argv), argv.join(' ')).to.equal(false)
  })

  it('returns the other running writers, forgets ended ones, and releases its own record', async () => {
    const state = tempDir('exec-registry')
    const sleeper = spawn('sleep', ['30'], {stdio: 'ignore'})
    try {
      // A record of another running exec (the sleeper) and one of an ended process.
      const first = recordExec(state, target, ['claude'])
      const recordDir = path.join(state, 'execs', target.sandbox, target.slot, target.directory)
      expect(readdirSync(recordDir)).to.deep.equal([`${process.pid}.json`])
      writeFileSync(
        path.join(recordDir, `${sleeper.pid}.json`),
        JSON.stringify({pid: sleeper.pid, argv: ['codex', 'exec'], started: '2026-12-01T10:00:00.000Z'}),
      )
      writeFileSync(
        path.join(recordDir, '999999999.json'),
        JSON.stringify({pid: 999_999_999, argv: ['git', 'commit'], started: '2026-12-01T09:00:00.000Z'}),
      )
      writeFileSync(path.join(recordDir, 'garbage.json'), '{not json')
      first.release()
      const writer = recordExec(state, target, ['git', 'commit', '-m', 'x'])
      expect(writer.writers.map((other) => other.pid)).to.deep.equal([sleeper.pid])
      expect(readdirSync(recordDir).sort()).to.deep.equal([`${process.pid}.json`, `${sleeper.pid}.json`].sort())
      writer.release()
      // A reader is warned about nobody; another worktree of the same sandbox is another workspace.
      expect(recordExec(state, target, ['git', 'status']).writers).to.deep.equal([])
      expect(recordExec(state, {...target, directory: 'other'}, ['claude']).writers).to.deep.equal([])
      expect(runningExecs(state, target).map((other) => other.pid)).to.include(sleeper.pid)
    } finally {
      sleeper.kill()
    }
  })

  it('records nothing and fails nothing when the state directory cannot be written', () => {
    const state = path.join(tempDir('exec-registry-ro'), 'file')
    writeFileSync(state, 'x')
    const result = recordExec(state, target, ['claude'])
    expect(result.writers).to.deep.equal([])
    result.release()
  })
})
