/**
 * `yard worktree remove` in the states where work lives outside the branch and the files git
 * tracks: a HEAD on no branch, submodules, nested repositories, ignored files. Each refuses
 * without --force; with it, the work is back after running exactly what remove printed.
 */
import {expect} from 'chai'
import {createHash} from 'node:crypto'
import {existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {cleanupTemp, git, makeRepo, tempDir, writeFile} from '../support/repo.js'
import {printedAfter, runPrinted} from '../support/restore.js'
import {cleanEnv, commit, remoteSetup, rootOf} from '../support/worktrees.js'
import {yard} from '../support/yard.js'

describe('yard worktree remove: work outside the branch (DESIGN.md §4.1)', () => {
  afterEach(cleanupTemp)

  it('counts the commits of a detached HEAD no branch holds, refuses, and with --force keeps them in the printed ref, restored by the printed command', async () => {
    const setup = remoteSetup()
    const env = cleanEnv(setup.stateDir)
    expect((await yard(['worktree', 'add', 'feat', '--no-fetch'], {cwd: setup.main, env})).exitCode).to.equal(0)
    const feat = path.join(rootOf(setup.main), 'feat')
    git(feat, 'checkout', '-q', '--detach')
    const lost = commit(feat, 'detached.txt', 'on no branch\n')

    const refused = await yard(['worktree', 'remove', 'feat', '--yes'], {cwd: setup.main, env})
    expect(refused.exitCode).to.equal(3)
    expect(refused.stderr).to.include('1 commit on a detached HEAD that no branch holds')

    const run = await yard(['worktree', 'remove', 'feat', '--force'], {cwd: setup.main, env})
    expect(run.exitCode, run.stderr).to.equal(0)
    const ref = /the detached HEAD \(1 commit on no branch\) saved to (\S+)/.exec(run.stdout)?.[1]
    expect(ref, run.stdout).to.match(/^refs\/yard\/removed\/feat-\d{8}T\d{6}Z$/)
    expect(git(setup.main, 'rev-parse', ref!)).to.equal(lost)
    expect(existsSync(feat)).to.equal(false)

    await runPrinted(printedAfter(run.stdout, 'restore it with:')!, {cwd: setup.main, env})
    expect(git(feat, 'rev-parse', 'HEAD')).to.equal(lost)
    expect(readFileSync(path.join(feat, 'detached.txt'), 'utf8')).to.equal('on no branch\n')
  })

  it('keeps the commits of a rebase stopped at edit, with its uncommitted change, in the printed ref, restored by the printed command', async () => {
    const setup = remoteSetup()
    const env = cleanEnv(setup.stateDir)
    expect((await yard(['worktree', 'add', 'feat', '--no-fetch'], {cwd: setup.main, env})).exitCode).to.equal(0)
    const feat = path.join(rootOf(setup.main), 'feat')
    commit(feat, 'one.txt', 'one\n')
    commit(feat, 'two.txt', 'two\n')
    git(feat, 'push', '-q', 'origin', 'HEAD:refs/heads/wt/feat')
    // Stop at the first commit, reword it by amending, leave a change uncommitted.
    git(feat, '-c', 'sequence.editor=sed -i 1s/^pick/edit/', 'rebase', '-q', '-i', 'HEAD~2')
    writeFileSync(path.join(feat, 'one.txt'), 'one, amended\n')
    git(feat, 'commit', '-q', '-a', '--amend', '-m', 'one, amended')
    const amended = git(feat, 'rev-parse', 'HEAD')
    writeFileSync(path.join(feat, 'wip.txt'), 'not yet committed\n')

    const refused = await yard(['worktree', 'remove', 'feat', '--yes'], {cwd: setup.main, env})
    expect(refused.exitCode).to.equal(3)
    expect(refused.stderr).to.include('1 commit on a detached HEAD that no branch holds')

    const run = await yard(['worktree', 'remove', 'feat', '--force'], {cwd: setup.main, env})
    expect(run.exitCode, run.stderr).to.equal(0)
    const ref = /uncommitted work and the detached HEAD \(1 commit on no branch\) saved to (\S+)/.exec(run.stdout)?.[1]
    expect(ref, run.stdout).to.be.a('string')
    expect(git(setup.main, 'rev-parse', `${ref}~1`)).to.equal(amended)

    await runPrinted(printedAfter(run.stdout, 'restore it with:')!, {cwd: setup.main, env})
    expect(git(feat, 'rev-parse', 'HEAD')).to.equal(amended)
    expect(readFileSync(path.join(feat, 'one.txt'), 'utf8')).to.equal('one, amended\n')
    expect(readFileSync(path.join(feat, 'wip.txt'), 'utf8')).to.equal('not yet committed\n')
  })
})

/** git with file:// submodules allowed (git ≥ 2.38.1 refuses them by default), for the restore too. */
const FILE_PROTOCOL = {GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'protocol.file.allow', GIT_CONFIG_VALUE_0: 'always'}

describe('yard worktree remove: submodules, nested repositories, ignored files (DESIGN.md §4.1)', () => {
  afterEach(cleanupTemp)

  it('refuses a submodule with a local commit and changes, and with --force saves a bundle and a patch that the printed command restores', async () => {
    const lib = makeRepo({}, 'lib')
    const repo = makeRepo()
    git(repo, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', lib, 'lib')
    git(repo, 'commit', '-q', '-m', 'add lib')
    const state = tempDir('state')
    const env = {...cleanEnv(state), ...FILE_PROTOCOL}
    expect((await yard(['worktree', 'add', 'feat'], {cwd: repo, env})).exitCode).to.equal(0)
    const feat = path.join(rootOf(repo), 'feat')
    git(feat, '-c', 'protocol.file.allow=always', 'submodule', 'update', '--init', '-q')
    const sub = path.join(feat, 'lib')
    const local = commit(sub, 'local.txt', 'a commit only here\n')
    writeFileSync(path.join(sub, 'README'), 'changed\n')
    writeFileSync(path.join(sub, 'new.txt'), 'untracked\n')

    const refused = await yard(['worktree', 'remove', 'feat', '--yes'], {cwd: repo, env})
    expect(refused.exitCode).to.equal(3)
    expect(refused.stderr).to.include('submodule lib (1 commit not on its remote, 1 modified, 1 untracked)')

    const run = await yard(['worktree', 'remove', 'feat', '--force'], {cwd: repo, env})
    expect(run.exitCode, run.stderr).to.equal(0)
    const saved = path.join(state, 'removed', 'app')
    expect(run.stdout).to.match(
      new RegExp(
        String.raw`submodule lib saved to ${saved}/feat-\d{8}T\d{6}Z/submodules/lib/unpushed.bundle, \S+/changes.patch`,
      ),
    )
    expect(existsSync(feat)).to.equal(false)

    await runPrinted(printedAfter(run.stdout, 'restore it with:')!, {cwd: repo, env})
    expect(git(sub, 'rev-parse', 'HEAD')).to.equal(local)
    expect(readFileSync(path.join(sub, 'README'), 'utf8')).to.equal('changed\n')
    expect(readFileSync(path.join(sub, 'new.txt'), 'utf8')).to.equal('untracked\n')
    expect(git(feat, 'ls-files', '-s', 'lib')).to.include(local)
  })

  it("refuses a nested repository inside a submodule, and with --force archives it (never a gitlink in the submodule's patch) for the printed command to restore", async () => {
    const lib = makeRepo({}, 'lib')
    const repo = makeRepo()
    git(repo, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', lib, 'lib')
    git(repo, 'commit', '-q', '-m', 'add lib')
    const state = tempDir('state')
    const env = {...cleanEnv(state), ...FILE_PROTOCOL}
    expect((await yard(['worktree', 'add', 'feat'], {cwd: repo, env})).exitCode).to.equal(0)
    const feat = path.join(rootOf(repo), 'feat')
    git(feat, '-c', 'protocol.file.allow=always', 'submodule', 'update', '--init', '-q')
    const inner = path.join(feat, 'lib', 'inner')
    mkdirSync(inner)
    git(inner, 'init', '-q', '-b', 'main')
    const kept = commit(inner, 'inner.txt', 'committed only in the nested repository\n')
    writeFileSync(path.join(feat, 'lib', 'draft.txt'), 'untracked in the submodule\n')

    const refused = await yard(['worktree', 'remove', 'feat', '--yes'], {cwd: repo, env})
    expect(refused.exitCode).to.equal(3)
    expect(refused.stderr).to.include('nested repository lib/inner/')

    const run = await yard(['worktree', 'remove', 'feat', '--force'], {cwd: repo, env})
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(run.stdout).to.match(/nested repository lib\/inner saved to \S+\/nested\/lib\/inner\/files\.tar/)
    await runPrinted(printedAfter(run.stdout, 'restore it with:')!, {cwd: repo, env})
    expect(git(inner, 'rev-parse', 'HEAD')).to.equal(kept)
    expect(readFileSync(path.join(inner, 'inner.txt'), 'utf8')).to.equal('committed only in the nested repository\n')
    expect(readFileSync(path.join(feat, 'lib', 'draft.txt'), 'utf8')).to.equal('untracked in the submodule\n')
  })

  it('refuses a nested repository, and with --force archives it (never a gitlink in the snapshot) for the printed command to restore', async () => {
    const repo = makeRepo()
    const state = tempDir('state')
    const env = cleanEnv(state)
    expect((await yard(['worktree', 'add', 'feat'], {cwd: repo, env})).exitCode).to.equal(0)
    const feat = path.join(rootOf(repo), 'feat')
    const tool = path.join(feat, 'vendor', 'tool')
    mkdirSync(tool, {recursive: true})
    git(tool, 'init', '-q', '-b', 'main')
    const inner = commit(tool, 'tool.txt', 'committed in the nested repository\n')
    writeFileSync(path.join(tool, 'draft.txt'), 'uncommitted\n')
    writeFileSync(path.join(feat, 'notes.txt'), 'untracked in the worktree\n')

    const refused = await yard(['worktree', 'remove', 'feat', '--yes'], {cwd: repo, env})
    expect(refused.exitCode).to.equal(3)
    expect(refused.stderr).to.include('nested repository vendor/tool/')

    const run = await yard(['worktree', 'remove', 'feat', '--force'], {cwd: repo, env})
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(run.stdout).to.match(
      /nested repository vendor\/tool saved to \S+\/nested\/vendor\/tool\/files\.tar, \S+\/refs\.bundle/,
    )
    const ref = /uncommitted work saved to (\S+)/.exec(run.stdout)?.[1]
    expect(git(repo, 'ls-tree', '-r', '--name-only', ref!).split('\n')).to.have.members(['README', 'notes.txt'])

    await runPrinted(printedAfter(run.stdout, 'restore it with:')!, {cwd: repo, env})
    expect(git(tool, 'rev-parse', 'HEAD')).to.equal(inner)
    expect(readFileSync(path.join(tool, 'draft.txt'), 'utf8')).to.equal('uncommitted\n')
    expect(readFileSync(path.join(feat, 'notes.txt'), 'utf8')).to.equal('untracked in the worktree\n')
  })

  it('names the ignored files it deletes, refuses an ignored .env ([worktrees] keep-ignored), and with --force copies it for the printed command to restore', async () => {
    const repo = makeRepo({'.gitignore': '.env\nnode_modules/\n*.log\n'})
    const state = tempDir('state')
    const env = cleanEnv(state)
    expect((await yard(['worktree', 'add', 'feat'], {cwd: repo, env})).exitCode).to.equal(0)
    const feat = path.join(rootOf(repo), 'feat')
    writeFile(feat, '.env', 'SECRET=only-here\n')
    writeFile(feat, 'node_modules/x/index.js', 'module\n')
    writeFile(feat, 'debug.log', 'log\n')

    const dry = await yard(['worktree', 'remove', 'feat', '--dry-run'], {cwd: repo, env})
    expect(dry.exitCode).to.equal(3)
    expect(dry.stdout).to.include('3 ignored paths are deleted: .env, debug.log, node_modules/')
    expect(dry.stdout).to.include('keep (copied to the archive, [worktrees] keep-ignored): .env')
    expect(dry.stderr).to.include('1 ignored file to keep ([worktrees] keep-ignored): .env')

    // Nothing to keep: the log and node_modules are named, not counted as work.
    writeFile(repo, 'yard.local.toml', '[worktrees]\nkeep-ignored = []\n')
    expect((await yard(['worktree', 'remove', 'feat', '--dry-run'], {cwd: repo, env})).exitCode).to.equal(0)
    writeFile(repo, 'yard.local.toml', '')

    const run = await yard(['worktree', 'remove', 'feat', '--force'], {cwd: repo, env})
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(run.stdout).to.match(
      new RegExp(String.raw`ignored files saved to ${state}/removed/app/feat-\d{8}T\d{6}Z/ignored/.env`),
    )
    expect(existsSync(feat)).to.equal(false)

    await runPrinted(printedAfter(run.stdout, 'restore it with:')!, {cwd: repo, env})
    expect(readFileSync(path.join(feat, '.env'), 'utf8')).to.equal('SECRET=only-here\n')
  })
})

describe('yard worktree remove: ignored files worktree add copied', () => {
  afterEach(cleanupTemp)

  it('does not count a .env that worktree add copied from main and that is unchanged, and counts it once edited', async () => {
    const repo = makeRepo({'.gitignore': '.env\n'})
    writeFile(repo, '.env', 'TOKEN=main\n')
    const env = cleanEnv(tempDir('state'))
    expect((await yard(['worktree', 'add', 'feat'], {cwd: repo, env})).exitCode).to.equal(0)
    expect((await yard(['worktree', 'add', 'alpha'], {cwd: repo, env})).exitCode).to.equal(0)
    writeFile(path.join(rootOf(repo), 'alpha'), '.env', 'TOKEN=changed in alpha\n')
    const unchanged = await yard(['worktree', 'remove', 'feat', '--yes'], {cwd: repo, env})
    expect(unchanged.exitCode, unchanged.stderr).to.equal(0)
    expect(unchanged.stdout).to.include('1 ignored path is deleted: .env')
    const edited = await yard(['worktree', 'remove', 'alpha', '--yes'], {cwd: repo, env})
    expect(edited.exitCode).to.equal(3)
    expect(edited.stderr).to.include('1 ignored file to keep ([worktrees] keep-ignored): .env')
  })

  it('archives a kept .env that is a symbolic link as the link, never the file outside the checkout it points at', async () => {
    const repo = makeRepo({'.gitignore': '.env\n'})
    const state = tempDir('state')
    const env = cleanEnv(state)
    expect((await yard(['worktree', 'add', 'feat'], {cwd: repo, env})).exitCode).to.equal(0)
    const outside = path.join(tempDir('outside'), 'secret')
    writeFileSync(outside, 'SECRET-OUTSIDE\n')
    symlinkSync(outside, path.join(rootOf(repo), 'feat', '.env'))
    const run = await yard(['worktree', 'remove', 'feat', '--force'], {cwd: repo, env})
    expect(run.exitCode, run.stderr).to.equal(0)
    const saved = /ignored files saved to (\S+)/.exec(run.stdout)![1]
    expect(lstatSync(saved).isSymbolicLink()).to.equal(true)
    expect(readlinkSync(saved)).to.equal(outside)
  })
})

describe('yard worktree remove: agent transcripts on the host (DESIGN.md §4.1)', () => {
  afterEach(cleanupTemp)

  it("archives the host-side Claude Code and Gemini CLI stores of the worktree's path, listing each, and leaves other paths' stores alone", async () => {
    const repo = makeRepo()
    const state = tempDir('state')
    const home = tempDir('home')
    const env = {...cleanEnv(state), HOME: home, CLAUDE_CONFIG_DIR: undefined}
    expect((await yard(['worktree', 'add', 'feat'], {cwd: repo, env})).exitCode).to.equal(0)
    const feat = path.join(rootOf(repo), 'feat')
    const slug = feat.replaceAll(/[^A-Za-z0-9]/g, '-')
    writeFile(home, `.claude/projects/${slug}/session-1.jsonl`, '{"claude": "talk"}\n')
    writeFile(home, `.claude/projects/${repo.replaceAll(/[^A-Za-z0-9]/g, '-')}/main.jsonl`, "main checkout's\n")
    const hashed = createHash('sha256').update(feat).digest('hex')
    writeFile(home, `.gemini/tmp/${hashed}/chats/session-a.json`, '{"gemini": "old layout"}\n')
    writeFile(home, '.gemini/tmp/feat/.project_root', `${feat}\n`)
    writeFile(home, '.gemini/tmp/feat/chats/session-b.json', '{"gemini": "new layout"}\n')

    const run = await yard(['worktree', 'remove', 'feat', '--yes'], {cwd: repo, env})
    expect(run.exitCode, run.stderr).to.equal(0)
    const archive = path.join(state, 'transcripts', 'app', 'feat', 'host')
    expect(run.stdout).to.include(
      `the host's Claude Code transcripts ${path.join(home, '.claude', 'projects', slug)} archived to ${path.join(archive, 'claude-code', slug)} (1 copied, 0 already there)`,
    )
    expect(run.stdout).to.include(
      `the host's Gemini CLI transcripts ${path.join(home, '.gemini', 'tmp', hashed)} archived to`,
    )
    expect(run.stdout).to.include(
      `the host's Gemini CLI transcripts ${path.join(home, '.gemini', 'tmp', 'feat')} archived to`,
    )
    expect(readFileSync(path.join(archive, 'claude-code', slug, 'session-1.jsonl'), 'utf8')).to.equal(
      '{"claude": "talk"}\n',
    )
    expect(readFileSync(path.join(archive, 'gemini-cli', hashed, 'chats', 'session-a.json'), 'utf8')).to.equal(
      '{"gemini": "old layout"}\n',
    )
    expect(readFileSync(path.join(archive, 'gemini-cli', 'feat', 'chats', 'session-b.json'), 'utf8')).to.equal(
      '{"gemini": "new layout"}\n',
    )
    expect(existsSync(path.join(archive, 'claude-code', repo.replaceAll(/[^A-Za-z0-9]/g, '-')))).to.equal(false)
  })
})
