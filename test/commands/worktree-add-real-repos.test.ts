import {expect} from 'chai'
import {existsSync, readdirSync, readFileSync, renameSync} from 'node:fs'
import path from 'node:path'

import {cleanupTemp, git, tempDir, writeFile} from '../support/repo.js'
import {cleanEnv, rootOf} from '../support/worktrees.js'
import {yard} from '../support/yard.js'

const FILE = ['-c', 'protocol.file.allow=always']

/**
 * A bare repository at `<dir>/<name>.git` holding one commit with `files` (and the submodules added
 * by `submodules`).
 */
function upstream(dir: string, name: string, files: Record<string, string>, submodules: string[] = []): string {
  const work = path.join(dir, `src-${name}`)
  git(dir, 'init', '-q', '-b', 'main', work)
  for (const [file, content] of Object.entries(files)) writeFile(work, file, content)
  for (const sub of submodules) git(work, ...FILE, 'submodule', 'add', '-q', `../${sub}.git`, sub)
  git(work, 'add', '-A')
  git(work, 'commit', '-q', '-m', name)
  const bare = path.join(dir, `${name}.git`)
  git(dir, 'init', '-q', '--bare', '-b', 'main', bare)
  git(work, 'push', '-q', bare, 'main')
  return bare
}

/** Makes every upstream unreachable: any fetch or clone from them fails from now on. */
function cutOff(dir: string, names: string[]): void {
  for (const name of names) renameSync(path.join(dir, `${name}.git`), path.join(dir, `${name}-gone.git`))
}

