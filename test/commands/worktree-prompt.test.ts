/**
 * The confirmation prompt of `yard worktree remove` in a real terminal (a tmux pane): y removes,
 * n refuses (exit 3), Ctrl-C cancels (exit 130); nothing changes unless confirmed.
 */
import {expect} from 'chai'
import {execFileSync, spawnSync} from 'node:child_process'
import {existsSync} from 'node:fs'
import path from 'node:path'

import {cleanupTemp, makeRepo, tempDir} from '../support/repo.js'
import {cleanEnv, registered, rootOf} from '../support/worktrees.js'
import {projectRoot, yard} from '../support/yard.js'

describe('yard worktree remove asks on a terminal (DESIGN.md Appendix B)', () => {
  const socket = `yard-prompt-${process.pid}`
  const tmux = (...args: string[]) =>
    execFileSync('tmux', ['-L', socket, '-f', '/dev/null', ...args], {encoding: 'utf8'})
  const quote = (word: string) => `'${word.replaceAll("'", String.raw`'\''`)}'`
  const screen = () => tmux('capture-pane', '-p', '-t', 't')
  const waitFor = async (pattern: RegExp) => {
    for (let tries = 0; tries < 150; tries++) {
      if (pattern.test(screen())) return
      await new Promise((resolve) => setTimeout(resolve, 200))
    }

    throw new Error(`tmux pane never showed ${pattern}:\n${screen()}`)
  }

  afterEach(() => {
    spawnSync('tmux', ['-L', socket, 'kill-server'])
    cleanupTemp()
  })

  it('removes on y, refuses on n (exit 3) and cancels on Ctrl-C (exit 130)', async function () {
    this.timeout(120_000)
    const repo = makeRepo({'yard.toml': '[stack]\nbackend = "not-installed"\n'})
    const state = tempDir('state')
    for (const name of ['feat', 'keep'])
      expect((await yard(['worktree', 'add', name], {cwd: repo, env: cleanEnv(state)})).exitCode).to.equal(0)
    const remove = (name: string, marker: string) =>
      `clear; cd ${quote(repo)} && YARD_STATE_DIR=${quote(state)} ${quote(process.execPath)} ${quote(path.join(projectRoot, 'bin', 'dev.js'))} worktree remove ${name}; echo ${marker}=$?`
    tmux(
      'new-session',
      '-d',
      '-s',
      't',
      '-x',
      '120',
      '-y',
      '30',
      'env -u YARD_WORKTREE -u YARD_WORKTREES_ROOT -u WT_OFFSET sh',
    )

    tmux('send-keys', '-t', 't', remove('keep', 'declined'), 'Enter')
    await waitFor(/Remove worktree keep\? \[y\/N\]\s*$/m)
    tmux('send-keys', '-t', 't', 'n', 'Enter')
    await waitFor(/^declined=3$/m)
    expect(screen()).to.include('declined: nothing was changed')

    tmux('send-keys', '-t', 't', remove('keep', 'cancelled'), 'Enter')
    await waitFor(/Remove worktree keep\? \[y\/N\]\s*$/m)
    tmux('send-keys', '-t', 't', 'C-c')
    await waitFor(/^cancelled=130$/m)
    expect(registered(repo)).to.include(path.join(rootOf(repo), 'keep'))

    tmux('send-keys', '-t', 't', remove('feat', 'confirmed'), 'Enter')
    await waitFor(/Remove worktree feat\? \[y\/N\]\s*$/m)
    tmux('send-keys', '-t', 't', 'y', 'Enter')
    await waitFor(/^confirmed=0$/m)
    expect(existsSync(path.join(rootOf(repo), 'feat'))).to.equal(false)
    expect(registered(repo)).to.deep.equal([repo, path.join(rootOf(repo), 'keep')])
  })
})
