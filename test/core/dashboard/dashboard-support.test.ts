/**
 * Small parts of the dashboard's core: the trace (YARD_DASHBOARD_TRACE) and which repository a
 * sandbox made with `n` holds, with the name checked before anything is made.
 */
import {expect} from 'chai'
import {readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {createFromDashboard, projectRepository} from '../../../src/core/dashboard/create.js'
import {dashboardTracer, traced} from '../../../src/core/dashboard/trace.js'
import {createContext} from '../../../src/core/kernel/context.js'
import {backendsOf} from '../../../src/core/registry/backends.js'
import {loadRegistry} from '../../../src/core/registry/registry.js'
import {InputError} from '../../../src/sdk/errors.js'
import {cleanupTemp, git, makeRepo, tempDir} from '../../support/repo.js'
import {testConfig} from '../../support/yard.js'

describe('dashboard trace (YARD_DASHBOARD_TRACE)', () => {
  after(() => cleanupTemp())

  it('appends one timed line per step, start and end (or failure) of each traced part', async () => {
    const file = path.join(tempDir('yard-trace'), 'trace')
    const trace = dashboardTracer({YARD_DASHBOARD_TRACE: file})
    trace('command: run')
    expect(await traced(trace, 'gather local', async () => 7)).to.equal(7)
    const failed = await traced(trace, 'probe stack feat', async () => {
      throw new Error('engine gone\nmore')
    }).catch((error: Error) => error.message)
    expect(failed).to.equal('engine gone\nmore')
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n')
    const stamp = String.raw`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z \+\d+ms pid=${process.pid} `
    expect(lines).to.have.length(5)
    expect(lines[0]).to.match(new RegExp(`${stamp}command: run$`))
    expect(lines[1]).to.match(new RegExp(`${stamp}gather local start$`))
    expect(lines[2]).to.match(new RegExp(String.raw`${stamp}gather local end \d+ms$`))
    expect(lines[4]).to.match(new RegExp(String.raw`${stamp}probe stack feat failed \d+ms: engine gone$`))
  })

  it('does nothing without the variable, and never throws when the file cannot be written', async () => {
    const blocker = path.join(tempDir('yard-trace'), 'file')
    writeFileSync(blocker, '')
    const trace = dashboardTracer({YARD_DASHBOARD_TRACE: path.join(blocker, 'trace')})
    trace('one')
    expect(await traced(trace, 'part', async () => 'done')).to.equal('done')
    expect(await traced(dashboardTracer({}), 'part', async () => 'done')).to.equal('done')
  })
})

describe('dashboard n: the repository of a new sandbox', () => {
  after(() => cleanupTemp())

  it("is the main checkout's origin url as configured, else the main checkout's path", async () => {
    const repo = makeRepo()
    const context = createContext({cwd: repo, env: {...process.env, YARD_STATE_DIR: tempDir('yard-state')}, warn() {}})
    expect(await projectRepository(context)).to.equal(repo)
    git(repo, 'remote', 'add', 'origin', 'https://git.example.com/team/app.git')
    expect(await projectRepository(context)).to.equal('https://git.example.com/team/app.git')
  })

  it('refuses an invalid name (exit 2) before anything is made', async () => {
    const repo = makeRepo()
    const context = createContext({cwd: repo, env: {...process.env, YARD_STATE_DIR: tempDir('yard-state')}, warn() {}})
    const registry = backendsOf(await loadRegistry(await testConfig()))
    for (const [mode, name] of [
      ['local', 'Bad_name'],
      ['cluster', 'main'],
    ] as const) {
      const failure = await createFromDashboard(context, registry, mode, name).then(
        () => undefined,
        (error: Error) => error,
      )
      expect(failure).to.be.instanceOf(InputError)
      expect(failure!.message).to.include(`invalid ${mode === 'local' ? 'worktree' : 'sandbox'} name "${name}"`)
    }

    expect(git(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).to.have.length(1)
  })
})
