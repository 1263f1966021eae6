/**
 * `yard dashboard` without a terminal (DESIGN.md §6, Appendix A): one snapshot of the table, or
 * `--json` rows, from the same core services as `worktree list` and `sandbox list`, with stack
 * states from real podman and a sandbox of the podman runtime.
 */
import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import path from 'node:path'

import type {ClusterRow, LocalRow} from '../../src/core/dashboard/dashboard.js'

import {makeUpstream} from '../plugins/k8s-sandbox/support.js'
import {
  ensureBusyboxImage,
  ensureDefaultImage,
  podmanEnv,
  podmanStateDir,
  sweep,
  webService,
} from '../support/podman.js'
import {addWorktree, cleanupTemp, makeRepo, writeFile} from '../support/repo.js'
import {projectRoot, yard} from '../support/yard.js'

/** This file's podman objects, and only they, start with this. */
export const DASHBOARD_TEST_PREFIX = 'yardtest-d1'
const devJs = path.join(projectRoot, 'bin', 'dev.js')

describe('yard dashboard without a terminal (DESIGN.md §6)', function () {
  this.timeout(240_000)
  let repo: string
  let env: Record<string, string | undefined>

  before(async () => {
    sweep(DASHBOARD_TEST_PREFIX)
    await ensureDefaultImage()
    await ensureBusyboxImage() // the web services' image, also when no stack test ran before
    const compose = ['services:', '  web:', webService('hello ${WORKTREE:-main}', '${WEB_PORT:-38750}:8080'), ''].join(
      '\n',
    )
    repo = makeRepo({
      'yard.toml': `[project]\nprefix = "${DASHBOARD_TEST_PREFIX}"\n\n[ports]\nWEB_PORT = 38750\n`,
      'compose.yaml': compose,
    })
    addWorktree(repo, 'feat')
    addWorktree(repo, 'fix')
    writeFile(path.join(`${repo}-worktrees`, 'fix'), 'notes.txt', 'not committed\n')
    env = podmanEnv(podmanStateDir())
    const up = await yard(['up', '--worktree', 'feat'], {cwd: repo, env})
    expect(up.exitCode, up.stderr).to.equal(0)
    const created = await yard(['sandbox', 'create', 'sbx', '--repo', makeUpstream('shop'), '--branch', 'feat/cart'], {
      cwd: repo,
      env,
    })
    expect(created.exitCode, created.stderr).to.equal(0)
  })

  after(() => {
    sweep(DASHBOARD_TEST_PREFIX)
    cleanupTemp()
  })

  it('`yard dashboard | cat` prints the local table and exits 0', () => {
    const childEnv: NodeJS.ProcessEnv = {...process.env}
    for (const [key, value] of Object.entries(env)) {
      if (value === undefined) delete childEnv[key]
      else childEnv[key] = value
    }

    const piped = spawnSync('bash', ['-c', `set -o pipefail; node ${JSON.stringify(devJs)} dashboard | cat`], {
      cwd: repo,
      env: childEnv,
      encoding: 'utf8',
    })
    expect(piped.status, piped.stderr).to.equal(0)
    const lines = piped.stdout.trimEnd().split('\n')
    expect(lines[0].split(/\s{2,}/)).to.deep.equal(['NAME', 'BRANCH', 'OFFSET', 'PORTS', 'STACK', 'BOX', 'GIT'])
    const byName = new Map(lines.slice(1).map((line) => [line.split(/\s+/, 1)[0], line]))
    expect([...byName.keys()]).to.deep.equal(['main', 'feat', 'fix'])
    expect(byName.get('main')).to.match(/main\s+main\s+0 main\s+WEB_PORT=38750\s+absent\s+absent/)
    expect(byName.get('feat')).to.match(/feat\s+wt\/feat\s+\d+ hash\s+WEB_PORT=\d+\s+running 1\/1\s+absent/)
    expect(byName.get('fix')).to.match(/fix\s+wt\/fix\s+\d+ hash\s+WEB_PORT=\d+\s+absent\s+absent\s+0M 1U/)
  })

  it('--json gives {mode, rows}: the rows of `worktree list` plus ports, clashes, stack and box', async () => {
    const [shown, listed] = await Promise.all([
      yard(['dashboard', '--json'], {cwd: repo, env}),
      yard(['worktree', 'list', '--json'], {cwd: repo, env}),
    ])
    expect(shown.exitCode, shown.stderr).to.equal(0)
    const snapshot = shown.json as {mode: string; rows: LocalRow[]}
    expect(Object.keys(snapshot)).to.deep.equal(['mode', 'rows'])
    expect(snapshot.mode).to.equal('local')
    for (const [index, row] of (listed.json as Array<Record<string, unknown>>).entries())
      expect(snapshot.rows[index]).to.deep.include(row)
    const feat = snapshot.rows.find((row) => row.name === 'feat')!
    expect(feat.stack).to.deep.equal({state: 'running', running: 1, total: 1})
    expect(feat.ports).to.deep.equal({WEB_PORT: 38_750 + feat.offset})
    expect(snapshot.rows.find((row) => row.name === 'fix')!.stack.state).to.equal('absent')
  })

  it('--mode cluster --json gives the sandbox with its slot, branch and cache freshness', async () => {
    const shown = await yard(['dashboard', '--mode', 'cluster', '--json'], {cwd: repo, env})
    expect(shown.exitCode, shown.stderr).to.equal(0)
    const snapshot = shown.json as {mode: string; rows: ClusterRow[]}
    expect(snapshot.mode).to.equal('cluster')
    expect(
      snapshot.rows.map((row) => [row.name, row.runtime, row.phase]),
      shown.stderr,
    ).to.deep.equal([['sbx', 'podman', 'Running']])
    const [repoRow] = snapshot.rows[0].repos
    expect(repoRow.slot).to.equal('shop')
    expect(repoRow.worktrees.map((worktree) => worktree.branch)).to.include('feat/cart')
    expect(repoRow.stale).to.equal(false)
    expect(Date.parse(snapshot.rows[0].lastFetched[repoRow.key]!)).to.be.above(Date.now() - 600_000)
  })

  it('an unknown --mode is exit 2', async () => {
    const shown = await yard(['dashboard', '--mode', 'space', '--json'], {cwd: repo, env})
    expect(shown.exitCode).to.equal(2)
  })
})
