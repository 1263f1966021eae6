/**
 * `yard up --dry-run` (DESIGN.md §4.2, "yard renders the stack"): the report is printed whole,
 * and the exit code is the one `up` would give — 3 when the report refuses something, 2 when
 * the compose file is invalid. Reads files only: no engine.
 */
import {expect} from 'chai'
import {symlinkSync} from 'node:fs'
import path from 'node:path'

import {addWorktree, cleanupTemp, makeRepo} from '../support/repo.js'
import {yard} from '../support/yard.js'

const clean = {
  WT_OFFSET: undefined,
  YARD_WORKTREE: undefined,
  WORKTREE: undefined,
  YARD_PREFIX: undefined,
  YARD_WORKTREES_ROOT: undefined,
  COMPOSE_FILE: undefined,
  COMPOSE_PROFILES: undefined,
}
const HOST = 'services:\n  agent:\n    image: a\n    network_mode: host\n  web:\n    image: w\n    ports: ["8080:80"]\n'

interface DryRun {
  project: string
  files: string[]
  compose: {services: Record<string, unknown>} | null
  report: Array<{kind: string; service: string | null; detail: string; action: string}>
}

describe('yard up --dry-run: the exit code up would give (DESIGN.md §4.2)', () => {
  afterEach(cleanupTemp)

  it('exits 3 after printing the report when it has refusals; --json prints the documented shape with the report', async () => {
    const repo = makeRepo({'compose.yaml': HOST})
    addWorktree(repo, 'feat')
    const json = await yard(['up', '--dry-run', '--json', '--worktree', 'feat'], {cwd: repo, env: clean})
    expect(json.exitCode, json.stderr).to.equal(3)
    const plan = json.json as DryRun
    expect(Object.keys(plan)).to.deep.equal(['project', 'files', 'compose', 'report'])
    expect(Object.keys(plan.compose!.services)).to.deep.equal(['agent', 'web'])
    expect(plan.report.find((entry) => entry.kind === 'refused')).to.deep.include({service: 'agent'})
    expect(Object.keys(plan.report[0])).to.deep.equal(['kind', 'service', 'detail', 'action'])
    const text = await yard(['up', '--dry-run', '--worktree', 'feat'], {cwd: repo, env: clean})
    expect(text.exitCode).to.equal(3)
    expect(text.stdout)
      .to.include('# isolation report:')
      .and.to.match(/refused +agent: network_mode: host/)
    expect(text.stderr)
      .to.include('yard up would refuse worktree feat')
      .and.to.include('1 refusal in the isolation report above')
  })

  it('exits 2 for a compose file name that is a dangling or looping symbolic link, not box-only', async () => {
    for (const [name, target] of [
      ['compose.yaml', '/nonexistent/compose.yaml'],
      ['docker-compose.yml', 'docker-compose.yml'],
    ]) {
      const repo = makeRepo({'yard.toml': '[project]\nprefix = "dangle"\n'})
      symlinkSync(target, path.join(repo, name))
      const result = await yard(['up', '--dry-run'], {cwd: repo, env: clean})
      expect(result.exitCode, `${name}: ${result.stdout}${result.stderr}`).to.equal(2)
      expect(result.stderr).to.include('is not a readable compose file')
      expect(result.stdout).not.to.include('box-only')
    }
  })

  it('exits 0 in main, whose literal values need no isolation', async () => {
    const repo = makeRepo({'compose.yaml': HOST})
    const main = await yard(['up', '--dry-run', '--json'], {cwd: repo, env: clean})
    expect(main.exitCode, main.stderr).to.equal(0)
    expect((main.json as DryRun).report).to.deep.equal([])
  })

  it('exits 2 for an invalid compose file, naming file, key path and entry', async () => {
    const repo = makeRepo({'compose.yaml': 'services:\n  web:\n    image: w\n    ports: ["8000-8010:80-81"]\n'})
    const run = await yard(['up', '--dry-run'], {cwd: repo, env: clean})
    expect(run.exitCode).to.equal(2)
    expect(run.stderr).to.include('compose.yaml: services.web.ports.0: "8000-8010:80-81" is not a valid port entry')
    expect(run.stderr).to.match(/fix: correct the entry in .*compose\.yaml/)
  })
})
