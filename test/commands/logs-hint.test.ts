/**
 * `yard logs`' words are services; every other targeting command takes a checkout positionally,
 * so `yard logs feat` for a worktree feat says how to name it (`-w feat`). Reads files only.
 */
import {expect} from 'chai'

import {addWorktree, cleanupTemp, makeRepo} from '../support/repo.js'
import {yard} from '../support/yard.js'

const clean = {
  WT_OFFSET: undefined,
  YARD_WORKTREE: undefined,
  WORKTREE: undefined,
  YARD_PREFIX: undefined,
  YARD_WORKTREES_ROOT: undefined,
  COMPOSE_FILE: undefined,
}

describe('yard logs NAME for a worktree NAME', () => {
  afterEach(cleanupTemp)

  it('refuses it as a service (exit 2) and names -w NAME; a plain unknown service gets no such hint', async () => {
    const repo = makeRepo({
      'yard.toml': '[project]\nprefix = "logshint"\n',
      'compose.yaml': 'services:\n  web:\n    image: x\n',
    })
    addWorktree(repo, 'feat')
    const named = await yard(['logs', 'feat'], {cwd: repo, env: clean})
    expect(named.exitCode, named.stderr).to.equal(2)
    expect(named.stderr)
      .to.include('has no service feat')
      .and.include('feat is a worktree')
      .and.include('fix: yard logs -w feat')
    const other = await yard(['logs', 'nosuch'], {cwd: repo, env: clean})
    expect(other.exitCode).to.equal(2)
    expect(other.stderr).not.to.include('-w nosuch')
  })
})
