import {expect} from 'chai'
import {spawn} from 'node:child_process'
import {readFileSync} from 'node:fs'
import path from 'node:path'
import {parse} from 'smol-toml'

import {hashOffset} from '../../src/core/identity/identity.js'
import {cleanupTemp, makeRepo, tempDir, writeFile} from '../support/repo.js'
import {cleanEnv, registered, rootOf} from '../support/worktrees.js'
import {projectRoot, yard} from '../support/yard.js'

const LOCAL = `# my yard.local.toml: comments must survive concurrent pins
[ports]
APP_PORT = 3100 # 3000 is busy on this laptop

[worktree-offsets]
# pins go below
`

/** `count` names whose hash offsets are all the same. */
function namesHashingAlike(count: number): string[] {
  const byOffset = new Map<number, string[]>()
  for (let index = 0; ; index++) {
    const name = `c${index}`
    const same = byOffset.get(hashOffset(name)) ?? []
    same.push(name)
    byOffset.set(hashOffset(name), same)
    if (same.length === count) return same
  }
}

/** Runs `node bin/dev.js args…` as its own process; resolves with its exit code and stderr. */
async function devRun(
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{code: number | null; stderr: string}> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(projectRoot, 'bin', 'dev.js'), ...args], {
      cwd,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.on('close', (code) => resolve({code, stderr}))
  })
}

describe('yard worktree add under the offsets lock (DESIGN.md §3.4)', () => {
  afterEach(cleanupTemp)

  it('gives eight concurrent adds of names that hash alike eight distinct offsets, keeping yard.local.toml well-formed with its comments', async function () {
    this.timeout(180_000)
    const repo = makeRepo({'yard.toml': '[ports]\nAPP_PORT = 3000\n'})
    writeFile(repo, 'yard.local.toml', LOCAL)
    const names = namesHashingAlike(8)
    const env: NodeJS.ProcessEnv = {...process.env}
    for (const [key, value] of Object.entries(cleanEnv(tempDir('state')))) {
      if (value === undefined) delete env[key]
      else env[key] = value
    }

    const runs = await Promise.all(
      names.map(async (name) => devRun(['worktree', 'add', name, '--no-fetch'], repo, env)),
    )
    for (const [index, run] of runs.entries()) expect(run.code, `${names[index]}: ${run.stderr}`).to.equal(0)

    const text = readFileSync(path.join(repo, 'yard.local.toml'), 'utf8')
    expect(text.startsWith(LOCAL), text).to.equal(true)
    const local = parse(text) as {ports: unknown; 'worktree-offsets': Record<string, number>}
    expect(local.ports).to.deep.equal({APP_PORT: 3100})
    expect(Object.keys(local['worktree-offsets'])).to.have.length(7)
    expect(registered(repo)).to.have.length(9)

    const all = await yard(['ports', '--all', '--json'], {cwd: repo, env: cleanEnv(tempDir('state'))})
    const rows = (all.json as Array<{worktree: string; offset: number; clashesWith: string[]}>).filter(
      (row) => row.worktree !== 'main',
    )
    expect(rows.map((row) => row.worktree).sort()).to.deep.equal([...names].sort())
    expect(new Set(rows.map((row) => row.offset)).size).to.equal(8)
    for (const row of rows) expect(row.clashesWith, row.worktree).to.deep.equal([])
    expect(rows.map((row) => path.join(rootOf(repo), row.worktree)).sort()).to.deep.equal(
      registered(repo).slice(1).sort(),
    )
  })
})
