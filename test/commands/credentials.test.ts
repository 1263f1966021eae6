import {expect} from 'chai'
import {readdirSync, readFileSync, statSync} from 'node:fs'
import path from 'node:path'

import {repoIdentity} from '../../src/sdk/repo-identity.js'
import {commitTo, git, makeUpstream} from '../plugins/git-cache/support.js'
import {throttledSsh} from '../support/kill-points.js'
import {cleanupTemp, tempDir} from '../support/repo.js'
import {yard} from '../support/yard.js'

const TOKEN = 'ghp_s3cretT0kenNobodyMayRead'

/** Every file under `dir` (recursively) whose bytes contain `needle`. */
function filesHolding(dir: string, needle: string): string[] {
  const found: string[] = []
  for (const entry of readdirSync(dir, {recursive: true, withFileTypes: true})) {
    if (!entry.isFile()) continue
    const file = path.join(entry.parentPath, entry.name)
    if (readFileSync(file).includes(needle)) found.push(file)
  }

  return found
}

describe('credentials in repository urls (acceptance 3)', function () {
  this.timeout(120_000)

  afterEach(() => cleanupTemp())

  it('a token given in an https or ssh url is found nowhere under the state directory, in any --json output or message; the state directory is 0700, records 0600', async () => {
    const upstream = makeUpstream()
    const state = path.join(tempDir('yard-home'), 'state')
    const sshDir = tempDir('yard-ssh')
    const throttle = throttledSsh(sshDir)
    // https://fake.invalid/… reaches the upstream through the fake ssh (git's insteadOf), so the
    // whole path of an https url with a token runs; the fake ssh logs the argv it was given.
    const env = {
      YARD_STATE_DIR: state,
      YARD_CACHE_ROOT: '',
      GIT_SSH: throttle.ssh,
      GIT_SSH_VARIANT: 'simple',
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'url.ssh://fake.invalid/.insteadOf',
      GIT_CONFIG_VALUE_0: 'https://fake.invalid/',
    }
    const cwd = tempDir('yard-cwd')
    const https = `https://user:${TOKEN}@fake.invalid${upstream}`
    const ssh = `ssh://git:${TOKEN}@fake.invalid${upstream}`
    const runs = [
      await yard(['cache', 'identity', '--json', https], {cwd, env}),
      await yard(['cache', 'add', '--json', https], {cwd, env}),
      await yard(['cache', 'add', '--json', ssh], {cwd, env}),
      await yard(['cache', 'add', https], {cwd, env}),
      await yard(['cache', 'list', '--json'], {cwd, env}),
      await yard(['cache', 'list'], {cwd, env}),
    ]
    commitTo(upstream, 'main', 'b', 'two\n')
    runs.push(
      await yard(['cache', 'fetch', '--json', https], {cwd, env}),
      await yard(['cache', 'fetch', '--all', '--json'], {cwd, env}),
      await yard(['cache', 'maintain', '--force', '--json', ssh], {cwd, env}),
      await yard(['cache', 'evict', '--dry-run', '--json', https], {cwd, env}),
    )
    for (const run of runs) expect(run.exitCode, run.stderr).to.equal(0)
    // Failures print the url too: an invalid one, and a repository that is gone.
    runs.push(await yard(['cache', 'add', `https://user:${TOKEN}@fake.invalid/a b`], {cwd, env}))
    runs.push(await yard(['cache', 'add', '--json', `https://user:${TOKEN}@fake.invalid/gone.git`], {cwd, env}))
    expect(runs.at(-2)!.exitCode).to.equal(2)
    expect(runs.at(-2)!.stderr).to.include('https://user:***@fake.invalid/a b')
    expect(runs.at(-1)!.exitCode).to.equal(1)

    const cache = path.join(state, 'caches', repoIdentity(https).key)
    expect(git(cache, ['config', 'remote.origin.url'])).to.equal(`https://fake.invalid${upstream}`)
    for (const run of runs) expect(run.stdout + run.stderr).to.not.include(TOKEN)
    expect(filesHolding(state, TOKEN)).to.deep.equal([])
    expect(readFileSync(path.join(sshDir, 'argv.log'), 'utf8')).to.include('fake.invalid')
    expect(filesHolding(sshDir, TOKEN)).to.deep.equal([])
    expect(statSync(state).mode & 0o777).to.equal(0o700)
    expect(statSync(`${cache}.json`).mode & 0o777).to.equal(0o600)
  })
})
