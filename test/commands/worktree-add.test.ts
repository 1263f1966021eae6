import {expect} from 'chai'
import {existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {hashOffset, nameFromBranch} from '../../src/core/identity/identity.js'
import {cleanupTemp, git, makeRepo, tempDir, writeFile} from '../support/repo.js'
import {cleanEnv, commit, hasBranch, registered, remoteSetup, rootOf, yardWithReadOnly} from '../support/worktrees.js'
import {yard} from '../support/yard.js'

describe('yard worktree add (DESIGN.md §4.1, §3.4)', () => {
  afterEach(cleanupTemp)

  it("forks a new branch from origin/HEAD (origin/develop), never the main checkout's HEAD, prints the commit and sets no upstream", async () => {
    const setup = remoteSetup()
    const run = await yard(['worktree', 'add', 'feat'], {cwd: setup.main, env: cleanEnv(setup.stateDir)})
    expect(run.exitCode, run.stderr).to.equal(0)
    const feat = path.join(rootOf(setup.main), 'feat')
    expect(run.stdout).to.include(`base: origin/develop at ${setup.develop}`)
    expect(git(feat, 'rev-parse', 'HEAD')).to.equal(setup.develop)
    expect(git(feat, 'rev-parse', '--abbrev-ref', 'HEAD')).to.equal('wt/feat')
    const vv = git(feat, 'branch', '-vv')
      .split('\n')
      .find((line) => line.startsWith('* '))!
    expect(vv).to.match(/^\* wt\/feat\s+[0-9a-f]+ change develop\.txt$/)
    expect(() => git(feat, 'config', '--get', 'branch.wt/feat.merge')).to.throw()
    expect(git(setup.main, 'config', '--get', 'branch.wt/feat.yardBase')).to.equal('refs/remotes/origin/develop')
    expect(existsSync(path.join(feat, 'wip.txt'))).to.equal(false)
  })

  it('forks from main when there is no remote at all, and says so', async () => {
    const repo = makeRepo()
    const mainCommit = git(repo, 'rev-parse', 'HEAD')
    git(repo, 'checkout', '-q', '-b', 'wip')
    commit(repo, 'wip.txt', 'x\n')
    const run = await yard(['worktree', 'add', 'feat', '--json'], {cwd: repo, env: cleanEnv(tempDir('state'))})
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(run.json).to.deep.include({
      name: 'feat',
      branch: 'wt/feat',
      branchSource: 'new',
      upstream: null,
      fetched: null,
      base: {ref: 'main', commit: mainCommit, source: 'default-branch'},
    })
    expect(run.stderr).to.include('forking from the local main')
    expect(git(path.join(rootOf(repo), 'feat'), 'rev-parse', 'HEAD')).to.equal(mainCommit)
  })

  it('says out loud when it falls back to the current HEAD', async () => {
    const repo = makeRepo()
    git(repo, 'branch', '-q', '-m', 'main', 'trunk')
    const run = await yard(['worktree', 'add', 'feat', '--json'], {cwd: repo, env: cleanEnv(tempDir('state'))})
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(run.json).to.have.nested.property('base.source', 'current-head')
    expect(run.stderr).to.match(
      /warning: no origin\/HEAD, origin\/main, main, origin\/master or master: forking from the current HEAD \(trunk at [0-9a-f]{12}\)/,
    )
  })

  it("fetches the base's remote first, so a commit pushed since the last fetch is the base; --no-fetch does not", async () => {
    const setup = remoteSetup()
    const env = cleanEnv(setup.stateDir)
    git(setup.other, 'checkout', '-q', 'develop')
    const pushed = commit(setup.other, 'late.txt', 'late\n')
    git(setup.other, 'push', '-q', 'origin', 'develop')
    const stale = await yard(['worktree', 'add', 'stale', '--no-fetch', '--json'], {cwd: setup.main, env})
    expect(stale.exitCode, stale.stderr).to.equal(0)
    expect(stale.json).to.deep.include({
      fetched: null,
      base: {ref: 'origin/develop', commit: setup.develop, source: 'origin-head'},
    })
    const fresh = await yard(['worktree', 'add', 'fresh', '--json'], {cwd: setup.main, env})
    expect(fresh.exitCode, fresh.stderr).to.equal(0)
    expect(fresh.json).to.deep.include({
      fetched: 'origin',
      base: {ref: 'origin/develop', commit: pushed, source: 'origin-head'},
    })
  })

  it('warns and goes on when the fetch fails', async () => {
    const setup = remoteSetup()
    git(setup.main, 'remote', 'set-url', 'origin', path.join(tempDir('gone'), 'missing.git'))
    const run = await yard(['worktree', 'add', 'feat', '--json'], {cwd: setup.main, env: cleanEnv(setup.stateDir)})
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(run.stderr).to.match(/warning: git fetch origin failed \(fatal: .+\); going on with the refs fetched before/)
    expect(run.stderr).not.to.contain('the repository exists')
    expect(run.json).to.deep.include({
      fetched: null,
      base: {ref: 'origin/develop', commit: setup.develop, source: 'origin-head'},
    })
  })

  it('warns about a configured base that does not resolve and falls through to auto-detection', async () => {
    const setup = remoteSetup({'yard.toml': '[worktrees]\nbase = "origin/nope"\n'})
    const run = await yard(['worktree', 'add', 'feat', '--json'], {cwd: setup.main, env: cleanEnv(setup.stateDir)})
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(run.stderr).to.include(
      'warning: the base "origin/nope" from yard.toml [worktrees] base does not resolve; falling back to',
    )
    expect(run.json).to.deep.include({base: {ref: 'origin/develop', commit: setup.develop, source: 'origin-head'}})
    const fromEnv = await yard(['worktree', 'add', 'other', '--json', '--no-fetch'], {
      cwd: setup.main,
      env: {...cleanEnv(setup.stateDir), YARD_WORKTREE_BASE: 'main'},
    })
    expect(fromEnv.json).to.deep.include({base: {ref: 'main', commit: setup.staleMain, source: 'config'}})
  })

  it('exits 2 for --from that does not resolve, creating nothing: no directory, no branch, no registration', async () => {
    const setup = remoteSetup()
    const before = git(setup.main, 'for-each-ref')
    const run = await yard(['worktree', 'add', 'feat', '--from', 'nope'], {
      cwd: setup.main,
      env: cleanEnv(setup.stateDir),
    })
    expect(run.exitCode).to.equal(2)
    expect(run.stderr).to.include('--from nope does not name a commit')
    expect(existsSync(path.join(rootOf(setup.main), 'feat'))).to.equal(false)
    expect(existsSync(rootOf(setup.main))).to.equal(false)
    expect(hasBranch(setup.main, 'wt/feat')).to.equal(false)
    expect(registered(setup.main)).to.deep.equal([setup.main])
    expect(git(setup.main, 'for-each-ref')).to.equal(before)
    const fromTag = await yard(['worktree', 'add', 'feat', '--from', 'main', '--json'], {
      cwd: setup.main,
      env: cleanEnv(setup.stateDir),
    })
    expect(fromTag.json).to.deep.include({base: {ref: 'main', commit: setup.staleMain, source: 'from'}})
  })

  it('checks an existing local branch out as it is, noting an ignored --from; a branch only on origin is created tracking it', async () => {
    const setup = remoteSetup()
    const env = cleanEnv(setup.stateDir)
    git(setup.main, 'branch', '-q', 'topic', setup.wip)
    const local = await yard(['worktree', 'add', 'topic', 'topic', '--from', 'origin/develop', '--json'], {
      cwd: setup.main,
      env,
    })
    expect(local.exitCode, local.stderr).to.equal(0)
    expect(local.json).to.deep.include({branch: 'topic', branchSource: 'existing', base: null, upstream: null})
    expect(local.stderr).to.include(
      'note: --from origin/develop was ignored: branch topic exists and is checked out as it is',
    )
    expect(git(path.join(rootOf(setup.main), 'topic'), 'rev-parse', 'HEAD')).to.equal(setup.wip)

    git(setup.other, 'checkout', '-q', '-b', 'x', 'origin/develop')
    const onOrigin = commit(setup.other, 'x.txt', 'x\n')
    git(setup.other, 'push', '-q', 'origin', 'x')
    const remote = await yard(['worktree', 'add', 'x', 'x', '--json'], {cwd: setup.main, env})
    expect(remote.exitCode, remote.stderr).to.equal(0)
    expect(remote.json).to.deep.include({branch: 'x', branchSource: 'remote', upstream: 'origin/x', fetched: 'origin'})
    const x = path.join(rootOf(setup.main), 'x')
    expect(git(x, 'rev-parse', 'HEAD')).to.equal(onOrigin)
    expect(git(x, 'rev-parse', '--abbrev-ref', 'x@{upstream}')).to.equal('origin/x')
  })

  it('refuses (exit 2) a name already in use and a branch checked out elsewhere', async () => {
    const setup = remoteSetup()
    const env = cleanEnv(setup.stateDir)
    expect((await yard(['worktree', 'add', 'feat', '--no-fetch'], {cwd: setup.main, env})).exitCode).to.equal(0)
    const again = await yard(['worktree', 'add', 'feat', '--no-fetch'], {cwd: setup.main, env})
    expect(again.exitCode).to.equal(2)
    expect(again.stderr).to.include(`worktree feat already exists at ${path.join(rootOf(setup.main), 'feat')}`)
    const busy = await yard(['worktree', 'add', 'second', 'wip', '--no-fetch'], {cwd: setup.main, env})
    expect(busy.exitCode).to.equal(2)
    expect(busy.stderr).to.include(`branch wip is already checked out at ${setup.main}`)
    for (const [args, pattern] of [
      [['worktree', 'add', 'Bad.Name'], /invalid worktree name "Bad.Name"/],
      [['worktree', 'add', 'ok', 'bad..branch'], /invalid branch name "bad..branch"/],
      [['worktree', 'add'], /needs a NAME or --branch BRANCH/],
    ] as const) {
      const run = await yard([...args, '--no-fetch'], {cwd: setup.main, env})
      expect(run.exitCode, args.join(' ')).to.equal(2)
      expect(run.stderr).to.match(pattern)
    }

    expect(hasBranch(setup.main, 'bad..branch')).to.equal(false)
  })

  it('refuses a name in use and a busy branch before it fetches (no fetch warning with the remote gone)', async () => {
    const setup = remoteSetup()
    const env = cleanEnv(setup.stateDir)
    expect((await yard(['worktree', 'add', 'feat', '--no-fetch'], {cwd: setup.main, env})).exitCode).to.equal(0)
    git(setup.main, 'remote', 'set-url', 'origin', path.join(tempDir('gone'), 'missing.git'))
    const again = await yard(['worktree', 'add', 'feat'], {cwd: setup.main, env})
    expect(again.exitCode).to.equal(2)
    expect(again.stderr).to.include(`worktree feat already exists at ${path.join(rootOf(setup.main), 'feat')}`)
    const busy = await yard(['worktree', 'add', 'second', 'wip'], {cwd: setup.main, env})
    expect(busy.exitCode).to.equal(2)
    expect(busy.stderr).to.include(`branch wip is already checked out at ${setup.main}`)
    for (const run of [again, busy]) expect(run.stderr).not.to.include('git fetch origin failed')
    // A free name still fetches first (and warns that it could not).
    const free = await yard(['worktree', 'add', 'third'], {cwd: setup.main, env})
    expect(free.exitCode, free.stderr).to.equal(0)
    expect(free.stderr).to.include('git fetch origin failed')
  })

  it('derives the name from --branch: feature/Login.v2 → feature-login-v2-XXXX on the verbatim branch; a/x and a-x differ', async () => {
    const repo = makeRepo()
    const env = cleanEnv(tempDir('state'))
    const login = await yard(['worktree', 'add', '--branch', 'feature/Login.v2', '--json'], {cwd: repo, env})
    expect(login.exitCode, login.stderr).to.equal(0)
    expect(login.json)
      .to.have.property('name')
      .that.matches(/^feature-login-v2-[0-9a-f]{4}$/)
    expect(login.json).to.include({branch: 'feature/Login.v2', name: nameFromBranch('feature/Login.v2')})
    const slash = await yard(['worktree', 'add', '--branch', 'a/x', '--json'], {cwd: repo, env})
    const dash = await yard(['worktree', 'add', '--branch', 'a-x', '--json'], {cwd: repo, env})
    expect(dash.json).to.include({name: 'a-x', branch: 'a-x'})
    expect(slash.json)
      .to.have.property('name')
      .that.matches(/^a-x-[0-9a-f]{4}$/)
    expect(readdirSync(rootOf(repo)).sort()).to.deep.equal(
      [(slash.json as {name: string}).name, 'a-x', (login.json as {name: string}).name].sort(),
    )
    const ports = await yard(['ports', '--all', '--json'], {cwd: repo, env})
    const projects = (ports.json as Array<{project: string}>).map((row) => row.project)
    expect(new Set(projects).size).to.equal(projects.length)
  })

  it('pins a newcomer whose offset clashes (alpha and feat both hash to 59) to the lowest free offset, and says so', async () => {
    const repo = makeRepo({'yard.toml': '[ports]\nAPP_PORT = 3000\n'})
    const env = cleanEnv(tempDir('state'))
    writeFile(repo, 'yard.local.toml', '# personal settings\n[ports]\nAPP_PORT = 3100 # mine\n')
    expect((await yard(['worktree', 'add', 'feat'], {cwd: repo, env})).exitCode).to.equal(0)
    const alpha = await yard(['worktree', 'add', 'alpha', '--json'], {cwd: repo, env})
    expect(alpha.exitCode, alpha.stderr).to.equal(0)
    expect(alpha.json).to.deep.include({
      offset: 1,
      offsetSource: 'pin',
      pinned: {hashOffset: 59, clashedWith: ['feat']},
    })
    expect(alpha.stderr).to.include(
      `note: alpha's offset 59 clashes with feat: pinned alpha to offset 1 in ${path.join(repo, 'yard.local.toml')}`,
    )
    expect(readFileSync(path.join(repo, 'yard.local.toml'), 'utf8')).to.equal(
      '# personal settings\n[ports]\nAPP_PORT = 3100 # mine\n\n[worktree-offsets]\nalpha = 1 # yard: clash with feat\n',
    )
    const ports = await yard(['ports', '--worktree', 'alpha', '--json'], {cwd: repo, env})
    expect(ports.json).to.deep.include({offset: 1, offsetSource: 'pin', ports: {APP_PORT: 3101}, clashesWith: []})
  })

  it('refuses (exit 2) a target path that holds a file or a non-empty directory, creating nothing', async () => {
    const repo = makeRepo()
    const env = cleanEnv(tempDir('state'))
    writeFile(repo, 'yard.local.toml', '# keep me\n')
    expect((await yard(['worktree', 'add', 'feat'], {cwd: repo, env})).exitCode).to.equal(0)
    writeFileSync(path.join(rootOf(repo), 'alpha'), 'a file where the worktree would go\n')
    writeFile(path.join(rootOf(repo), 'beta'), 'notes.txt', 'mine\n')
    for (const [name, kind] of [
      ['alpha', 'a file'],
      ['beta', 'a non-empty directory'],
    ]) {
      const run = await yard(['worktree', 'add', name], {cwd: repo, env})
      expect(run.exitCode, run.stderr).to.equal(2)
      expect(run.stderr).to.contain(
        `cannot create worktree ${name}: ${path.join(rootOf(repo), name)} already exists and is ${kind}`,
      )
      expect(run.stderr).to.contain(`fix: move ${path.join(rootOf(repo), name)} out of the way`)
      expect(run.stderr).not.to.contain('rolled back')
      expect(hasBranch(repo, `wt/${name}`)).to.equal(false)
    }

    expect(readFileSync(path.join(repo, 'yard.local.toml'), 'utf8')).to.equal('# keep me\n')
    expect(registered(repo)).to.deep.equal([repo, path.join(rootOf(repo), 'feat')])
    expect(readFileSync(path.join(rootOf(repo), 'alpha'), 'utf8')).to.equal('a file where the worktree would go\n')
    expect(readFileSync(path.join(rootOf(repo), 'beta', 'notes.txt'), 'utf8')).to.equal('mine\n')
  })

  it('says clearly (exit 1) that it cannot add where .git/yard is read-only (as inside a box), and changes nothing', async () => {
    const setup = remoteSetup()
    const yardDir = path.join(setup.main, '.git', 'yard')
    mkdirSync(yardDir, {recursive: true})
    const before = git(setup.main, 'for-each-ref')
    // A read-only bind mount of .git/yard, as a box's mount is.
    const run = yardWithReadOnly(yardDir, ['worktree', 'add', 'feat', '--no-fetch'], {
      cwd: setup.main,
      env: cleanEnv(setup.stateDir),
    })
    expect(run.status, run.stderr).to.equal(1)
    expect(run.stderr).to.contain(`cannot take the lock ${yardDir}/offsets.lock: EROFS`)
    expect(run.stderr).to.contain('inside a yard box').and.contain('on the host, not inside a box')
    expect(run.stderr).not.to.contain('    at ')
    expect(git(setup.main, 'for-each-ref')).to.equal(before)
    expect(registered(setup.main)).to.deep.equal([setup.main])
    expect(existsSync(path.join(rootOf(setup.main), 'feat'))).to.equal(false)
  })

  it('refuses (exit 2) a pin file in a layout it cannot edit before creating anything, with the fix', async () => {
    const repo = makeRepo()
    const env = cleanEnv(tempDir('state'))
    expect((await yard(['worktree', 'add', 'feat'], {cwd: repo, env})).exitCode).to.equal(0)
    const dotted = '# pins as dotted keys defeat the text edit\nworktree-offsets.other = 5\n'
    writeFile(repo, 'yard.local.toml', dotted)
    const run = await yard(['worktree', 'add', 'alpha'], {cwd: repo, env})
    expect(run.exitCode, run.stderr).to.equal(2)
    expect(run.stderr).to.contain(
      `${path.join(repo, 'yard.local.toml')} writes [worktree-offsets] in a layout yard cannot edit`,
    )
    expect(run.stderr).to.contain('fix: write the pins as `name = offset` lines under a [worktree-offsets] header')
    expect(run.stderr).not.to.contain('rolled back')
    expect(existsSync(path.join(rootOf(repo), 'alpha'))).to.equal(false)
    expect(hasBranch(repo, 'wt/alpha')).to.equal(false)
    expect(registered(repo)).to.deep.equal([repo, path.join(rootOf(repo), 'feat')])
    expect(readFileSync(path.join(repo, 'yard.local.toml'), 'utf8')).to.equal(dotted)
  })

  it('adds yard.local.toml to .git/info/exclude when it writes a pin there and git does not ignore it, saying so once', async () => {
    const repo = makeRepo()
    const env = cleanEnv(tempDir('state'))
    expect((await yard(['worktree', 'add', 'feat'], {cwd: repo, env})).exitCode).to.equal(0)
    const alpha = await yard(['worktree', 'add', 'alpha'], {cwd: repo, env})
    expect(alpha.exitCode, alpha.stderr).to.equal(0)
    const exclude = path.join(repo, '.git', 'info', 'exclude')
    expect(alpha.stderr).to.contain(`note: added /yard.local.toml to ${exclude}`)
    expect(readFileSync(exclude, 'utf8').split('\n')).to.include('/yard.local.toml')
    expect(git(repo, 'status', '--porcelain', '--', 'yard.local.toml')).to.equal('')
    expect(git(repo, 'check-ignore', 'yard.local.toml')).to.equal('yard.local.toml')
    // Another newcomer on feat's offset is pinned too: the file is ignored now, so no second note.
    const clashing = Array.from({length: 1000}, (_, index) => `n${index}`).find(
      (name) => hashOffset(name) === hashOffset('feat'),
    )!
    const again = await yard(['worktree', 'add', clashing], {cwd: repo, env})
    expect(again.exitCode, again.stderr).to.equal(0)
    expect(again.stderr).to.contain(`pinned ${clashing} to offset`)
    expect(again.stderr).not.to.contain('info/exclude')
    expect(
      readFileSync(exclude, 'utf8')
        .split('\n')
        .filter((line) => line === '/yard.local.toml'),
    ).to.have.length(1)
  })
})
