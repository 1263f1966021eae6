/**
 * The box's agent home (docs/stacks.md) on real podman with yard's default image: agents in the
 * box write under `<checkout>/.yard/agent-home/`, and `yard worktree remove` archives it with a
 * restore command that brings it back.
 */
import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import {readFileSync} from 'node:fs'
import path from 'node:path'

import {cleanupTemp, makeRepo} from '../../support/repo.js'
import {ensureDefaultImage, podmanEnv, podmanStateDir, sweep} from '../../support/podman.js'
import {printedAfter, runPrinted} from '../../support/restore.js'
import {projectRoot, yard} from '../../support/yard.js'

const prefix = 'yardtest-r'
const devJs = path.join(projectRoot, 'bin', 'dev.js')

/** `yard …` as a child process (exec hands the terminal to podman). */
export function yardChild(cwd: string, env: Record<string, string | undefined>, args: string[]): {status: number; stdout: string; stderr: string} {
  const childEnv: NodeJS.ProcessEnv = {...process.env}
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) delete childEnv[key]
    else childEnv[key] = value
  }
  const result = spawnSync(process.execPath, [devJs, ...args], {cwd, env: childEnv, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe']})
  return {status: result.status ?? 1, stdout: result.stdout, stderr: result.stderr}
}

describe("the box's agent home (docs/stacks.md)", function () {
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
    const env = {...podmanEnv(podmanStateDir()), GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 't@example.com'}
    expect((await yard(['worktree', 'add', 'feat'], {cwd: repo, env})).exitCode).to.equal(0)
    const feat = path.join(`${repo}-worktrees`, 'feat')
    const up = await yard(['box', 'up', '--worktree', 'feat'], {cwd: repo, env})
    expect(up.exitCode, up.stderr).to.equal(0)
    expect(up.stderr).to.include('added /.yard/ to')

    const agent = yardChild(repo, env, ['exec', 'feat', '--', 'sh', '-c', 'printenv CLAUDE_CONFIG_DIR CODEX_HOME GEMINI_CLI_HOME; test -d "$CODEX_HOME" && mkdir -p "$CLAUDE_CONFIG_DIR/projects/p" && echo talk > "$CLAUDE_CONFIG_DIR/projects/p/session.jsonl"'])
    expect(agent.status, agent.stderr).to.equal(0)
    const home = path.join(feat, '.yard', 'agent-home')
    expect(agent.stdout.trim().split('\n')).to.deep.equal([path.join(home, 'claude'), path.join(home, 'codex'), path.join(home, 'gemini')])

    const run = await yard(['worktree', 'remove', 'feat', '--yes'], {cwd: repo, env})
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(run.stdout).to.match(/the box's agent home \S+ archived to \S+\/transcripts\/yardtest-r\/feat\/agent-home \(1 copied, 0 already there\)/)
    expect(run.stdout).to.include(`removed container ${prefix}-feat-box`)

    await runPrinted(printedAfter(run.stdout, 'restore it with:')!, {cwd: repo, env})
    expect(readFileSync(path.join(home, 'claude', 'projects', 'p', 'session.jsonl'), 'utf8')).to.equal('talk\n')
  })
})
