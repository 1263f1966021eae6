import {expect} from 'chai'
import {existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, utimesSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {createContext} from '../../src/core/kernel/context.js'
import {backendsOf} from '../../src/core/registry/backends.js'
import {loadRegistry} from '../../src/core/registry/registry.js'
import {dashboardServices} from '../../src/tui/dashboard-run.js'
import {cleanupTemp, git, makeRepo, tempDir, writeFile} from '../support/repo.js'
import {cleanEnv, commit, hasBranch, registered, remoteSetup, rootOf} from '../support/worktrees.js'
import {testConfig, yard} from '../support/yard.js'

/** yard with the recording stack backend linked and selected; its calls go to `log`. */
function withStack(log: string, env: Record<string, string | undefined>) {
  return {plugins: ['recording-stack'], env: {...env, YARD_FIXTURE_STACK_LOG: log, YARD_FIXTURE_STACK_FAIL: undefined}}
}

const STACK_TOML = '[stack]\nbackend = "recording-stack"\n'

function calls(log: string): Array<{call: string; project: string; dryRun?: boolean}> {
  return existsSync(log)
    ? readFileSync(log, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line))
    : []
}

describe('yard worktree remove (DESIGN.md §4.1)', () => {
  afterEach(cleanupTemp)

  it('refuses (exit 3) a worktree with a modified file, an untracked file and an unpushed commit, counting all three and changing nothing', async () => {
    const setup = remoteSetup({'yard.toml': STACK_TOML})
    const env = cleanEnv(setup.stateDir)
    const log = path.join(tempDir('log'), 'stack.jsonl')
    expect((await yard(['worktree', 'add', 'feat', '--no-fetch'], {cwd: setup.main, env})).exitCode).to.equal(0)
    const feat = path.join(rootOf(setup.main), 'feat')
    const local = commit(feat, 'local.txt', 'not pushed\n')
    writeFile(feat, 'develop.txt', 'modified\n')
    writeFile(feat, 'notes.txt', 'untracked\n')
    const refsBefore = git(setup.main, 'for-each-ref')

    const run = await yard(['worktree', 'remove', 'feat', '--yes'], {cwd: setup.main, ...withStack(log, env)})
    expect(run.exitCode).to.equal(3)
    expect(run.stderr).to.include(
      'worktree feat has unsaved work: 1 modified file, 1 untracked file, 1 commit on no remote branch',
    )
    expect(run.stderr).to.include('pass --force')
    expect(registered(setup.main)).to.include(feat)
    expect(readFileSync(path.join(feat, 'develop.txt'), 'utf8')).to.equal('modified\n')
    expect(readFileSync(path.join(feat, 'notes.txt'), 'utf8')).to.equal('untracked\n')
    expect(git(feat, 'rev-parse', 'HEAD')).to.equal(local)
    expect(git(setup.main, 'for-each-ref')).to.equal(refsBefore)
    // Only the teardown's dry run was asked (what --force would also delete): nothing was torn down.
    expect(calls(log).map((call) => [call.call, call.dryRun])).to.deep.equal([['nuke', true]])

    const json = await yard(['worktree', 'remove', 'feat', '--yes', '--json'], {
      cwd: setup.main,
      ...withStack(log, env),
    })
    expect(json.exitCode).to.equal(3)
    expect(json.json).to.have.nested.property('error.code', 3)
  })

  it('with --force saves the modified and untracked files to the printed refs/yard/removed ref, tears the stack down, keeps the branch and deletes the pin', async () => {
    const setup = remoteSetup({'yard.toml': STACK_TOML})
    const env = cleanEnv(setup.stateDir)
    const log = path.join(tempDir('log'), 'stack.jsonl')
    expect((await yard(['worktree', 'add', 'feat', '--no-fetch'], {cwd: setup.main, env})).exitCode).to.equal(0)
    expect((await yard(['worktree', 'add', 'alpha', '--no-fetch'], {cwd: setup.main, env})).exitCode).to.equal(0)
    expect(readFileSync(path.join(setup.main, 'yard.local.toml'), 'utf8')).to.include('alpha = 1')
    const alpha = path.join(rootOf(setup.main), 'alpha')
    const local = commit(alpha, 'local.txt', 'not pushed\n')
    writeFile(alpha, 'develop.txt', 'modified\n')
    writeFile(alpha, 'notes.txt', 'untracked\n')
    writeFile(alpha, 'ignored.log', 'ignored\n')
    writeFile(alpha, '.gitignore', '*.log\n')

    const run = await yard(['worktree', 'remove', 'alpha', '--force'], {cwd: setup.main, ...withStack(log, env)})
    expect(run.exitCode, run.stderr).to.equal(0)
    const ref = /uncommitted work saved to (refs\/yard\/removed\/alpha-\d{8}T\d{6}Z)/.exec(run.stdout)?.[1]
    expect(ref, run.stdout).to.be.a('string')
    expect(run.stdout).to.include(`git -C ${alpha} cherry-pick --no-commit ${ref}`)
    expect(run.stdout).to.include('branch wt/alpha kept; delete it with: git branch -D wt/alpha')
    expect(git(setup.main, 'show', `${ref}:develop.txt`)).to.equal('modified')
    expect(git(setup.main, 'show', `${ref}:notes.txt`)).to.equal('untracked')
    expect(git(setup.main, 'ls-tree', '--name-only', ref!).split('\n')).to.have.members([
      '.gitignore',
      'README',
      'develop.txt',
      'local.txt',
      'notes.txt',
      'yard.toml',
    ])
    expect(git(setup.main, 'rev-parse', `${ref}^`)).to.equal(local)
    expect(existsSync(alpha)).to.equal(false)
    expect(registered(setup.main)).to.deep.equal([setup.main, path.join(rootOf(setup.main), 'feat')])
    expect(git(setup.main, 'rev-parse', 'wt/alpha')).to.equal(local)
    expect(readFileSync(path.join(setup.main, 'yard.local.toml'), 'utf8')).not.to.include('alpha')
    expect(
      calls(log)
        .filter((entry) => !entry.dryRun)
        .map((entry) => [entry.call, entry.project]),
    ).to.deep.equal([
      ['box down', 'app-alpha'],
      ['nuke', 'app-alpha'],
    ])

    // The restore hint works: a fresh worktree of the branch gets the files back.
    expect(
      (await yard(['worktree', 'add', 'alpha', 'wt/alpha', '--no-fetch'], {cwd: setup.main, env})).exitCode,
    ).to.equal(0)
    git(alpha, 'cherry-pick', '--no-commit', ref!)
    expect(readFileSync(path.join(alpha, 'develop.txt'), 'utf8')).to.equal('modified\n')
    expect(readFileSync(path.join(alpha, 'notes.txt'), 'utf8')).to.equal('untracked\n')
  })

  it('keeps a hand-written pin, saying so, and deletes the pin yard wrote for a clash', async () => {
    const repo = makeRepo()
    const env = cleanEnv(tempDir('state'))
    writeFile(
      repo,
      'yard.local.toml',
      '[worktree-offsets]\n# the OAuth callback allowlist knows this port\nfeat = 59\n',
    )
    expect((await yard(['worktree', 'add', 'feat'], {cwd: repo, env})).exitCode).to.equal(0)
    // alpha's hash offset is 59 too: yard pins it and marks the pin as its own.
    expect((await yard(['worktree', 'add', 'alpha'], {cwd: repo, env})).exitCode).to.equal(0)
    expect(readFileSync(path.join(repo, 'yard.local.toml'), 'utf8')).to.match(/^alpha = 1 # yard: clash with feat$/m)
    const dry = await yard(['worktree', 'remove', 'feat', '--dry-run'], {cwd: repo, env})
    expect(dry.stdout).to.include('keep the hand-written pin feat = 59 in yard.local.toml')
    const run = await yard(['worktree', 'remove', 'feat', '--yes', '--json'], {cwd: repo, env})
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(run.json).to.have.nested.property('result.pinKept', true)
    expect((await yard(['worktree', 'remove', 'alpha', '--yes'], {cwd: repo, env})).exitCode).to.equal(0)
    expect(readFileSync(path.join(repo, 'yard.local.toml'), 'utf8')).to.equal(
      '[worktree-offsets]\n# the OAuth callback allowlist knows this port\nfeat = 59\n',
    )
  })

  it('removes without --force, in a repository with no remote, a worktree whose commits are all on main', async () => {
    const repo = makeRepo()
    const env = cleanEnv(tempDir('state'))
    expect((await yard(['worktree', 'add', 'feat'], {cwd: repo, env})).exitCode).to.equal(0)
    const feat = path.join(rootOf(repo), 'feat')
    const done = commit(feat, 'feature.txt', 'done\n')
    const refused = await yard(['worktree', 'remove', 'feat', '--yes'], {cwd: repo, env})
    expect(refused.exitCode).to.equal(3)
    expect(refused.stderr).to.include('1 commit on neither its base nor another branch')
    git(repo, 'merge', '-q', '--ff-only', 'wt/feat')
    expect(git(repo, 'rev-parse', 'main')).to.equal(done)
    const run = await yard(['worktree', 'remove', 'feat', '--yes', '--json'], {cwd: repo, env})
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(run.json).to.have.nested.property('plan.unsaved').that.deep.equals({
      modified: 0,
      untracked: 0,
      unpushed: 0,
      against: 'on neither its base nor another branch',
      detached: 0,
    })
    expect(run.json).to.have.nested.property('result.snapshot', null)
    expect(existsSync(feat)).to.equal(false)
    expect(hasBranch(repo, 'wt/feat')).to.equal(true)
    expect(git(repo, 'for-each-ref', 'refs/yard/')).to.equal('')
  })

  it('asks before removing: without a terminal and without --yes it exits 3 saying to pass --yes', async () => {
    const repo = makeRepo()
    const env = cleanEnv(tempDir('state'))
    expect((await yard(['worktree', 'add', 'feat'], {cwd: repo, env})).exitCode).to.equal(0)
    const run = await yard(['worktree', 'remove', 'feat'], {cwd: repo, env})
    expect(run.exitCode).to.equal(3)
    expect(run.stderr).to.include('there is no terminal to ask on')
    expect(run.stderr).to.include('pass --yes')
    // The plan before the question says what is about to happen, not that it is happening.
    expect(run.stdout).to.include('about to remove worktree feat')
    expect(run.stdout).not.to.include('removing worktree')
    expect(registered(repo)).to.include(path.join(rootOf(repo), 'feat'))
  })

  it('archives .yard/transcripts/ additively before removing', async () => {
    const repo = makeRepo({'.gitignore': '.yard/\n'})
    const state = tempDir('state')
    const env = cleanEnv(state)
    expect((await yard(['worktree', 'add', 'feat'], {cwd: repo, env})).exitCode).to.equal(0)
    const feat = path.join(rootOf(repo), 'feat')
    writeFile(feat, '.yard/transcripts/session-1.jsonl', '{"new": true}\n')
    writeFile(feat, '.yard/transcripts/agents/a.md', 'agent a\n')
    const archive = path.join(state, 'transcripts', 'app', 'feat')
    writeFile(archive, 'session-1.jsonl', '{"newer in the archive": true}\n')
    const future = new Date(Date.now() + 3_600_000)
    utimesSync(path.join(archive, 'session-1.jsonl'), future, future)
    const run = await yard(['worktree', 'remove', 'feat', '--yes'], {cwd: repo, env})
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(run.stdout).to.include(`transcripts archived to ${archive} (1 copied, 1 already there)`)
    expect(readFileSync(path.join(archive, 'agents', 'a.md'), 'utf8')).to.equal('agent a\n')
    expect(readFileSync(path.join(archive, 'session-1.jsonl'), 'utf8')).to.equal('{"newer in the archive": true}\n')
    expect(existsSync(feat)).to.equal(false)
  })

  it('archives no transcripts through a symbolic link: a .yard/transcripts or .yard that names a host directory, a linked file', async () => {
    const repo = makeRepo({'.gitignore': '.yard/\n'})
    const state = tempDir('state')
    const env = cleanEnv(state)
    const outside = tempDir('outside')
    writeFile(outside, 'transcripts/secret.txt', 'host secret\n')
    writeFile(outside, 'host.txt', 'host file\n')
    for (const [name, link] of [
      ['feat', '.yard/transcripts'],
      ['fix', '.yard'],
    ]) {
      expect((await yard(['worktree', 'add', name], {cwd: repo, env})).exitCode).to.equal(0)
      const checkout = path.join(rootOf(repo), name)
      mkdirSync(path.join(checkout, path.dirname(link)), {recursive: true})
      symlinkSync(link === '.yard' ? outside : path.join(outside, 'transcripts'), path.join(checkout, link))
      const run = await yard(['worktree', 'remove', name, '--yes', '--force'], {cwd: repo, env})
      expect(run.exitCode, run.stderr).to.equal(0)
      expect(run.stderr).to.include('is reached through a symbolic link: its transcripts are not archived')
      expect(existsSync(path.join(state, 'transcripts', 'app', name, 'secret.txt'))).to.equal(false)
      expect(readFileSync(path.join(outside, 'transcripts', 'secret.txt'), 'utf8')).to.equal('host secret\n')
    }

    // A link inside a real transcripts directory is not copied either.
    expect((await yard(['worktree', 'add', 'docs'], {cwd: repo, env})).exitCode).to.equal(0)
    const docs = path.join(rootOf(repo), 'docs')
    writeFile(docs, '.yard/transcripts/real.md', 'real\n')
    symlinkSync(path.join(outside, 'host.txt'), path.join(docs, '.yard', 'transcripts', 'linked.md'))
    const run = await yard(['worktree', 'remove', 'docs', '--yes', '--force'], {cwd: repo, env})
    expect(run.exitCode, run.stderr).to.equal(0)
    const archive = path.join(state, 'transcripts', 'app', 'docs')
    expect(readFileSync(path.join(archive, 'real.md'), 'utf8')).to.equal('real\n')
    expect(existsSync(path.join(archive, 'linked.md'))).to.equal(false)
  })

  it('refuses (exit 3) when the archive cannot be created, leaving the worktree, its files and its stack untouched', async () => {
    const setup = remoteSetup({'yard.toml': STACK_TOML, '.gitignore': '.yard/\n'})
    const log = path.join(tempDir('log'), 'stack.jsonl')
    const blocker = path.join(tempDir('blocked'), 'a-file')
    writeFileSync(blocker, 'not a directory\n')
    const env = {...cleanEnv(setup.stateDir), YARD_TRANSCRIPTS_ARCHIVE: path.join(blocker, 'archive')}
    expect((await yard(['worktree', 'add', 'feat', '--no-fetch'], {cwd: setup.main, env})).exitCode).to.equal(0)
    const feat = path.join(rootOf(setup.main), 'feat')
    writeFile(feat, '.yard/transcripts/session.jsonl', 'talk\n')
    const refused = await yard(['worktree', 'remove', 'feat', '--yes'], {cwd: setup.main, ...withStack(log, env)})
    expect(refused.exitCode).to.equal(3)
    expect(refused.stderr).to.include(
      `cannot archive the transcripts of feat to ${path.join(blocker, 'archive', 'app', 'feat')}`,
    )
    expect(refused.stderr).to.include('nothing has been removed')
    expect(readFileSync(path.join(feat, '.yard/transcripts/session.jsonl'), 'utf8')).to.equal('talk\n')
    expect(registered(setup.main)).to.include(feat)
    expect(git(setup.main, 'for-each-ref', 'refs/yard/')).to.equal('')
    expect(
      calls(log).filter((entry) => !entry.dryRun),
      "only the plan's dry run",
    ).to.deep.equal([])

    const forced = await yard(['worktree', 'remove', 'feat', '--force'], {cwd: setup.main, ...withStack(log, env)})
    expect(forced.exitCode, forced.stderr).to.equal(0)
    expect(forced.stderr).to.include('going on because of --force')
    expect(registered(setup.main)).to.deep.equal([setup.main])
  })

  it('finishes a worktree whose directory was deleted by hand, leaving one whose directory is only moved away registered', async () => {
    const repo = makeRepo()
    const env = cleanEnv(tempDir('state'))
    for (const name of ['a', 'b'])
      expect((await yard(['worktree', 'add', name], {cwd: repo, env})).exitCode).to.equal(0)
    const a = path.join(rootOf(repo), 'a')
    const b = path.join(rootOf(repo), 'b')
    rmSync(a, {recursive: true, force: true})
    const away = path.join(tempDir('unmounted'), 'b')
    renameSync(b, away)
    const run = await yard(['worktree', 'remove', 'a', '--yes'], {cwd: repo, env})
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(run.stdout).to.include('its directory is gone: nothing to check, archive or snapshot')
    expect(registered(repo)).to.deep.equal([repo, b])
    expect(hasBranch(repo, 'wt/a')).to.equal(true)
    renameSync(away, b)
    expect(git(b, 'status', '--porcelain')).to.equal('')
    expect(git(b, 'rev-parse', '--abbrev-ref', 'HEAD')).to.equal('wt/b')
    const again = await yard(['worktree', 'remove', 'a', '--yes'], {cwd: repo, env})
    expect(again.exitCode).to.equal(2)
    expect(again.stderr).to.include('there is no worktree named a')
  })

  it('lists a worktree whose directory was replaced by a symbolic link, and refuses (exit 3) to remove it, even with --force, emptying nothing', async () => {
    const repo = makeRepo()
    const env = cleanEnv(tempDir('state'))
    expect((await yard(['worktree', 'add', 'feat'], {cwd: repo, env})).exitCode).to.equal(0)
    const feat = path.join(rootOf(repo), 'feat')
    const moved = path.join(tempDir('bigger-disk'), 'feat')
    renameSync(feat, moved)
    symlinkSync(moved, feat)
    const list = await yard(['worktree', 'list', '--json'], {cwd: repo, env})
    expect((list.json as Array<{name: string}>).map((entry) => entry.name)).to.deep.equal(['main', 'feat'])
    for (const flags of [['--yes'], ['--force', '--yes']]) {
      const run = await yard(['worktree', 'remove', 'feat', ...flags], {cwd: repo, env})
      expect(run.exitCode, run.stderr).to.equal(3)
      expect(run.stderr).to.include(`the directory of worktree feat is a symbolic link to ${moved}`)
    }

    expect(readFileSync(path.join(moved, 'README'), 'utf8')).to.equal('test\n')
    expect(registered(repo)).to.deep.equal([repo, feat])
  })

  it('finishes an interrupted remove: after a failed teardown the next call completes it; --force goes past a failed teardown', async () => {
    const repo = makeRepo({'yard.toml': STACK_TOML})
    const env = cleanEnv(tempDir('state'))
    const log = path.join(tempDir('log'), 'stack.jsonl')
    expect((await yard(['worktree', 'add', 'feat'], {cwd: repo, env})).exitCode).to.equal(0)
    expect((await yard(['worktree', 'add', 'alpha'], {cwd: repo, env})).exitCode).to.equal(0)
    const failing = await yard(['worktree', 'remove', 'alpha', '--yes'], {
      cwd: repo,
      plugins: ['recording-stack'],
      env: {...env, YARD_FIXTURE_STACK_LOG: log, YARD_FIXTURE_STACK_FAIL: 'nuke'},
    })
    expect(failing.exitCode).to.equal(1)
    expect(failing.stderr).to.include(
      'the stack teardown of worktree alpha (recording-stack) failed: the engine is not answering',
    )
    expect(failing.stderr).to.include('run `yard worktree remove alpha` again')
    expect(registered(repo)).to.include(path.join(rootOf(repo), 'alpha'))
    const forced = await yard(['worktree', 'remove', 'feat', '--force'], {
      cwd: repo,
      plugins: ['recording-stack'],
      env: {...env, YARD_FIXTURE_STACK_LOG: log, YARD_FIXTURE_STACK_FAIL: 'nuke'},
    })
    expect(forced.exitCode, forced.stderr).to.equal(0)
    expect(forced.stderr).to.include('going on because of --force: the stack stays until `yard nuke --worktree feat`')
    const done = await yard(['worktree', 'remove', 'alpha', '--yes'], {cwd: repo, ...withStack(log, env)})
    expect(done.exitCode, done.stderr).to.equal(0)
    expect(registered(repo)).to.deep.equal([repo])
    expect(readFileSync(path.join(repo, 'yard.local.toml'), 'utf8')).not.to.match(/alpha/)
    // A pin left behind by a remove that stopped after git (a crash): the next call deletes it.
    writeFile(repo, 'yard.local.toml', '[worktree-offsets]\nalpha = 1 # yard: clash with feat\n')
    const pinOnly = await yard(['worktree', 'remove', 'alpha', '--yes'], {cwd: repo, ...withStack(log, env)})
    expect(pinOnly.exitCode, pinOnly.stderr).to.equal(0)
    expect(readFileSync(path.join(repo, 'yard.local.toml'), 'utf8')).to.equal('[worktree-offsets]\n')
  })

  it('--dry-run shows the plan with what the stack teardown would remove, and changes nothing', async () => {
    const repo = makeRepo({'yard.toml': STACK_TOML})
    const env = cleanEnv(tempDir('state'))
    const log = path.join(tempDir('log'), 'stack.jsonl')
    expect((await yard(['worktree', 'add', 'feat'], {cwd: repo, env})).exitCode).to.equal(0)
    const run = await yard(['worktree', 'remove', 'feat', '--dry-run'], {cwd: repo, ...withStack(log, env)})
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(run.stdout).to.include('would remove worktree feat')
    expect(run.stdout).to.include(
      'stack: box down, then nuke through recording-stack: volume app-feat_data (data in them is lost)\n    volume app-feat_data',
    )
    expect(calls(log)).to.deep.equal([
      {
        call: 'nuke',
        project: 'app-feat',
        dryRun: true,
        name: 'feat',
        offset: 59,
        checkoutPath: path.join(rootOf(repo), 'feat'),
      },
    ])
    expect(registered(repo)).to.include(path.join(rootOf(repo), 'feat'))
  })

  it('the plan shown before the confirmation, in the CLI and in the dashboard, names the volumes the nuke deletes', async () => {
    const repo = makeRepo({'yard.toml': STACK_TOML})
    const env = cleanEnv(tempDir('state'))
    const log = path.join(tempDir('log'), 'stack.jsonl')
    expect((await yard(['worktree', 'add', 'feat'], {cwd: repo, env})).exitCode).to.equal(0)
    expect((await yard(['worktree', 'add', 'alpha'], {cwd: repo, env})).exitCode).to.equal(0)
    const step = (name: string) =>
      `stack: box down, then nuke through recording-stack: volume app-${name}_data (data in them is lost)`
    const services = dashboardServices(
      createContext({env: {...process.env, ...env}, cwd: repo, warn() {}}),
      backendsOf(await loadRegistry(await testConfig(['recording-stack']))),
    )
    expect(await services.planRemove('alpha')).to.include(step('alpha'))
    const run = await yard(['worktree', 'remove', 'feat', '--yes'], {cwd: repo, ...withStack(log, env)})
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(run.stdout).to.include(`removing worktree feat`)
    expect(run.stdout).to.include(step('feat'))
    expect(run.stdout.indexOf(step('feat'))).to.be.below(run.stdout.indexOf('removed worktree feat'))
  })

  it('a refusal for unsaved work says which volumes --force would also delete', async () => {
    const repo = makeRepo({'yard.toml': STACK_TOML})
    const env = cleanEnv(tempDir('state'))
    const log = path.join(tempDir('log'), 'stack.jsonl')
    expect((await yard(['worktree', 'add', 'feat'], {cwd: repo, env})).exitCode).to.equal(0)
    writeFile(path.join(rootOf(repo), 'feat'), 'notes.txt', 'untracked\n')
    const run = await yard(['worktree', 'remove', 'feat', '--yes'], {cwd: repo, ...withStack(log, env)})
    expect(run.exitCode).to.equal(3)
    expect(run.stderr).to.include('--force also deletes the volume app-feat_data (their data is lost)')
    expect(run.stdout).to.include('volume app-feat_data (data in them is lost)')
    expect(calls(log).filter((call) => !call.dryRun)).to.deep.equal([])
  })

  it('--delete-branch deletes a branch merged into its base, and refuses one that is not (exit 3, nothing removed)', async () => {
    const repo = makeRepo()
    const env = cleanEnv(tempDir('state'))
    expect((await yard(['worktree', 'add', 'feat'], {cwd: repo, env})).exitCode).to.equal(0)
    expect((await yard(['worktree', 'add', 'fix'], {cwd: repo, env})).exitCode).to.equal(0)
    const fix = path.join(rootOf(repo), 'fix')
    commit(fix, 'fix.txt', 'a fix\n')
    // Held by another branch, so not unsaved work; but main does not have it.
    git(repo, 'branch', 'keep', 'wt/fix')

    const dry = await yard(['worktree', 'remove', 'feat', '--delete-branch', '--dry-run'], {cwd: repo, env})
    expect(dry.stdout).to.include('delete the branch wt/feat (merged into main)')
    // A refusal agrees with the plan: with --force the branch goes too.
    writeFileSync(path.join(rootOf(repo), 'feat', 'draft.txt'), 'draft\n')
    const wouldRefuse = await yard(['worktree', 'remove', 'feat', '--dry-run'], {cwd: repo, env})
    expect(wouldRefuse.exitCode).to.equal(3)
    expect(wouldRefuse.stderr).to.include('yard worktree remove feat would refuse (exit 3)')
    const unsaved = await yard(['worktree', 'remove', 'feat', '--delete-branch', '--yes'], {cwd: repo, env})
    expect(unsaved.exitCode).to.equal(3)
    expect(unsaved.stderr)
      .to.include('the branch wt/feat is deleted (--delete-branch')
      .and.not.include('wt/feat is kept')
    rmSync(path.join(rootOf(repo), 'feat', 'draft.txt'))
    const merged = await yard(['worktree', 'remove', 'feat', '--delete-branch', '--yes'], {cwd: repo, env})
    expect(merged.exitCode, merged.stderr).to.equal(0)
    expect(merged.stdout).to.include('deleted branch wt/feat')
    expect(hasBranch(repo, 'wt/feat')).to.equal(false)

    const refused = await yard(['worktree', 'remove', 'fix', '--delete-branch', '--yes'], {cwd: repo, env})
    expect(refused.exitCode).to.equal(3)
    expect(refused.stderr).to.include('not deleting branch wt/fix: it is not merged into main')
    expect(registered(repo)).to.include(fix)
    expect(hasBranch(repo, 'wt/fix')).to.equal(true)
  })

  it('skips the teardown with a note when no stack backend of that id is registered', async () => {
    const repo = makeRepo({'yard.toml': '[stack]\nbackend = "not-installed"\n'})
    const env = cleanEnv(tempDir('state'))
    expect((await yard(['worktree', 'add', 'feat'], {cwd: repo, env})).exitCode).to.equal(0)
    const run = await yard(['worktree', 'remove', 'feat', '--yes', '--json'], {cwd: repo, env})
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(run.json)
      .to.have.nested.property('result.stack.skipped')
      .that.matches(/^no stack backend "not-installed" is registered/)
  })

  it('refuses names it must not touch: main, an unknown name, a directory git does not know', async () => {
    const repo = makeRepo()
    const env = cleanEnv(tempDir('state'))
    expect((await yard(['worktree', 'remove', 'main', '--yes'], {cwd: repo, env})).exitCode).to.equal(2)
    expect((await yard(['worktree', 'remove', 'ghost', '--yes'], {cwd: repo, env})).exitCode).to.equal(2)
    mkdirSync(path.join(rootOf(repo), 'stray'), {recursive: true})
    const stray = await yard(['worktree', 'remove', 'stray', '--force'], {cwd: repo, env})
    expect(stray.exitCode).to.equal(2)
    expect(stray.stderr).to.include('is not a worktree git knows')
    expect(existsSync(path.join(rootOf(repo), 'stray'))).to.equal(true)
  })
})
