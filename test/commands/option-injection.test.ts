import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import path from 'node:path'

import {cleanupTemp, makeRepo, tempDir} from '../support/repo.js'
import {cleanEnv} from '../support/worktrees.js'
import {projectRoot, yard} from '../support/yard.js'

describe('values that would reach a tool as a flag are refused (exit 2)', () => {
  afterEach(cleanupTemp)

  it('sandbox create --image=--privileged is invalid input, refused before anything runs', async () => {
    const repo = makeRepo()
    const run = await yard(
      ['sandbox', 'create', 's1', '--repo', 'https://example.com/app.git', '--image=--privileged'],
      {cwd: repo, env: cleanEnv(tempDir('state'))},
    )
    expect(run.exitCode, run.stderr).to.equal(2)
    expect(run.stderr).to.contain('invalid image "--privileged" from --image: it starts with "-"')
  })

  it('box up refuses [box] image = "--privileged" at config load, naming the file and key', async () => {
    const repo = makeRepo({'yard.toml': '[project]\nprefix = "yardtest-inj"\n[box]\nimage = "--privileged"\n'})
    // As its own process: a fresh CLI, as a user runs it (box up is a topic command).
    const run = spawnSync(process.execPath, [path.join(projectRoot, 'bin', 'dev.js'), 'box', 'up'], {
      cwd: repo,
      env: {...process.env, ...cleanEnv(tempDir('state'))},
      encoding: 'utf8',
      timeout: 60_000,
    })
    expect(run.status, run.stderr).to.equal(2)
    expect(run.stderr).to.contain(
      'yard.toml: invalid value at box.image: "--privileged" is not an image reference: it starts with "-"',
    )
  })
})
