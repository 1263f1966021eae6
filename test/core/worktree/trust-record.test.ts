/**
 * A worktree's trust record (docs/worktrees.md, "Untrusted worktrees"; docs/configuration.md):
 * `[worktrees.NAME] trust = "untrusted"` in the main checkout's yard.local.toml, read beside the
 * `[worktrees]` keys, refused in a committed yard.toml, and edited as text so that comments and
 * other tables survive.
 */
import {expect} from 'chai'
import {readFileSync} from 'node:fs'
import path from 'node:path'

import {loadConfig} from '../../../src/core/config/config.js'
import {editTrustText, writeTrust} from '../../../src/core/worktree/trust-record.js'
import {InputError, OperationError} from '../../../src/sdk/errors.js'
import {cleanupTemp, tempDir, writeFile} from '../../support/repo.js'

async function load(files: Record<string, string>) {
  const main = path.join(tempDir('trust'), 'app')
  for (const [name, content] of Object.entries(files)) writeFile(main, name, content)
  return loadConfig({mainPath: main, env: {YARD_STATE_DIR: '/state'}})
}

async function failure(files: Record<string, string>): Promise<InputError> {
  try {
    await load(files)
  } catch (error) {
    expect(error).to.be.instanceOf(InputError)
    return error as InputError
  }

  throw new Error('expected an InputError')
}

describe('trust records (docs/worktrees.md, "Untrusted worktrees")', () => {
  afterEach(cleanupTemp)

  it('reads [worktrees.NAME] trust from yard.local.toml beside the [worktrees] keys, with its origin', async () => {
    const config = await load({
      'yard.local.toml':
        '[worktrees]\nroot = "../trees"\n\n[worktrees.pr-1]\ntrust = "untrusted"\n\n[worktrees.ok]\ntrust = "trusted"\n',
    })
    expect(config.trust).to.deep.equal({'pr-1': 'untrusted', ok: 'trusted'})
    expect(config.worktrees.root).to.match(/\/trees$/)
    expect(config.origins['worktrees.pr-1.trust']).to.equal('yard.local.toml')
  })

  it('refuses a trust record in a committed yard.toml (exit 2): code in a branch must not vouch for itself', async () => {
    const error = await failure({'yard.toml': '[worktrees.pr-1]\ntrust = "trusted"\n'})
    expect(error.code).to.equal(2)
    expect(error.message).to.include('[worktrees.pr-1] does not belong in yard.toml')
    expect(error.fix).to.include('yard.local.toml')
  })

  it('refuses an invalid trust, an unknown key and an invalid name, naming the table (exit 2)', async () => {
    expect((await failure({'yard.local.toml': '[worktrees.pr-1]\ntrust = "maybe"\n'})).message).to.include(
      'invalid [worktrees.pr-1]: trust must be one of "trusted", "untrusted", got the string "maybe"',
    )
    expect(
      (await failure({'yard.local.toml': '[worktrees.pr-1]\ntrust = "untrusted"\nmachine = "x"\n'})).message,
    ).to.include('unknown key machine')
    expect((await failure({'yard.local.toml': '[worktrees.Bad_Name]\ntrust = "untrusted"\n'})).message).to.include(
      '"Bad_Name" is not a worktree name',
    )
  })

  it('edits the text: appends a table, keeps comments and other tables, and takes the table away again', async () => {
    const before = '# mine\n[worktree-offsets]\nfeat = 3 # by hand\n'
    const added = editTrustText(before, 'pr-1', true)
    expect(added).to.equal('# mine\n[worktree-offsets]\nfeat = 3 # by hand\n\n[worktrees.pr-1]\ntrust = "untrusted"\n')
    expect(editTrustText(added, 'pr-1', false)).to.equal(before)
    // A table holding a comment of the user's keeps its header and the comment.
    const commented = '[worktrees.pr-1]\n# reviewed on Monday\ntrust = "untrusted"\n'
    expect(editTrustText(commented, 'pr-1', false)).to.equal('[worktrees.pr-1]\n# reviewed on Monday\n')
    expect(editTrustText('[worktrees.pr-1]\ntrust = "trusted"\r\n', 'pr-1', true)).to.equal(
      '[worktrees.pr-1]\r\ntrust = "untrusted"\r\n',
    )
  })

  it('writes only the record, and refuses a layout it cannot edit without changing anything else', async () => {
    const dir = tempDir('trust-file')
    const file = path.join(dir, 'yard.local.toml')
    writeFile(dir, 'yard.local.toml', '[box]\nmounts = "worktree"\n')
    expect(await writeTrust(file, 'pr-1', 'untrusted')).to.deep.equal({
      previous: 'trusted',
      text: '[box]\nmounts = "worktree"\n',
    })
    expect(readFileSync(file, 'utf8')).to.equal('[box]\nmounts = "worktree"\n\n[worktrees.pr-1]\ntrust = "untrusted"\n')
    expect((await writeTrust(file, 'pr-1', 'untrusted')).previous).to.equal('untrusted')
    await writeTrust(file, 'pr-1', 'trusted')
    expect(readFileSync(file, 'utf8')).to.equal('[box]\nmounts = "worktree"\n')

    writeFile(dir, 'yard.local.toml', '[worktrees]\npr-2 = {trust = "untrusted"}\n')
    let thrown: unknown
    await writeTrust(file, 'pr-2', 'trusted').catch((error: unknown) => {
      thrown = error
    })
    expect(thrown).to.be.instanceOf(OperationError)
    expect((thrown as OperationError).message).to.include('without changing anything else')
    expect(readFileSync(file, 'utf8')).to.equal('[worktrees]\npr-2 = {trust = "untrusted"}\n')
  })
})
