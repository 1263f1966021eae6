import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import {existsSync, statSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {ensureStateDir} from '../../../src/core/kernel/state.js'
import {InputError} from '../../../src/sdk/errors.js'
import {cleanupTemp, tempDir} from '../../support/repo.js'
import {projectRoot} from '../../support/yard.js'

/** `yard ARGS` as a process with a time limit: a hang must fail the test, not stall the suite. */
function yardProcess(
  args: string[],
  env: Record<string, string>,
): {status: number | null; stderr: string; timedOut: boolean} {
  const result = spawnSync(process.execPath, [path.join(projectRoot, 'bin', 'dev.js'), ...args], {
    cwd: tempDir('yard-cwd'),
    env: {...process.env, ...env},
    encoding: 'utf8',
    timeout: 30_000,
  })
  return {status: result.status, stderr: result.stderr, timedOut: result.error !== undefined}
}

describe('the state directory (DESIGN.md §2)', function () {
  this.timeout(90_000)

  afterEach(() => cleanupTemp())

  it('is created with mode 0700, its missing parents too', () => {
    const state = path.join(tempDir('yard-home'), 'a', 'b', 'state')
    expect(ensureStateDir({YARD_STATE_DIR: state})).to.equal(state)
    expect(statSync(state).mode & 0o777).to.equal(0o700)
    expect(ensureStateDir({YARD_STATE_DIR: state})).to.equal(state)
  })

  it('under /proc exits 2 at once naming the reason, instead of hanging in mkdir', () => {
    let caught: unknown
    try {
      ensureStateDir({YARD_STATE_DIR: '/proc/yard-test/state'})
    } catch (error) {
      caught = error
    }

    expect(caught).to.be.instanceOf(InputError)
    expect((caught as InputError).why).to.include('/proc takes no new directories (ENOENT')

    const run = yardProcess(['cache', 'list'], {YARD_STATE_DIR: '/proc/yard-test/state', YARD_CACHE_ROOT: ''})
    expect(run.timedOut, 'yard hung').to.equal(false)
    expect(run.status, run.stderr).to.equal(2)
    expect(run.stderr)
      .to.include('cannot create the state directory /proc/yard-test/state')
      .and.include('ENOENT')
      .and.include('YARD_STATE_DIR')
  })

  it('under a regular file exits 2 naming the file (ENOTDIR), and creates nothing', () => {
    const file = path.join(tempDir('yard-home'), 'plain-file')
    writeFileSync(file, 'not a directory\n')
    const run = yardProcess(['cache', 'list'], {YARD_STATE_DIR: path.join(file, 'state'), YARD_CACHE_ROOT: ''})
    expect(run.status, run.stderr).to.equal(2)
    expect(run.stderr).to.include(`${file} is a file, not a directory (ENOTDIR)`)
    expect(statSync(file).isFile()).to.equal(true)
    expect(existsSync(path.join(file, 'state'))).to.equal(false)
  })
})
