import {expect} from 'chai'
import {existsSync, mkdirSync, readdirSync, symlinkSync} from 'node:fs'
import path from 'node:path'

import {AGENT_HOME_DIR, ensureAgentHome} from '../../../src/core/worktree/agent-home.js'
import {RefusedError} from '../../../src/sdk/errors.js'
import {cleanupTemp, tempDir} from '../../support/repo.js'

describe('the agent home is made inside the checkout only', () => {
  after(cleanupTemp)

  it('creates .yard/agent-home/<cli> and is idempotent', async () => {
    const checkout = tempDir('agent-home')
    await ensureAgentHome(checkout)
    await ensureAgentHome(checkout)
    expect(readdirSync(path.join(checkout, AGENT_HOME_DIR)).sort()).to.deep.equal(['claude', 'codex', 'gemini'])
  })

  it('refuses .yard, agent-home or a CLI directory that is a symbolic link, creating nothing through it', async () => {
    for (const linked of ['.yard', AGENT_HOME_DIR, path.join(AGENT_HOME_DIR, 'codex')]) {
      const checkout = tempDir('agent-home-link')
      const outside = tempDir('agent-home-outside')
      mkdirSync(path.dirname(path.join(checkout, linked)), {recursive: true})
      symlinkSync(outside, path.join(checkout, linked))
      const error = await ensureAgentHome(checkout).then(
        () => undefined,
        (error_: unknown) => error_,
      )
      expect(error, linked).to.be.instanceOf(RefusedError)
      expect((error as Error).message).to.include('is a symbolic link')
      expect(readdirSync(outside), linked).to.deep.equal([])
      expect(existsSync(outside)).to.equal(true)
    }
  })
})
