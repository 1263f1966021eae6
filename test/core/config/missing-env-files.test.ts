/** `yard up` in a worktree warns about main's gitignored env files it lacks (DESIGN.md §4.2). */
import {expect} from 'chai'
import path from 'node:path'

import type {Target} from '../../../src/sdk/target.js'

import {describeMissingEnvFile, missingEnvFiles} from '../../../src/core/config/missing-env-files.js'
import {createContext} from '../../../src/core/kernel/context.js'
import {cleanupTemp, git, makeRepo, tempDir, writeFile} from '../../support/repo.js'
import {cleanEnv} from '../../support/worktrees.js'
import {yard} from '../../support/yard.js'

describe('missing env files of a worktree (DESIGN.md §4.2)', () => {
  after(cleanupTemp)

  it("names main's ignored .env files the worktree lacks; tracked ones and main itself are never named", async () => {
    const main = makeRepo({'.gitignore': '.env.local\n.env\n', '.env.example': 'A=1\n'})
    writeFile(main, '.env', 'APP_PORT=1\n')
    writeFile(main, '.env.local', 'SECRET=x\n')
    writeFile(main, '.envrc', 'not an env file of compose\n')
    const checkout = path.join(`${main}-worktrees`, 'feat')
    git(main, 'worktree', 'add', '-q', '-b', 'wt/feat', checkout)
    writeFile(checkout, '.env', 'APP_PORT=2\n')
    const target: Target = {
      name: 'feat',
      isMain: false,
      prefix: 'app',
      project: 'app-feat',
      owner: 'o',
      offset: 1,
      offsetSource: 'hash',
      ports: {},
      checkoutPath: checkout,
      mainPath: main,
    }
    const {runner} = createContext()
    expect(await missingEnvFiles(runner, target)).to.deep.equal(['.env.local'])
    expect(await missingEnvFiles(runner, {...target, isMain: true, checkoutPath: main})).to.deep.equal([])
    expect(describeMissingEnvFile('.env.local', target)).to.include(
      `cp ${path.join(main, '.env.local')} ${path.join(checkout, '.env.local')}`,
    )
  })
})

describe("yard up --dry-run in a worktree without main's ignored .env (DESIGN.md §4.2)", () => {
  after(cleanupTemp)

  it('warns as yard up does, since the plan it prints runs without those values', async () => {
    const main = makeRepo({
      '.gitignore': '.env\n',
      'yard.toml': '[project]\nprefix = "yardtest-e"\n',
      'compose.yaml': 'services:\n  web:\n    image: busybox\n    ports:\n      - "${WEB:-8080}:80"\n',
    })
    writeFile(main, '.env', 'WEB=8081\n')
    const checkout = path.join(`${main}-worktrees`, 'feat')
    git(main, 'worktree', 'add', '-q', '-b', 'wt/feat', checkout)
    const run = await yard(['up', '--dry-run', '--worktree', 'feat'], {cwd: main, env: cleanEnv(tempDir('state'))})
    expect(run.exitCode, run.stderr).to.equal(0)
    expect(run.stderr).to.include('warning: main has .env (ignored by git) and worktree feat has none')
  })
})
