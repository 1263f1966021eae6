/**
 * kill -9 during `yard worktree add` (DESIGN.md §4.1): at each point the next run of the same
 * command succeeds and leaves what a clean run leaves. The 20,000-file, ten-point version is
 * bench/worktree-add-kill.ts.
 */
import {expect} from 'chai'
import {execFileSync} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {writeAddJournal} from '../../src/core/worktree/journal.js'
import {addState, killAt, type KillPoint} from '../support/interrupted-add.js'
import {cleanupTemp, git, tempDir} from '../support/repo.js'
import {cleanEnv, yardWithReadOnly} from '../support/worktrees.js'
import {projectRoot, yard} from '../support/yard.js'

/** A repository of 40 × 50 files, committed once, for clones. */
function seedRepo(): string {
  const seed = path.join(tempDir('kill-seed'), 'seed')
  for (let dir = 0; dir < 40; dir++) {
    mkdirSync(path.join(seed, 'src', `d${String(dir).padStart(2, '0')}`), {recursive: true})
    for (let file = 0; file < 50; file++)
      writeFileSync(
        path.join(seed, 'src', `d${String(dir).padStart(2, '0')}`, `f${String(file).padStart(2, '0')}.ts`),
        `export const v = ${dir * 50 + file}\n`,
      )
  }

  git(seed, 'init', '-q', '-b', 'main')
  git(seed, 'add', '-A')
  git(seed, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'files')
  return seed
}

/**
 * Writes the journal an add of `feat` in the clone `main` would write (what a kill leaves), with
 * `fields` in place of its defaults: a new branch `wt/feat` at main's commit, no pin before.
 */
async function journalOfFeat(main: string, fields: Partial<Parameters<typeof writeAddJournal>[1]> = {}): Promise<void> {
  await writeAddJournal(path.join(main, '.git'), {
    name: 'feat',
    target: path.join(`${main}-worktrees`, 'feat'),
    branch: 'wt/feat',
    branchSource: 'new',
    commit: git(main, 'rev-parse', 'main'),
    pinBefore: null,
    ...fields,
  })
}

/**
 * What a kill inside `git worktree add` of feat leaves in the clone `main`, built by hand: the
 * journal, the base's config and the branch `-b` made (at origin/main), git's admin dir
 * `.git/worktrees/feat` holding the given files (`gitdir: true` names the target), and an empty
 * target. Returns the target.
 */
async function halfMadeAdd(
  main: string,
  files: {locked?: string; gitdir?: string | true; head?: string; indexLock?: boolean},
): Promise<string> {
  const target = path.join(`${main}-worktrees`, 'feat')
  const base = git(main, 'rev-parse', 'origin/main')
  await journalOfFeat(main, {commit: base})
  git(main, 'config', 'branch.wt/feat.yardBase', 'refs/remotes/origin/main')
  git(main, 'branch', 'wt/feat', base)
  const admin = path.join(main, '.git', 'worktrees', 'feat')
  mkdirSync(admin, {recursive: true})
  if (files.locked !== undefined) writeFileSync(path.join(admin, 'locked'), files.locked)
  if (files.gitdir !== undefined)
    writeFileSync(path.join(admin, 'gitdir'), files.gitdir === true ? `${path.join(target, '.git')}\n` : files.gitdir)
  if (files.head !== undefined) writeFileSync(path.join(admin, 'HEAD'), files.head)
  if (files.indexLock) writeFileSync(path.join(admin, 'index.lock'), '')
  mkdirSync(target, {recursive: true})
  return target
}

/**
 * A clone of the seed with a finished `worktree add feat`, and `refusedWith(words)`: writes the
 * journal a kill after git finished leaves, adds again, and expects exit 3 saying `<target>
 * <words>`, the worktree's files kept.
 */
async function finishedFeat(): Promise<{
  main: string
  env: Record<string, string | undefined>
  target: string
  refusedWith: (words: string) => Promise<void>
}> {
  const main = path.join(tempDir('kill'), 'app')
  git(path.dirname(main), 'clone', '-q', seedRepo(), 'app')
  const env = cleanEnv(tempDir('state'))
  expect((await yard(['worktree', 'add', 'feat', '--no-fetch'], {cwd: main, env})).exitCode).to.equal(0)
  const target = path.join(`${main}-worktrees`, 'feat')
  const refusedWith = async (words: string) => {
    await journalOfFeat(main)
    const refused = await yard(['worktree', 'add', 'feat', '--no-fetch'], {cwd: main, env})
    expect(refused.exitCode, refused.stderr).to.equal(3)
    expect(refused.stderr).to.contain(`and ${target} ${words}`)
    expect(existsSync(path.join(target, 'src', 'd00', 'f00.ts')), words).to.equal(true)
  }

  return {main, env, target, refusedWith}
}

