import {expect} from 'chai'
import {execFileSync} from 'node:child_process'

import {addWorktree, cleanupTemp, makeRepo, tempDir, writeFile} from '../support/repo.js'
import {yard} from '../support/yard.js'

const clean = {
  WT_OFFSET: undefined,
  YARD_WORKTREE: undefined,
  CONTAINERS_CONF: undefined,
  YARD_PREFIX: undefined,
  YARD_STATE_DIR: undefined,
}

describe('yard env (DESIGN.md §3.5)', () => {
  afterEach(cleanupTemp)

  it('exports the identity and ports of a worktree, and leaves WORKTREE unset for main', async () => {
    const repo = makeRepo({'yard.toml': '[ports]\nAPP_PORT = 3000\n'})
    const feat = addWorktree(repo, 'feat')
    const state = tempDir('state')
    const env = {...clean, YARD_STATE_DIR: state}
    const json = await yard(['env', '--worktree', 'feat', '--format', 'json'], {cwd: repo, env})
    expect(json.json).to.deep.equal({
      MAIN_REPO: repo,
      WORKTREE: 'feat',
      YARD_CHECKOUT: feat,
      COMPOSE_PROJECT_NAME: 'app-feat',
      PODMAN_PROJECT: 'app-feat',
      APP_PORT: '3059',
    })
    expect((await yard(['env', '--json'], {cwd: repo, env})).json).to.not.have.property('WORKTREE')
    const sh = await yard(['env'], {cwd: repo, env})
    expect(sh.stdout).to.contain("export COMPOSE_PROJECT_NAME='app'").and.contain('unset WORKTREE')
    // The sh rendering really evaluates to the same values.
    const evaluated = execFileSync(
      'sh',
      [
        '-c',
        `${(await yard(['env', '-w', 'feat'], {cwd: repo, env})).stdout}\necho "$WORKTREE $APP_PORT $YARD_CHECKOUT"`,
      ],
      {encoding: 'utf8'},
    )
    expect(evaluated.trim()).to.equal(`feat 3059 ${feat}`)
    const fish = await yard(['env', '--format', 'fish', '-w', 'feat'], {cwd: repo, env})
    expect(fish.stdout).to.contain("set -gx WORKTREE 'feat'")
  })

  it("passes the user's CONTAINERS_CONF, else yard's own file when it exists", async () => {
    const repo = makeRepo()
    const state = tempDir('state')
    expect(
      (await yard(['env', '--json'], {cwd: repo, env: {...clean, YARD_STATE_DIR: state}})).json,
    ).to.not.have.property('CONTAINERS_CONF')
    writeFile(state, 'containers.conf', '[engine]\n')
    expect((await yard(['env', '--json'], {cwd: repo, env: {...clean, YARD_STATE_DIR: state}})).json).to.include({
      CONTAINERS_CONF: `${state}/containers.conf`,
    })
    expect(
      (
        await yard(['env', '--json'], {
          cwd: repo,
          env: {...clean, YARD_STATE_DIR: state, CONTAINERS_CONF: '/mine.conf'},
        })
      ).json,
    ).to.include({CONTAINERS_CONF: '/mine.conf'})
  })
})

describe('yard config (DESIGN.md §3.2, Appendix A)', () => {
  afterEach(cleanupTemp)

  it('shows every value with its origin', async () => {
    const repo = makeRepo({'yard.toml': '[ports]\nAPP_PORT = 3000\n'})
    writeFile(repo, 'yard.local.toml', '[worktree-offsets]\nfeat = 7\n')
    const result = await yard(['config', '--json'], {cwd: repo, env: {...clean, YARD_PREFIX: 'shop'}})
    expect(result.exitCode, result.stderr).to.equal(0)
    const report = result.json as Record<string, {value: unknown; origin: string}>
    expect(report['ports.APP_PORT']).to.deep.equal({value: 3000, origin: 'yard.toml'})
    expect(report['project.prefix']).to.deep.equal({value: 'shop', origin: 'env:YARD_PREFIX'})
    expect(report['worktree-offsets.feat']).to.deep.equal({value: 7, origin: 'yard.local.toml'})
    expect(report['stack.provider']).to.deep.equal({value: 'auto', origin: 'default'})
    expect(report['box.image']).to.deep.equal({value: null, origin: 'default'})
    const table = await yard(['config'], {cwd: repo, env: clean})
    expect(table.stdout).to.match(/ports\.APP_PORT\s+3000\s+← yard\.toml/)
  })

  it('exits 2 on an unknown key with "did you mean"', async () => {
    const repo = makeRepo({'yard.toml': '[project]\nprefx = "a"\n'})
    const result = await yard(['config'], {cwd: repo, env: clean})
    expect(result.exitCode).to.equal(2)
    expect(result.stderr).to.contain(`${repo}/yard.toml: unknown key [project] prefx — did you mean "prefix"?`)
    const json = await yard(['config', '--json'], {cwd: repo, env: clean})
    expect(json.exitCode).to.equal(2)
    expect(json.json).to.have.nested.property('error.code', 2)
  })
})
