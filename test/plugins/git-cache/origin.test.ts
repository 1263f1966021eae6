import {expect} from 'chai'
import {existsSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import type {CacheStatus} from '../../../src/sdk/cache.js'

import {repoIdentity} from '../../../src/sdk/repo-identity.js'
import {cleanupTemp, tempDir} from '../../support/repo.js'
import {yard} from '../../support/yard.js'
import {commitTo, git, hasObject, localConfig, makeUpstream} from './support.js'

describe('git-cache: a cache fetches only from the repository its key names', function () {
  this.timeout(60_000)
  let cwd: string
  let root: string
  let env: Record<string, string>

  beforeEach(() => {
    cwd = tempDir('yard-cwd')
    root = path.join(tempDir('yard-root'), 'caches')
    env = {YARD_CACHE_ROOT: root}
  })

  afterEach(() => cleanupTemp())

  it(
    String.raw`add and fetch of the poisoning url http://host\@evil/../x exit 2 before anything is written or fetched`,
    async () => {
      const pwned = path.join(tempDir('yard-pwned'), 'pwned')
      // An ssh or a credential prompt git started would leave a trace.
      const traced = {...env, GIT_SSH_COMMAND: `touch ${pwned}`, GIT_ASKPASS: `touch ${pwned}`}
      for (const url of [
        String.raw`http://host\@evil/../x`,
        String.raw`https://github.com\@evil.example/Acme/App.git`,
        'ssh://-oProxyCommand=touch%20x/y',
        'git@-oProxyCommand=x:y',
        'ssh://@host/x',
      ]) {
        for (const verb of ['add', 'fetch', 'maintain']) {
          const run = await yard(['cache', verb, '--', url], {cwd, env: traced})
          expect(run.exitCode, `${verb} ${url}: ${run.stderr}`).to.equal(2)
          expect(run.stderr).to.include('invalid repository url')
        }
      }

      expect(existsSync(root)).to.equal(false)
      expect(existsSync(pwned)).to.equal(false)
    },
  )

  it('fetch and maintain of an unknown url exit 2 and create nothing (no root, no .leases, no row)', async () => {
    const unknown = makeUpstream('unknown')
    for (const verb of ['fetch', 'maintain']) {
      const run = await yard(['cache', verb, unknown], {cwd, env})
      expect(run.exitCode, run.stderr).to.equal(2)
      expect(run.stderr).to.include('there is no cache')
    }

    expect(existsSync(root)).to.equal(false)

    const known = makeUpstream()
    expect((await yard(['cache', 'add', known], {cwd, env})).exitCode).to.equal(0)
    const before = readdirSync(root).sort()
    for (const verb of ['fetch', 'maintain'])
      expect((await yard(['cache', verb, unknown], {cwd, env})).exitCode).to.equal(2)
    expect(readdirSync(root).sort()).to.deep.equal(before)
    const listed = (await yard(['cache', 'list', '--json'], {cwd, env})).json as CacheStatus[]
    expect(listed.map((row) => row.url)).to.deep.equal([known])
  })

  it('refuses (exit 3, with how to inspect and remove it) add, fetch and maintain of a cache whose origin was changed to another repository', async () => {
    const genuine = makeUpstream()
    const evil = makeUpstream('evil')
    const planted = commitTo(evil, 'main', 'payload', 'from the attacker\n')
    expect((await yard(['cache', 'add', genuine], {cwd, env})).exitCode).to.equal(0)
    const repo = path.join(root, repoIdentity(genuine).key)
    git(repo, ['config', 'remote.origin.url', evil])
    const record = readFileSync(`${repo}.json`, 'utf8')

    for (const verb of ['add', 'fetch', 'maintain']) {
      const run = await yard(['cache', verb, genuine], {cwd, env})
      expect(run.exitCode, `${verb}: ${run.stderr}`).to.equal(3)
      expect(run.stderr).to.include(`fetches from "${evil}", which is not ${repoIdentity(genuine).identity}`)
      expect(run.stderr)
        .to.include(`git -C ${repo} config --get remote.origin.url`)
        .and.include(`yard cache evict ${genuine}`)
    }

    expect(hasObject(repo, planted)).to.equal(false)
    expect(git(repo, ['config', 'remote.origin.url'])).to.equal(evil)
    expect(readFileSync(`${repo}.json`, 'utf8')).to.equal(record)

    // The fix it names works.
    expect((await yard(['cache', 'evict', genuine], {cwd, env})).exitCode).to.equal(0)
    expect((await yard(['cache', 'add', genuine], {cwd, env})).exitCode).to.equal(0)
    expect(git(repo, ['config', 'remote.origin.url'])).to.equal(genuine)
  })

  it("refuses to adopt a repository at the cache's path that was cloned from another repository, writing no record", async () => {
    const genuine = makeUpstream()
    const evil = makeUpstream('evil')
    expect((await yard(['cache', 'add', makeUpstream('other')], {cwd, env})).exitCode).to.equal(0)
    const repo = path.join(root, repoIdentity(genuine).key)
    git(root, ['clone', '-q', '--bare', '--', evil, repo])

    const run = await yard(['cache', 'add', genuine], {cwd, env})
    expect(run.exitCode, run.stderr).to.equal(3)
    expect(run.stderr).to.include(`fetches from "${evil}"`)
    expect(existsSync(`${repo}.json`)).to.equal(false)
    expect(localConfig(repo)).to.not.include('gc.auto=0')
  })

  it('refuses a cache whose record holds a url yard now refuses, and fetches nothing', async () => {
    const genuine = makeUpstream()
    expect((await yard(['cache', 'add', genuine], {cwd, env})).exitCode).to.equal(0)
    const repo = path.join(root, repoIdentity(genuine).key)
    const record = JSON.parse(readFileSync(`${repo}.json`, 'utf8'))
    writeFileSync(`${repo}.json`, JSON.stringify({...record, url: String.raw`file://${genuine}\@evil/`}))
    const run = await yard(['cache', 'fetch', genuine], {cwd, env})
    expect(run.exitCode, run.stderr).to.equal(3)
    expect(run.stderr).to.include('is a url yard refuses').and.include('backslash')
  })
})
