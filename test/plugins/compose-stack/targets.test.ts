/**
 * What the stack verbs do with a target that is not there, a state directory that cannot be
 * written, and `yard logs`' own rules (DESIGN.md §4.2, §8), on real podman and podman-compose.
 */
import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import {writeFileSync} from 'node:fs'
import path from 'node:path'

import {
  BUSYBOX_IMAGE,
  dataService,
  podmanEnv,
  podmanStateDir,
  podmanTry,
  prepareStackTests,
  projectObjects,
  sweep,
  webService,
} from '../../support/podman.js'
import {cleanupTemp, git, makeRepo} from '../../support/repo.js'
import {projectRoot, yard} from '../../support/yard.js'

const PREFIX = 'yardtest-f2'
const WEB_BASE = 38_900

function compose(): string {
  return [
    'services:',
    '  web:',
    webService('hello ${WORKTREE:-main}', '${WEB_PORT:-38900}:8080'),
    '  store:',
    dataService('data'),
    'volumes:',
    '  data:',
    '',
  ].join('\n')
}

describe('compose-stack: targets that are not there, an unwritable state directory, logs (DESIGN.md §4.2)', function () {
  this.timeout(180_000)
  let repo: string
  let env: Record<string, string | undefined>
  const run = async (args: string[], extra: Record<string, string | undefined> = {}) =>
    yard(args, {cwd: repo, env: {...env, ...extra}})

  /** `yard …` as a child process, for logs: the provider writes to the terminal (here: pipes). */
  function cli(args: string[]): {status: number; stdout: string; stderr: string} {
    const childEnv: NodeJS.ProcessEnv = {...process.env}
    for (const [key, value] of Object.entries(env)) {
      if (value === undefined) delete childEnv[key]
      else childEnv[key] = value
    }

    const result = spawnSync(process.execPath, [path.join(projectRoot, 'bin', 'dev.js'), ...args], {
      cwd: repo,
      env: childEnv,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    return {status: result.status ?? 1, stdout: result.stdout, stderr: result.stderr}
  }

  before(async () => {
    sweep(PREFIX)
    await prepareStackTests()
    repo = makeRepo({
      'yard.toml': `[project]\nprefix = "${PREFIX}"\n\n[ports]\nWEB_PORT = ${WEB_BASE}\n\n[box]\nimage = "${BUSYBOX_IMAGE}"\n`,
      'compose.yaml': compose(),
    })
    git(repo, 'worktree', 'add', '-q', '-b', 'wt/feat', path.join(`${repo}-worktrees`, 'feat'))
    env = podmanEnv()
  })

  after(() => {
    sweep(PREFIX)
    cleanupTemp()
  })

  it('up, box up and logs refuse a worktree that does not exist (exit 2, naming it and yard worktree list), creating nothing', async () => {
    for (const args of [['up'], ['box', 'up'], ['logs']]) {
      const refused = await run([...args, '--worktree', 'nowhere'])
      expect(refused.exitCode, `${args.join(' ')}: ${refused.stdout}${refused.stderr}`).to.equal(2)
      expect(refused.stderr).to.include('there is no worktree nowhere')
      expect(refused.stderr).to.include('yard worktree list')
      expect(refused.stdout).not.to.include('box-only')
    }

    expect(projectObjects(`${PREFIX}-nowhere`)).to.deep.equal({containers: [], volumes: [], networks: []})
    expect(podmanTry('container', 'exists', `${PREFIX}-nowhere-box`).status).to.equal(1)
  })

  it('down, nuke, ps and box down still work on a worktree without a directory (exit 0, with a note)', async () => {
    for (const args of [['down'], ['nuke'], ['ps'], ['box', 'down']]) {
      const done = await run([...args, '--worktree', 'nowhere'])
      expect(done.exitCode, `${args.join(' ')}: ${done.stderr}`).to.equal(0)
      expect(done.stderr).to.include('note: there is no worktree nowhere')
    }
  })

  it("logs: --json and an unknown service are exit 2 before the engine is asked; a stack that does not run is a note; only the services' lines reach stdout", async () => {
    const json = await run(['logs', '--json'])
    expect(json.exitCode).to.equal(2)
    expect(json.stderr).to.contain('Nonexistent flag: --json')
    const unknown = cli(['logs', 'nosuch', '--worktree', 'feat'])
    expect(unknown.status, unknown.stderr).to.equal(2)
    expect(unknown.stderr).to.include(`${PREFIX}-feat has no service nosuch`)
    expect(unknown.stderr).to.include('name one of web, store')
    expect(unknown.stderr).not.to.include('Traceback')
    const idle = cli(['logs', '--worktree', 'feat'])
    expect(idle.status, idle.stderr).to.equal(0)
    expect(idle.stdout).to.equal('')
    expect(idle.stderr).to.include(
      `note: nothing of ${PREFIX}-feat runs, so there are no logs; \`yard up feat\` starts it`,
    )

    expect((await run(['up', '--worktree', 'feat'])).exitCode).to.equal(0)
    const logs = cli(['logs', 'web', '--worktree', 'feat'])
    expect(logs.status, logs.stderr).to.equal(0)
    expect(logs.stdout.trim()).to.equal('web | serving hello feat')
    expect((await run(['down', '--worktree', 'feat'])).exitCode).to.equal(0)
  })

  it('up with a state directory that cannot be written fails before creating anything (exit 1, path, why and fix)', async () => {
    // A state directory under a file is refused before any command runs (exit 2, state.ts); here
    // the state directory is fine but its stacks folder is a file, so the rendered file cannot be written.
    const state = podmanStateDir()
    writeFileSync(path.join(state, 'stacks'), '')
    const failed = await run(['up'], {YARD_STATE_DIR: state})
    expect(failed.exitCode, failed.stderr).to.equal(1)
    expect(failed.stderr).to.include(`cannot write ${path.join(state, 'stacks', PREFIX, 'compose.yaml')}`)
    expect(failed.stderr).to.match(/why: .*state directory/)
    expect(failed.stderr).to.match(/fix: .*YARD_STATE_DIR/)
    expect(failed.stderr).not.to.include('Code: ENOTDIR')
    expect(projectObjects(PREFIX)).to.deep.equal({containers: [], volumes: [], networks: []})
  })
})