const POINTS: KillPoint[] = [
  {label: 'the journal is written', appears: '.git/yard/adding/feat.json'},
  {label: 'git has registered the worktree (initializing)', appears: '.git/worktrees/feat/locked'},
  {label: 'a quarter of the files are checked out', appears: '<target>/src/d10/f00.ts'},
  {label: 'three quarters of the files are checked out', appears: '<target>/src/d30/f00.ts'},
]

/**
 * A seed repository, a state directory, a way to clone the seed, and the state a clean
 * `worktree add feat --no-fetch` leaves in a first clone (addState), to compare reruns with.
 */
async function cleanRun(): Promise<{env: NodeJS.ProcessEnv; clone: () => string; expected: Record<string, string>}> {
  const seed = seedRepo()
  const env = cleanEnv(tempDir('state'))
  const clone = () => {
    const main = path.join(tempDir('kill'), 'app')
    git(path.dirname(main), 'clone', '-q', seed, 'app')
    return main
  }

  const clean = clone()
  const first = await yard(['worktree', 'add', 'feat', '--no-fetch'], {cwd: clean, env})
  expect(first.exitCode, first.stderr).to.equal(0)
  return {env, clone, expected: addState(clean, 'feat')}
}

describe('yard worktree add killed with SIGKILL (DESIGN.md §4.1)', function () {
  this.timeout(120_000)

  afterEach(cleanupTemp)

  it('the next run succeeds at every kill point and leaves the state of a clean run', async () => {
    const {env, clone, expected} = await cleanRun()
    expect(expected.files).to.equal('2000')

    const childEnv = {...process.env, ...env}
    for (const key of Object.keys(childEnv)) if (childEnv[key] === undefined) delete childEnv[key]
    for (const point of POINTS) {
      const main = clone()
      const target = path.join(`${main}-worktrees`, 'feat')
      const outcome = await killAt(
        [process.execPath, path.join(projectRoot, 'bin', 'dev.js'), 'worktree', 'add', 'feat', '--no-fetch'],
        {cwd: main, env: childEnv, point, target},
      )
      expect(outcome.killed, `killed when ${point.label}`).to.equal(true)
      const rerun = await yard(['worktree', 'add', 'feat', '--no-fetch'], {cwd: main, env})
      expect(rerun.exitCode, `rerun after a kill when ${point.label}: ${rerun.stderr}`).to.equal(0)
      expect(addState(main, 'feat'), `after a kill when ${point.label}`).to.deep.equal(expected)
    }
  })

  it('a SIGKILL of yard alone leaves its git checking out: the next run waits for that git, then rolls back', async () => {
    const {env, clone, expected} = await cleanRun()
    const childEnv = {...process.env, ...env}
    for (const key of Object.keys(childEnv)) if (childEnv[key] === undefined) delete childEnv[key]
    const main = clone()
    // A slow checkout of the first 100 files (a smudge filter through info/attributes, shared by
    // every worktree): the orphaned git is still writing them when the rerun starts. The filter
    // logs each file it gives the orphan (ORPHAN_LOG is set for the killed run alone).
    const log = path.join(tempDir('orphan'), 'smudged')
    writeFileSync(path.join(main, '.git', 'info', 'attributes'), 'src/d0[01]/* filter=slow\n')
    git(main, 'config', 'filter.slow.smudge', 'sleep 0.01; cat; [ -z "$ORPHAN_LOG" ] || echo x >> "$ORPHAN_LOG"')
    git(main, 'config', 'filter.slow.clean', 'cat')
    const target = path.join(`${main}-worktrees`, 'feat')
    const outcome = await killAt(
      [process.execPath, path.join(projectRoot, 'bin', 'dev.js'), 'worktree', 'add', 'feat', '--no-fetch'],
      // To yard's process alone, as `kill -9 PID` or the OOM killer does: git is not in the kill.
      {
        cwd: main,
        env: {...childEnv, ORPHAN_LOG: log},
        point: {label: 'git writes files', appears: '<target>/src/d00/f00.ts'},
        target,
        signal: 'SIGKILL',
      },
    )
    expect(outcome.exitCode).to.equal(null)
    expect(existsSync(path.join(main, '.git', 'worktrees', 'feat', 'index.lock')), 'git still checking out').to.equal(
      true,
    )
    const rerun = await yard(['worktree', 'add', 'feat', '--no-fetch'], {cwd: main, env})
    expect(rerun.exitCode, rerun.stderr).to.equal(0)
    expect(rerun.stderr).to.contain(`a git is still checking out ${target}`)
    // The rollback began once the orphan had ended: it wrote every slow file, none was taken from under it.
    expect(readFileSync(log, 'utf8').split('\n').filter(Boolean)).to.have.length(100)
    expect(addState(main, 'feat')).to.deep.equal(expected)
  })

  it("a kill between git's creating `gitdir` and writing it (an empty file) is rolled back too", async () => {
    const {env, clone, expected} = await cleanRun()
    // What builtin/worktree.c's add_worktree leaves when killed inside write_file of `gitdir`: the
    // admin dir, its `locked` (initializing), an empty `gitdir`, and the branch `-b` made before.
    const main = clone()
    await halfMadeAdd(main, {locked: 'initializing', gitdir: ''})
    const rerun = await yard(['worktree', 'add', 'feat', '--no-fetch'], {cwd: main, env})
    expect(rerun.exitCode, rerun.stderr).to.equal(0)
    expect(rerun.stderr).to.contain('rolled back: removed the half-made worktree')
    expect(addState(main, 'feat')).to.deep.equal(expected)
  })

  it("a kill inside git's first writes — `locked` still empty or absent, HEAD not yet set — is rolled back too", async () => {
    const {env, clone, expected} = await cleanRun()
    // add_worktree makes the admin dir, writes `locked`, `gitdir`, then HEAD as the null object id
    // before pointing it at the branch; a SIGKILL may land inside any of those writes.
    const states: Array<{label: string; locked?: string; gitdir?: true; head?: string}> = [
      {label: 'the admin dir is made, nothing in it'},
      {label: '`locked` is created, not yet written', locked: ''},
      {label: '`gitdir` is written, HEAD is not', locked: '', gitdir: true},
      {label: 'HEAD is the null object id', locked: '', gitdir: true, head: `${'0'.repeat(40)}\n`},
      {label: 'HEAD is created, not yet written', gitdir: true, head: ''},
    ]
    for (const state of states) {
      const main = clone()
      await halfMadeAdd(main, state)
      const rerun = await yard(['worktree', 'add', 'feat', '--no-fetch'], {cwd: main, env})
      expect(rerun.exitCode, `${state.label}: ${rerun.stderr}`).to.equal(0)
      expect(rerun.stderr, state.label).to.contain('rolled back: removed the half-made worktree')
      expect(addState(main, 'feat'), state.label).to.deep.equal(expected)
    }
  })

  it('a rollback that cannot remove what the add made says so (exit 1), keeps the journal, and the next add finishes it', async () => {
    const {env, clone, expected} = await cleanRun()
    const main = clone()
    const target = await halfMadeAdd(main, {locked: 'initializing', gitdir: true, head: 'ref: refs/heads/wt/feat\n'})
    writeFileSync(path.join(target, 'half.ts'), 'cut short\n')
    // The worktrees root read-only, in a private mount namespace (root only): its files cannot go.
    const blocked = yardWithReadOnly(path.dirname(target), ['worktree', 'add', 'feat', '--no-fetch'], {cwd: main, env})
    expect(blocked.status, blocked.stderr).to.equal(1)
    expect(blocked.stderr).to.contain('could not roll back the interrupted `yard worktree add feat`: EROFS on')
    expect(blocked.stderr).to.contain('fix: make that path removable').and.not.contain('    at ')
    expect(existsSync(path.join(main, '.git', 'yard', 'adding', 'feat.json'))).to.equal(true)
    const rerun = await yard(['worktree', 'add', 'feat', '--no-fetch'], {cwd: main, env})
    expect(rerun.exitCode, rerun.stderr).to.equal(0)
    expect(addState(main, 'feat')).to.deep.equal(expected)
  })

  it('refuses (exit 3) a journal that names another path than the worktree of that name, and removes nothing', async () => {
    const main = path.join(tempDir('kill'), 'app')
    git(path.dirname(main), 'clone', '-q', seedRepo(), 'app')
    const env = cleanEnv(tempDir('state'))
    const elsewhere = path.join(tempDir('elsewhere'), 'precious')
    mkdirSync(elsewhere)
    writeFileSync(path.join(elsewhere, 'work'), 'mine\n')
    await journalOfFeat(main, {target: elsewhere, branch: 'main'})
    const refused = await yard(['worktree', 'add', 'feat', '--no-fetch'], {cwd: main, env})
    expect(refused.exitCode, refused.stderr).to.equal(3)
    expect(refused.stderr).to.contain(`names "${elsewhere}", not`)
    expect(readFileSync(path.join(elsewhere, 'work'), 'utf8')).to.equal('mine\n')
    expect(git(main, 'rev-parse', '--verify', '-q', 'refs/heads/main')).to.match(/^[0-9a-f]{40}$/)
  })

  it('refuses (exit 3) a record that is not one yard wrote — a path through a link, a value out of range, not JSON, null — and undoes nothing', async () => {
    const main = path.join(tempDir('kill'), 'app')
    git(path.dirname(main), 'clone', '-q', seedRepo(), 'app')
    const env = cleanEnv(tempDir('state'))
    const target = path.join(`${main}-worktrees`, 'feat')
    const journalFile = path.join(main, '.git', 'yard', 'adding', 'feat.json')
    mkdirSync(path.dirname(journalFile), {recursive: true})
    const canary = path.join(tempDir('canary'), 'kept')
    mkdirSync(path.join(canary, 'sub'), {recursive: true})
    writeFileSync(path.join(canary, 'precious'), 'mine\n')
    // `<target>/l/..` resolves, as text, to the target; the kernel follows `l` first, to the canary.
    mkdirSync(target, {recursive: true})
    symlinkSync(path.join(canary, 'sub'), path.join(target, 'l'))
    const valid = {
      name: 'feat',
      target,
      branch: 'wt/feat',
      branchSource: 'new',
      commit: git(main, 'rev-parse', 'main'),
      pinBefore: null,
    }
    const records: Array<[string, string]> = [
      [JSON.stringify({...valid, target: path.join(target, 'l') + '/..'}), `names "${target}/l/.."`],
      [JSON.stringify({...valid, pinBefore: 99_999}), 'its pinBefore 99999 is neither null nor an offset'],
      [JSON.stringify({...valid, pinBefore: '1\n[pins]'}), 'its pinBefore'],
      [JSON.stringify({...valid, branch: '--force'}), 'is no branch name'],
      [JSON.stringify({...valid, commit: 'HEAD'}), 'is no object id'],
      ['null', 'it is no JSON object'],
      ['{"name": "feat", "target"', 'it is not JSON'],
    ]
    for (const [text, problem] of records) {
      writeFileSync(journalFile, text)
      const refused = await yard(['worktree', 'add', 'feat', '--no-fetch'], {cwd: main, env})
      expect(refused.exitCode, `${text}: ${refused.stderr}`).to.equal(3)
      expect(refused.stderr, text).to.contain('is not one yard wrote').and.contain(problem)
      expect(readFileSync(path.join(canary, 'precious'), 'utf8'), text).to.equal('mine\n')
      expect(existsSync(path.join(canary, 'sub')), text).to.equal(true)
      expect(readFileSync(journalFile, 'utf8'), text).to.equal(text)
    }

    expect(existsSync(path.join(main, 'yard.local.toml'))).to.equal(false)
  })

  it("never deletes a branch a worktree has checked out, and counts ignored files as someone's work", async () => {
    const main = path.join(tempDir('kill'), 'app')
    git(path.dirname(main), 'clone', '-q', seedRepo(), 'app')
    const env = cleanEnv(tempDir('state'))
    const mainCommit = git(main, 'rev-parse', 'main')
    // A record whose branch is main's own, at main's commit: the rollback must leave it.
    await journalOfFeat(main, {branch: 'main', commit: mainCommit})
    git(main, 'config', 'branch.main.yardBase', 'refs/remotes/origin/main')
    const added = await yard(['worktree', 'add', 'feat', '--no-fetch'], {cwd: main, env})
    expect(added.exitCode, added.stderr).to.equal(0)
    expect(added.stderr).not.to.contain('deleted branch')
    expect(git(main, 'rev-parse', 'main')).to.equal(mainCommit)
    expect(git(main, 'config', '--get', 'branch.main.yardBase')).to.equal('refs/remotes/origin/main')

    // A finished worktree whose only change is an ignored file (a .env made since) is not rolled back.
    const target = path.join(`${main}-worktrees`, 'feat')
    writeFileSync(path.join(main, '.git', 'info', 'exclude'), '*.env\n')
    writeFileSync(path.join(target, 'local.env'), 'SECRET=1\n')
    await journalOfFeat(main, {commit: git(main, 'rev-parse', 'wt/feat')})
    const refused = await yard(['worktree', 'add', 'feat', '--no-fetch'], {cwd: main, env})
    expect(refused.exitCode, refused.stderr).to.equal(3)
    expect(refused.stderr).to.contain('has changes since')
    expect(readFileSync(path.join(target, 'local.env'), 'utf8')).to.equal('SECRET=1\n')
  })

  it("keeps a finished worktree someone worked in — under a user's lock, on a detached HEAD, or when git status fails — and refuses a FIFO for a journal at once", async () => {
    const {main, env, target, refusedWith} = await finishedFeat()

    // A lock the user took is no add in flight: the changes check still runs.
    git(main, 'worktree', 'lock', '--reason', 'keep', target)
    writeFileSync(path.join(target, 'work.txt'), 'mine\n')
    await refusedWith('has changes since')
    expect(readFileSync(path.join(target, 'work.txt'), 'utf8')).to.equal('mine\n')
    git(main, 'worktree', 'unlock', target)
    rmSync(path.join(target, 'work.txt'))

    // A status git cannot give (a broken index) is no clean worktree.
    writeFileSync(path.join(main, '.git', 'worktrees', 'feat', 'index'), 'garbage')
    await refusedWith('cannot be checked for changes (git status:')
    expect(readFileSync(path.join(target, 'src', 'd00', 'f00.ts'), 'utf8')).to.equal('export const v = 0\n')
    rmSync(path.join(main, '.git', 'worktrees', 'feat', 'index'))
    git(target, 'reset', '-q')

    // A commit on a detached HEAD lives only in the worktree's reflog.
    git(target, 'checkout', '-q', '--detach')
    git(
      target,
      '-c',
      'user.name=t',
      '-c',
      'user.email=t@example.com',
      'commit',
      '-q',
      '--allow-empty',
      '-m',
      'detached',
    )
    await refusedWith('is no longer on branch wt/feat')
    git(target, 'checkout', '-q', 'wt/feat')

    // A FIFO at a journal's name is refused without waiting for a writer.
    execFileSync('mkfifo', [path.join(main, '.git', 'yard', 'adding', 'other.json')])
    const fifo = await yard(['worktree', 'add', 'other', '--no-fetch'], {cwd: main, env})
    expect(fifo.exitCode, fifo.stderr).to.equal(3)
    expect(fifo.stderr).to.contain('it is not a regular file')
  })

  it('keeps a finished worktree whose work git status does not show: a commit switched back from, its own refs, flagged files, beside another half-made id; a FIFO HEAD does not hang', async () => {
    const {main, env, target, refusedWith} = await finishedFeat()
    const admin = path.join(main, '.git', 'worktrees', 'feat')

    // Another id of the basename, half-made (a killed add whose target is also named feat): the
    // finished feat is checked all the same.
    mkdirSync(path.join(main, '.git', 'worktrees', 'feat1'))
    writeFileSync(path.join(target, 'work.txt'), 'mine\n')
    await refusedWith('has changes since')
    rmSync(path.join(target, 'work.txt'))
    rmSync(path.join(main, '.git', 'worktrees', 'feat1'), {recursive: true})

    // Edits under assume-unchanged or skip-worktree, which git status does not look at.
    for (const flag of ['--assume-unchanged', '--skip-worktree']) {
      git(target, 'update-index', flag, 'src/d01/f01.ts')
      writeFileSync(path.join(target, 'src', 'd01', 'f01.ts'), 'edited\n')
      await refusedWith('has files git status does not show')
      expect(readFileSync(path.join(target, 'src', 'd01', 'f01.ts'), 'utf8')).to.equal('edited\n')
      git(target, 'update-index', flag.replace('--', '--no-'), 'src/d01/f01.ts')
      git(target, 'checkout', '--', 'src/d01/f01.ts')
    }

    // git's own lock text on a worktree whose checkout finished (its index written): checked too.
    git(main, 'worktree', 'lock', '--reason', 'initializing', target)
    writeFileSync(path.join(target, 'p.txt'), 'mine\n')
    await refusedWith('has changes since')
    git(main, 'worktree', 'unlock', target)
    rmSync(path.join(target, 'p.txt'))

    // Initialised submodules (their git dirs under the admin dir): not looked into, so kept.
    mkdirSync(path.join(admin, 'modules', 'sub'), {recursive: true})
    await refusedWith('has initialised submodules')
    rmSync(path.join(admin, 'modules'), {recursive: true})

    // A ref of the worktree's own (refs/worktree/…), holding a commit nothing else has.
    git(target, 'update-ref', 'refs/worktree/keep', 'HEAD')
    await refusedWith('holds refs of its own')
    git(target, 'update-ref', '-d', 'refs/worktree/keep')

    // A commit on a detached HEAD, then back on the branch: only the HEAD reflog has it.
    git(target, 'checkout', '-q', '--detach')
    git(target, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '--allow-empty', '-m', 'lost?')
    const detached = git(target, 'rev-parse', 'HEAD')
    git(target, 'checkout', '-q', 'wt/feat')
    await refusedWith('has moved its HEAD since (its reflog: "checkout: moving from')
    expect(git(target, 'cat-file', '-t', detached)).to.equal('commit')

    // A FIFO in place of the admin HEAD is refused without waiting for a writer.
    const head = readFileSync(path.join(admin, 'HEAD'), 'utf8')
    rmSync(path.join(admin, 'HEAD'))
    execFileSync('mkfifo', [path.join(admin, 'HEAD')])
    await refusedWith('cannot be checked for changes (its HEAD in')
    rmSync(path.join(admin, 'HEAD'))
    writeFileSync(path.join(admin, 'HEAD'), head)

    // Killed while yard cloned submodules under its --lock, nothing touched since (a fresh add):
    // rolled back, its half-cloned submodule git dirs with it.
    const fresh = path.join(tempDir('kill'), 'app')
    git(path.dirname(fresh), 'clone', '-q', seedRepo(), 'app')
    expect((await yard(['worktree', 'add', 'feat', '--no-fetch'], {cwd: fresh, env})).exitCode).to.equal(0)
    const freshAdmin = path.join(fresh, '.git', 'worktrees', 'feat')
    git(fresh, 'worktree', 'lock', '--reason', 'added with --lock', path.join(`${fresh}-worktrees`, 'feat'))
    mkdirSync(path.join(freshAdmin, 'modules', 'sub'), {recursive: true})
    await journalOfFeat(fresh)
    const rolled = await yard(['worktree', 'add', 'feat', '--no-fetch'], {cwd: fresh, env})
    expect(rolled.exitCode, rolled.stderr).to.equal(0)
    expect(rolled.stderr).to.contain('rolled back: removed the half-made worktree')
    expect(existsSync(path.join(freshAdmin, 'modules'))).to.equal(false)
  })

  it("waits for no git when the killed add's process group lives on without one (a script's), and leaves no journal when git config fails", async () => {
    const {env, clone, expected} = await cleanRun()
    const main = clone()
    // The journal names this test's own process group, which lives on and runs no git: as a
    // script that started yard without job control, then killed yard and its git, leaves it.
    await halfMadeAdd(main, {locked: 'initializing', gitdir: true, head: 'ref: refs/heads/wt/feat\n', indexLock: true})
    const started = Date.now()
    const rerun = await yard(['worktree', 'add', 'feat', '--no-fetch'], {cwd: main, env})
    expect(rerun.exitCode, rerun.stderr).to.equal(0)
    expect(rerun.stderr).not.to.contain('still checking out')
    expect(Date.now() - started).to.be.below(20_000)
    expect(addState(main, 'feat')).to.deep.equal(expected)

    // git config failing after the journal was written: exit 1, and nothing left, the journal neither.
    const other = clone()
    writeFileSync(path.join(other, '.git', 'config.lock'), '')
    const failed = await yard(['worktree', 'add', 'feat', '--no-fetch'], {cwd: other, env})
    expect(failed.exitCode, failed.stderr).to.equal(1)
    expect(existsSync(path.join(other, '.git', 'yard', 'adding', 'feat.json'))).to.equal(false)
    rmSync(path.join(other, '.git', 'config.lock'))
    const again = await yard(['worktree', 'add', 'feat', '--no-fetch'], {cwd: other, env})
    expect(again.exitCode, again.stderr).to.equal(0)
    expect(again.stderr).not.to.contain('rolled back')
    expect(addState(other, 'feat')).to.deep.equal(expected)
  })

  it('SIGINT or SIGTERM during the checkout undoes the add at once (exit 130): no directory, branch, journal, lock or pin', async () => {
    const seed = seedRepo()
    const env = cleanEnv(tempDir('state'))
    const childEnv = {...process.env, ...env}
    for (const key of Object.keys(childEnv)) if (childEnv[key] === undefined) delete childEnv[key]
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      const main = path.join(tempDir('interrupt'), 'app')
      git(path.dirname(main), 'clone', '-q', seed, 'app')
      const before = addState(main, 'feat')
      const target = path.join(`${main}-worktrees`, 'feat')
      const outcome = await killAt(
        [process.execPath, path.join(projectRoot, 'bin', 'dev.js'), 'worktree', 'add', 'feat', '--no-fetch'],
        {cwd: main, env: childEnv, point: POINTS[2], target, signal},
      )
      expect(outcome.exitCode, `after ${signal}`).to.equal(130)
      expect(addState(main, 'feat'), `after ${signal}`).to.deep.equal(before)
      expect(existsSync(target), `after ${signal}`).to.equal(false)
      expect(existsSync(path.join(main, '.git', 'yard', 'offsets.lock')), `after ${signal}`).to.equal(false)
      const rerun = await yard(['worktree', 'add', 'feat', '--no-fetch'], {cwd: main, env})
      expect(rerun.exitCode, rerun.stderr).to.equal(0)
      expect(rerun.stderr).to.not.include('stopped half-way')
    }
  })

  it('refuses (exit 3) to roll back a finished worktree whose files changed since, and keeps a branch with new commits', async () => {
    const main = path.join(tempDir('kill'), 'app')
    git(path.dirname(main), 'clone', '-q', seedRepo(), 'app')
    const env = cleanEnv(tempDir('state'))
    expect((await yard(['worktree', 'add', 'feat', '--no-fetch'], {cwd: main, env})).exitCode).to.equal(0)
    const target = path.join(`${main}-worktrees`, 'feat')
    const base = git(main, 'rev-parse', 'origin/main')
    // As if killed after git finished but before the journal was removed.
    await journalOfFeat(main, {commit: base})
    writeFileSync(path.join(target, 'src', 'd00', 'f00.ts'), 'work since\n')
    const refused = await yard(['worktree', 'add', 'feat', '--no-fetch'], {cwd: main, env})
    expect(refused.exitCode, refused.stderr).to.equal(3)
    expect(refused.stderr).to.contain(
      `worktree feat was being added when yard was stopped, and ${target} has changes since`,
    )
    expect(readFileSync(path.join(target, 'src', 'd00', 'f00.ts'), 'utf8')).to.equal('work since\n')
    // Committed instead, or committed and reset away from: the HEAD reflog holds that work (after a
    // reset, alone), so the worktree is kept as well, and the branch.
    git(target, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-am', 'work')
    const work = git(target, 'rev-parse', 'HEAD')
    const committed = await yard(['worktree', 'add', 'feat', '--no-fetch'], {cwd: main, env})
    expect(committed.exitCode, committed.stderr).to.equal(3)
    expect(committed.stderr).to.contain(`${target} has moved its HEAD since (its reflog: "commit: work")`)
    git(target, 'reset', '-q', '--hard', 'HEAD~1')
    const reset = await yard(['worktree', 'add', 'feat', '--no-fetch'], {cwd: main, env})
    expect(reset.exitCode, reset.stderr).to.equal(3)
    expect(git(main, 'rev-parse', 'wt/feat')).to.equal(base)
    expect(git(main, 'cat-file', '-t', work)).to.equal('commit')
    expect(git(target, 'reflog', '--format=%H')).to.contain(work)
  })
})