describe('yard worktree add on real repositories: submodules, sparse and partial clones (DESIGN.md §4.1)', () => {
  afterEach(cleanupTemp)

  it('checks relative-url submodules (nested one level deeper) out at their recorded commits with every remote unreachable', async () => {
    const dir = tempDir('subs')
    upstream(dir, 'nested', {'n.txt': 'nested\n'})
    upstream(dir, 'lib', {'l.txt': 'lib\n'}, ['nested'])
    upstream(dir, 'app', {'a.txt': 'app\n'}, ['lib'])
    const main = path.join(dir, 'app')
    git(dir, ...FILE, 'clone', '-q', '--recurse-submodules', path.join(dir, 'app.git'), main)
    const recorded = git(main, 'submodule', 'status', '--recursive')
    cutOff(dir, ['app', 'lib', 'nested'])
    const run = await yard(['worktree', 'add', 'feat', '--json'], {cwd: main, env: cleanEnv(tempDir('state'))})
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(run.json).to.have.deep.property('submodules', {initialised: ['lib', 'lib/nested'], failed: []})
    const feat = path.join(rootOf(main), 'feat')
    // Same commits as main (a leading space: checked out at the recorded commit).
    expect(git(feat, 'submodule', 'status', '--recursive').replaceAll(/ \(.*\)/g, '')).to.equal(
      recorded.replaceAll(/ \(.*\)/g, ''),
    )
    expect(git(feat, 'submodule', 'status', '--recursive')).not.to.match(/(^|\n)[-+U]/)
    expect(existsSync(path.join(feat, 'lib', 'nested', 'n.txt'))).to.equal(true)
    // They fetch where main's do, not from main's git dir.
    expect(git(path.join(feat, 'lib'), 'remote', 'get-url', 'origin')).to.equal(path.join(dir, 'lib.git'))
    expect(git(path.join(feat, 'lib', 'nested'), 'remote', 'get-url', 'origin')).to.equal(path.join(dir, 'nested.git'))
    // Locked while its submodules were cloned (a kill then is rolled back), unlocked once done.
    expect(git(main, 'worktree', 'list', '--porcelain')).not.to.include('locked')
  })

  it('--no-submodules leaves them uninitialised; a submodule that cannot be cloned warns naming it and leaves the rest of the worktree whole', async () => {
    const dir = tempDir('subs')
    upstream(dir, 'lib', {'l.txt': 'lib\n'})
    upstream(dir, 'app', {'a.txt': 'app\n'}, ['lib'])
    const main = path.join(dir, 'app')
    git(dir, ...FILE, 'clone', '-q', '--recurse-submodules', path.join(dir, 'app.git'), main)
    cutOff(dir, ['app', 'lib'])
    const env = cleanEnv(tempDir('state'))
    const off = await yard(['worktree', 'add', 'off', '--no-submodules', '--json'], {cwd: main, env})
    expect(off.exitCode, off.stderr).to.equal(0)
    expect(readdirSync(path.join(rootOf(main), 'off', 'lib'))).to.deep.equal([])
    // main's git dir of lib is broken: the clone from it fails.
    renameSync(
      path.join(main, '.git', 'modules', 'lib', 'objects'),
      path.join(main, '.git', 'modules', 'lib', 'objects-moved'),
    )
    const broken = await yard(['worktree', 'add', 'broken', '--json'], {cwd: main, env})
    expect(broken.exitCode, broken.stderr).to.equal(0)
    expect(broken.stderr).to.match(/warning: submodule lib was not initialised \(.+\); the worktree has it empty/)
    expect(broken.json).to.have.deep.property('submodules', {initialised: [], failed: ['lib']})
    const worktree = path.join(rootOf(main), 'broken')
    expect(readdirSync(path.join(worktree, 'lib'))).to.deep.equal([])
    expect(existsSync(path.join(worktree, 'a.txt'))).to.equal(true)
    expect(git(worktree, 'status', '--porcelain')).to.equal('')
  })

  it("fetches from the submodule's own remote a recorded commit main's copy lacks", async () => {
    const dir = tempDir('subs')
    upstream(dir, 'lib', {'l.txt': 'lib\n'})
    upstream(dir, 'app', {'a.txt': 'app\n'}, ['lib'])
    const main = path.join(dir, 'app')
    git(dir, ...FILE, 'clone', '-q', '--recurse-submodules', path.join(dir, 'app.git'), main)
    // Upstream moves lib on; main fetches the superproject only.
    const srcLib = path.join(dir, 'src-lib')
    writeFile(srcLib, 'l2.txt', 'two\n')
    git(srcLib, 'add', '-A')
    git(srcLib, 'commit', '-q', '-m', 'two')
    git(srcLib, 'push', '-q', path.join(dir, 'lib.git'), 'main')
    const srcApp = path.join(dir, 'src-app')
    git(path.join(srcApp, 'lib'), 'pull', '-q', 'origin', 'main')
    git(srcApp, 'commit', '-q', '-am', 'bump lib')
    git(srcApp, 'push', '-q', path.join(dir, 'app.git'), 'main')
    git(main, 'fetch', '-q', '--no-recurse-submodules', 'origin')
    // The upstream is a local path: allowed here as a network url would be (git refuses file:// for
    // submodules by default).
    const env = {
      ...cleanEnv(tempDir('state')),
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'protocol.file.allow',
      GIT_CONFIG_VALUE_0: 'always',
    }
    const run = await yard(['worktree', 'add', 'feat', '--no-fetch', '--json'], {cwd: main, env})
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(run.json, run.stderr).to.have.deep.property('submodules', {initialised: ['lib'], failed: []})
    const feat = path.join(rootOf(main), 'feat')
    expect(git(path.join(feat, 'lib'), 'rev-parse', 'HEAD')).to.equal(git(srcLib, 'rev-parse', 'HEAD'))
    expect(existsSync(path.join(feat, 'lib', 'l2.txt'))).to.equal(true)
  })

  it("applies main's cone sparse-checkout to the new worktree: only that directory's files are written", async () => {
    const main = path.join(tempDir('sparse'), 'app')
    git(path.dirname(main), 'init', '-q', '-b', 'main', main)
    for (let index = 0; index < 2000; index++) writeFile(main, `d${index % 20}/f${index}.txt`, `${index}\n`)
    writeFile(main, 'top.txt', 'top\n')
    git(main, 'add', '-A')
    git(main, 'commit', '-q', '-m', 'many')
    git(main, 'sparse-checkout', 'set', '--cone', 'd7')
    const trace = path.join(tempDir('trace'), 'events')
    const run = await yard(['worktree', 'add', 'feat'], {
      cwd: main,
      env: {...cleanEnv(tempDir('state')), GIT_TRACE2_EVENT: trace},
    })
    expect(run.exitCode, run.stderr).to.equal(0)
    const feat = path.join(rootOf(main), 'feat')
    // git 2.39 copies main's patterns before its own checkout: one step, as a full add.
    const commands = readFileSync(trace, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as {event: string; argv?: string[]})
      .filter((event) => event.event === 'start')
      .map((event) => event.argv!.slice(1).join(' '))
    expect(
      commands
        .filter((command) => /^(-c \S+ )*(worktree add|checkout|sparse-checkout|worktree unlock)\b/.test(command))
        .map((command) => command.replace(/^(-c \S+ )*/, '').split(' --', 1)[0]),
    ).to.deep.equal(['worktree add'])
    expect(commands.some((command) => command.includes('--no-checkout'))).to.equal(false)
    expect(readdirSync(feat).sort()).to.deep.equal(['.git', 'd7', 'top.txt'])
    expect(readdirSync(path.join(feat, 'd7'))).to.have.length(100)
    expect(git(feat, 'sparse-checkout', 'list')).to.equal('d7')
    expect(git(main, 'worktree', 'list', '--porcelain')).not.to.include('locked')
    expect(git(feat, 'status', '--porcelain')).to.equal('')
  })

  it('a partial clone with its remote unreachable: exits 1 naming the missing objects and the fix, leaving no branch, directory or pin', async () => {
    const dir = tempDir('partial')
    upstream(dir, 'app', {'a.txt': 'app\n'})
    const src = path.join(dir, 'src-app')
    writeFile(src, 'late.txt', 'only upstream\n')
    git(src, 'add', '-A')
    git(src, 'commit', '-q', '-m', 'late')
    git(src, 'push', '-q', path.join(dir, 'app.git'), 'main')
    git(path.join(dir, 'app.git'), 'config', 'uploadpack.allowFilter', 'true')
    const main = path.join(dir, 'app')
    // file:// so that the filter applies (a local path clone ignores it).
    git(dir, 'clone', '-q', '--filter=blob:none', '--no-checkout', `file://${path.join(dir, 'app.git')}`, main)
    git(main, 'checkout', '-q', 'HEAD~1')
    cutOff(dir, ['app'])
    const env = cleanEnv(tempDir('state'))
    const run = await yard(['worktree', 'add', 'feat', '--no-fetch', '--from', 'origin/main'], {cwd: main, env})
    expect(run.exitCode, run.stderr).to.equal(1)
    expect(run.stderr).to.match(
      /this partial clone lacks 1 object of [0-9a-f]{12} \([0-9a-f]{40}\), and promisor remote origin could not give them/,
    )
    expect(run.stderr).to.include('make origin reachable and run the add again')
    expect(existsSync(path.join(rootOf(main), 'feat'))).to.equal(false)
    expect(git(main, 'branch', '--list', 'wt/feat')).to.equal('')
    expect(git(main, 'worktree', 'list', '--porcelain')).not.to.include('feat')
    expect(existsSync(path.join(main, 'yard.local.toml'))).to.equal(false)
    // What is local suffices: the commit main has checked out.
    const local = await yard(['worktree', 'add', 'old', '--no-fetch', '--from', 'HEAD'], {cwd: main, env})
    expect(local.exitCode, local.stderr).to.equal(0)
    expect(existsSync(path.join(rootOf(main), 'old', 'a.txt'))).to.equal(true)
  })

  it('a sparse partial clone offline: blobs outside the cone are not needed, so the add succeeds from what is local', async () => {
    const dir = tempDir('partial')
    upstream(dir, 'app', {'keep/k.txt': 'k\n', 'other/o.txt': 'o\n'})
    git(path.join(dir, 'app.git'), 'config', 'uploadpack.allowFilter', 'true')
    const main = path.join(dir, 'app')
    git(dir, 'clone', '-q', '--filter=blob:none', '--sparse', `file://${path.join(dir, 'app.git')}`, main)
    git(main, 'sparse-checkout', 'set', '--cone', 'keep')
    // Upstream adds a file outside the cone; main fetches the commit (trees, no blobs), then the remote goes.
    const src = path.join(dir, 'src-app')
    writeFile(src, 'other/new.txt', 'new\n')
    git(src, 'add', '-A')
    git(src, 'commit', '-q', '-m', 'outside the cone')
    git(src, 'push', '-q', path.join(dir, 'app.git'), 'main')
    git(main, 'fetch', '-q', 'origin')
    cutOff(dir, ['app'])
    const run = await yard(['worktree', 'add', 'feat', '--no-fetch', '--from', 'origin/main'], {
      cwd: main,
      env: cleanEnv(tempDir('state')),
    })
    expect(run.exitCode, run.stderr).to.equal(0)
    const feat = path.join(rootOf(main), 'feat')
    expect(readdirSync(feat).sort()).to.deep.equal(['.git', 'keep'])
    expect(existsSync(path.join(feat, 'keep', 'k.txt'))).to.equal(true)
    expect(existsSync(path.join(feat, 'other'))).to.equal(false)
  })
})
