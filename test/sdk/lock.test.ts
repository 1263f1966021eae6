import {expect} from 'chai'
import {spawn} from 'node:child_process'
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import os from 'node:os'
import path from 'node:path'

import {OperationError, RefusedError} from '../../src/sdk/errors.js'
import {acquireLock, withLock} from '../../src/sdk/lock.js'
import {cleanupTemp, tempDir} from '../support/repo.js'

/** Whether `pid` runs (a zombie, killed but not yet reaped by its parent, does not). */
function alive(pid: number): boolean {
  try {
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ', 2)[1].startsWith('Z')
  } catch {
    return false
  }
}

describe('lock files (DESIGN.md §3.4, "Locks")', () => {
  afterEach(cleanupTemp)

  it('writes pid, host and start time, and removes the file on release', async () => {
    const file = path.join(tempDir('lock'), 'sub', 'offsets.lock')
    const lock = await acquireLock(file, {budgetMs: 10_000, purpose: 'test'})
    const owner = JSON.parse(readFileSync(file, 'utf8'))
    expect(owner).to.include({pid: process.pid, host: os.hostname(), purpose: 'test'})
    expect(Date.parse(owner.started)).to.be.closeTo(Date.now(), 5000)
    await lock.release()
    expect(existsSync(file)).to.equal(false)
  })

  it('serialises holders: the second waits until the first releases', async () => {
    const file = path.join(tempDir('lock'), 'a.lock')
    const order: string[] = []
    const first = withLock(file, {budgetMs: 10_000}, async () => {
      order.push('first in')
      await new Promise((resolve) => setTimeout(resolve, 150))
      order.push('first out')
    })
    await new Promise((resolve) => setTimeout(resolve, 20))
    const second = withLock(file, {budgetMs: 10_000}, async () => {
      order.push('second in')
    })
    await Promise.all([first, second])
    expect(order).to.deep.equal(['first in', 'first out', 'second in'])
  })

  it('refuses (exit 3) naming the holder when a live lock outlasts the wait', async () => {
    const file = path.join(tempDir('lock'), 'b.lock')
    const held = await acquireLock(file, {budgetMs: 60_000, purpose: 'worktree add feat'})
    let error: unknown
    try {
      await acquireLock(file, {budgetMs: 60_000, waitMs: 100})
    } catch (error_) {
      error = error_
    }

    expect(error).to.be.instanceOf(RefusedError)
    expect((error as RefusedError).message)
      .to.contain(`pid ${process.pid}`)
      .and.contain('worktree add feat')
    await held.release()
  })

  it('says clearly (exit 1) that a lock whose directory cannot be made or written cannot be taken, and writes nothing', async () => {
    const dir = tempDir('lock')
    // A file on the way to the lock's directory: ENOTDIR, as EROFS or EACCES would be.
    writeFileSync(path.join(dir, 'yard'), 'a file\n')
    let error: unknown
    try {
      await acquireLock(path.join(dir, 'yard', 'sub', 'offsets.lock'), {budgetMs: 10_000, purpose: 'worktree add feat'})
    } catch (error_) {
      error = error_
    }

    expect(error).to.be.instanceOf(OperationError)
    expect((error as OperationError).message).to.equal(`cannot take the lock ${dir}/yard/sub/offsets.lock: ENOTDIR`)
    expect((error as OperationError).why)
      .to.contain('(worktree add feat)')
      .and.contain('nothing was changed')
    expect((error as OperationError).fix).to.contain(`make ${dir}/yard/sub writable`)
    expect(readFileSync(path.join(dir, 'yard'), 'utf8')).to.equal('a file\n')
  })

  it('takes over a lock whose process is gone, with a warning', async () => {
    const file = path.join(tempDir('lock'), 'c.lock')
    const child = spawn(process.execPath, ['-e', '0'])
    await new Promise((resolve) => child.on('exit', resolve))
    writeFileSync(file, JSON.stringify({pid: child.pid, host: os.hostname(), started: new Date().toISOString()}))
    const warnings: string[] = []
    const lock = await acquireLock(file, {budgetMs: 60_000, waitMs: 2000, warn: (message) => warnings.push(message)})
    expect(JSON.parse(readFileSync(file, 'utf8')).pid).to.equal(process.pid)
    expect(warnings.join('\n')).to.match(
      new RegExp(`took over the stale lock .*pid ${child.pid}.*process ${child.pid} is gone`),
    )
    await lock.release()
  })

  it('takes over a live lock older than its budget, and an unreadable one', async () => {
    const dir = tempDir('lock')
    const old = path.join(dir, 'old.lock')
    writeFileSync(
      old,
      JSON.stringify({pid: process.ppid, host: os.hostname(), started: new Date(Date.now() - 3_600_000).toISOString()}),
    )
    const warnings: string[] = []
    const lock = await acquireLock(old, {budgetMs: 60_000, waitMs: 2000, warn: (message) => warnings.push(message)})
    expect(warnings.join('\n')).to.match(/older than its 60 s budget/)
    await lock.release()
    const garbage = path.join(dir, 'garbage.lock')
    writeFileSync(garbage, 'not json')
    const second = await acquireLock(garbage, {
      budgetMs: 60_000,
      waitMs: 2000,
      warn: (message) => warnings.push(message),
    })
    expect(warnings.join('\n')).to.match(/it is unreadable/)
    await second.release()
  })

  it('gives the lock to exactly one of many concurrent takers of a stale lock', async () => {
    const file = path.join(tempDir('lock'), 'd.lock')
    writeFileSync(file, JSON.stringify({pid: 999_999_999, host: os.hostname(), started: new Date().toISOString()}))
    let inside = 0
    let most = 0
    await Promise.all(
      Array.from({length: 8}, async () =>
        withLock(file, {budgetMs: 60_000, waitMs: 10_000}, async () => {
          inside++
          most = Math.max(most, inside)
          await new Promise((resolve) => setTimeout(resolve, 10))
          inside--
        }),
      ),
    )
    expect(most).to.equal(1)
    expect(existsSync(file)).to.equal(false)
  })

  it('ends the process group a gone holder recorded before taking the lock over', async () => {
    const file = path.join(tempDir('lock'), 'group.lock')
    const worker = spawn(process.execPath, [
      '--import',
      'tsx',
      new URL('../support/lock-group-worker.ts', import.meta.url).pathname,
      file,
    ])
    const orphan = await new Promise<number>((resolve) =>
      worker.stdout.once('data', (chunk) => resolve(Number(String(chunk).trim()))),
    )
    expect(JSON.parse(readFileSync(file, 'utf8'))).to.include({pid: worker.pid, group: orphan})
    worker.kill('SIGKILL')
    await new Promise((resolve) => worker.on('exit', resolve))
    expect(alive(orphan)).to.equal(true)
    const warnings: string[] = []
    const lock = await acquireLock(file, {budgetMs: 600_000, waitMs: 5000, warn: (message) => warnings.push(message)})
    expect(alive(orphan)).to.equal(false)
    expect(warnings.join('\n')).to.include(`process ${worker.pid} is gone (its process group ${orphan} was ended)`)
    await lock.release()
  })

  it('kills no group whose leader is another process than the one recorded (a recycled id)', async () => {
    const file = path.join(tempDir('lock'), 'recycled.lock')
    const gone = spawn(process.execPath, ['-e', '0'])
    await new Promise((resolve) => gone.on('exit', resolve))
    const bystander = spawn('sleep', ['30'], {detached: true, stdio: 'ignore'})
    try {
      writeFileSync(
        file,
        JSON.stringify({
          pid: gone.pid,
          host: os.hostname(),
          started: new Date().toISOString(),
          group: bystander.pid,
          groupStarted: '1',
        }),
      )
      const lock = await acquireLock(file, {budgetMs: 600_000, waitMs: 2000})
      expect(alive(bystander.pid!)).to.equal(true)
      await lock.release()
    } finally {
      bystander.kill('SIGKILL')
    }
  })

  it('clears the recorded group, and removes drafts left by killed processes', async () => {
    const dir = tempDir('lock')
    const file = path.join(dir, 'e.lock')
    writeFileSync(`${file}.draft-999999999-abc`, 'left by a kill\n')
    const lock = await acquireLock(file, {budgetMs: 60_000})
    expect(existsSync(`${file}.draft-999999999-abc`)).to.equal(false)
    lock.recordGroup(process.pid)
    expect(JSON.parse(readFileSync(file, 'utf8'))).to.include({group: process.pid})
    lock.recordGroup(undefined)
    expect(JSON.parse(readFileSync(file, 'utf8'))).to.not.have.property('group')
    await lock.release()
    expect(existsSync(file)).to.equal(false)
  })

  it('never has two holders across processes (8 processes × 25 rounds)', async () => {
    const dir = tempDir('lock')
    const worker = new URL('../support/lock-worker.ts', import.meta.url).pathname
    const results = await Promise.all(
      Array.from(
        {length: 8},
        async () =>
          new Promise<string>((resolve, reject) => {
            const child = spawn(process.execPath, [
              '--import',
              'tsx',
              worker,
              path.join(dir, 'x.lock'),
              path.join(dir, 'inside'),
              '25',
            ])
            let out = ''
            child.stdout.on('data', (chunk) => (out += chunk))
            child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`worker exited ${code}`))))
          }),
      ),
    )
    expect(results.map(Number)).to.deep.equal([0, 0, 0, 0, 0, 0, 0, 0])
  })
})
