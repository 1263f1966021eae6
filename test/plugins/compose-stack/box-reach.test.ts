/**
 * What the box reaches and where its agents write (docs/stacks.md), on real podman with yard's
 * default image: agents in the box write under `<checkout>/.yard/agent-home/`, which `yard
 * worktree remove` archives with a restore command; `[box] mounts = "worktree"` lets git commit
 * in the box while the shared `.git`'s config and hooks and the main checkout stay out of reach.
 */
import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {ensureDefaultImage, podmanEnv, podmanStateDir, sweep} from '../../support/podman.js'
import {cleanupTemp, git, makeRepo, writeFile} from '../../support/repo.js'
import {printedAfter, runPrinted} from '../../support/restore.js'
import {projectRoot, yard} from '../../support/yard.js'

const prefix = 'yardtest-r'
const devJs = path.join(projectRoot, 'bin', 'dev.js')

/** `yard …` as a child process (exec hands the terminal to podman). */
export function yardChild(
  cwd: string,
  env: Record<string, string | undefined>,
  args: string[],
): {status: number; stdout: string; stderr: string} {
  const childEnv: NodeJS.ProcessEnv = {...process.env}
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) delete childEnv[key]
    else childEnv[key] = value
  }

  const result = spawnSync(process.execPath, [devJs, ...args], {
    cwd,
    env: childEnv,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  return {status: result.status ?? 1, stdout: result.stdout, stderr: result.stderr}
}

describe("the box's reach and agent home (docs/stacks.md)", function () {
  this.timeout(300_000)

  before(async () => {
    sweep(prefix)
    await ensureDefaultImage()
  })

  after(() => {
    sweep(prefix)
    cleanupTemp()
  })

  it('points Claude Code, Codex and Gemini CLI in the box at the checkout; remove archives what an agent wrote there and the printed command restores it', async () => {
    const repo = makeRepo({'yard.toml': `[project]\nprefix = "${prefix}"\n`})
    const env = {
      ...podmanEnv(podmanStateDir()),
      GIT_AUTHOR_NAME: 'Test',
      GIT_AUTHOR_EMAIL: 't@example.com',
      GIT_COMMITTER_NAME: 'Test',
      GIT_COMMITTER_EMAIL: 't@example.com',
    }
    expect((await yard(['worktree', 'add', 'feat'], {cwd: repo, env})).exitCode).to.equal(0)
    const feat = path.join(`${repo}-worktrees`, 'feat')
    const up = await yard(['box', 'up', '--worktree', 'feat'], {cwd: repo, env})
    expect(up.exitCode, up.stderr).to.equal(0)
    expect(up.stderr).to.include('added /.yard/ to')

    const agent = yardChild(repo, env, [
      'exec',
      'feat',
      '--',
      'sh',
      '-c',
      'printenv CLAUDE_CONFIG_DIR CODEX_HOME GEMINI_CLI_HOME; test -d "$CODEX_HOME" && mkdir -p "$CLAUDE_CONFIG_DIR/projects/p" && echo talk > "$CLAUDE_CONFIG_DIR/projects/p/session.jsonl"',
    ])
    expect(agent.status, agent.stderr).to.equal(0)
    const home = path.join(feat, '.yard', 'agent-home')
    expect(agent.stdout.trim().split('\n')).to.deep.equal([
      path.join(home, 'claude'),
      path.join(home, 'codex'),
      path.join(home, 'gemini'),
    ])

    const run = await yard(['worktree', 'remove', 'feat', '--yes'], {cwd: repo, env})
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(run.stdout).to.match(
      /the box's agent home \S+ archived to \S+\/transcripts\/yardtest-r\/feat\/agent-home \(1 copied, 0 already there\)/,
    )
    expect(run.stdout).to.include(`removed container ${prefix}-feat-box`)

    await runPrinted(printedAfter(run.stdout, 'restore it with:')!, {cwd: repo, env})
    expect(readFileSync(path.join(home, 'claude', 'projects', 'p', 'session.jsonl'), 'utf8')).to.equal('talk\n')
  })

  it('[box] mounts = "worktree": git status, commit and log work in the box, while .git/config, .git/hooks and the main checkout are out of reach', async () => {
    const repo = makeRepo({'yard.toml': `[project]\nprefix = "${prefix}"\n`, '.gitignore': '.yard/\nyard.local.toml\n'})
    writeFile(repo, 'yard.local.toml', '[box]\nmounts = "worktree"\n')
    const env = podmanEnv(podmanStateDir())
    expect((await yard(['worktree', 'add', 'iso'], {cwd: repo, env})).exitCode).to.equal(0)
    const iso = path.join(`${repo}-worktrees`, 'iso')
    const up = await yard(['box', 'up', '--worktree', 'iso'], {cwd: repo, env})
    expect(up.exitCode, up.stderr).to.equal(0)
    const inBox = (script: string) => yardChild(repo, env, ['exec', 'iso', '--', 'sh', '-c', script])

    const work = inBox(
      'echo change > work.txt && git add work.txt && git status --short && git -c user.name=t -c user.email=t@x commit -q -m in-box && git log --format=%s -1',
    )
    expect(work.status, work.stderr).to.equal(0)
    expect(work.stdout.trim().split('\n')).to.deep.equal(['A  work.txt', 'in-box'])
    expect(git(repo, 'log', '--format=%s', '-1', 'wt/iso')).to.equal('in-box')

    expect(inBox('git config core.fsmonitor "touch /tmp/pwned"').status).to.not.equal(0)
    expect(inBox(`echo 'touch /tmp/pwned' > ${path.join(repo, '.git', 'hooks', 'post-checkout')}`).status).to.not.equal(
      0,
    )
    inBox(`echo changed > ${path.join(repo, 'README')}`)
    expect(git(repo, 'config', '--default', 'none', '--get', 'core.fsmonitor')).to.equal('none')
    expect(existsSync(path.join(repo, '.git', 'hooks', 'post-checkout'))).to.equal(false)
    expect(readFileSync(path.join(repo, 'README'), 'utf8')).to.equal('test\n')
    expect(readFileSync(path.join(iso, 'work.txt'), 'utf8')).to.equal('change\n')

    // The box points its .git at the common dir: the next box up still mounts only the worktree's own git dir.
    const link = readFileSync(path.join(iso, '.git'), 'utf8')
    expect(inBox(`echo "gitdir: ${path.join(repo, '.git')}" > .git`).status).to.equal(0)
    expect((await yard(['box', 'down', '--worktree', 'iso'], {cwd: repo, env})).exitCode).to.equal(0)
    writeFileSync(path.join(iso, '.git'), `gitdir: ${path.join(repo, '.git')}\n`)
    const again = await yard(['box', 'up', '--worktree', 'iso'], {cwd: repo, env})
    expect(again.exitCode, again.stderr).to.equal(0)
    expect(inBox(`echo '# pwned' >> ${path.join(repo, '.git', 'config')}`).status).to.not.equal(0)
    expect(readFileSync(path.join(repo, '.git', 'config'), 'utf8')).not.to.include('pwned')
    writeFileSync(path.join(iso, '.git'), link)

    // The main checkout's git dir is the common dir: its config and hooks are read-only over it.
    expect((await yard(['box', 'up'], {cwd: repo, env})).exitCode).to.equal(0)
    const inMain = (script: string) => yardChild(repo, env, ['exec', 'main', '--', 'sh', '-c', script])
    const main = inMain(
      'git -c user.name=t -c user.email=t@x commit -q --allow-empty -m in-main-box && git log --format=%s -1',
    )
    expect(main.status, main.stderr).to.equal(0)
    expect(main.stdout.trim()).to.equal('in-main-box')
    expect(inMain('git config core.fsmonitor "touch /tmp/pwned"').status).to.not.equal(0)
    expect(
      inMain(`echo 'touch /tmp/pwned' > ${path.join(repo, '.git', 'hooks', 'post-checkout')}`).status,
    ).to.not.equal(0)
    expect(git(repo, 'config', '--default', 'none', '--get', 'core.fsmonitor')).to.equal('none')
    // yard's own files in .git: an add's journal names what a rollback removes.
    const journal = path.join(repo, '.git', 'yard', 'adding', 'feat.json')
    expect(inMain(`mkdir -p ${path.dirname(journal)} && echo '{}' > ${journal}`).status).to.not.equal(0)
    expect(existsSync(journal)).to.equal(false)
  })
})
