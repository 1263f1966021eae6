/**
 * `yard logs` and what a service that stops says (DESIGN.md §4.2), on real podman and
 * podman-compose: lines led by their service, both streams on stdout, --tail / --since / -t,
 * and the exit code and last lines of a container that exited, in `up`'s failure and `ps`.
 */
import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import {existsSync} from 'node:fs'
import path from 'node:path'

import type {CheckoutContainers} from '../../../src/core/stack/stack-all.js'
import type {StackContainer} from '../../../src/sdk/stack.js'

import {BUSYBOX_IMAGE, podmanEnv, prepareStackTests, sweep} from '../../support/podman.js'
import {addWorktree, cleanupTemp, makeRepo} from '../../support/repo.js'
import {projectRoot, yard} from '../../support/yard.js'

const PREFIX = 'yardtest-sl'

/** A service that writes four lines to stdout and four to stderr, then stays up (or exits `exit`). */
function talker(name: string, exit?: number): string {
  const lines = [1, 2, 3, 4].map((index) => `echo ${name}-out-${index}; echo ${name}-err-${index} >&2`).join('; ')
  const end = exit === undefined ? "trap 'exit 0' TERM; sleep 100000 & wait" : `exit ${exit}`
  return [`  ${name}:`, `    image: ${BUSYBOX_IMAGE}`, `    command: ["sh", "-c", "${lines}; ${end}"]`].join('\n')
}

describe('compose-stack: logs with service prefixes, and services that stopped (DESIGN.md §4.2)', function () {
  this.timeout(180_000)
  let repo: string
  let env: Record<string, string | undefined>

  /** `yard …` as a child process: logs write to the process's own stdout. */
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
      'yard.toml': `[project]\nprefix = "${PREFIX}"\n`,
      'compose.yaml': ['services:', talker('web'), talker('worker'), ''].join('\n'),
    })
    env = podmanEnv()
  })

  after(() => {
    sweep(PREFIX)
    cleanupTemp()
  })

  it('logs --tail 2 prints exactly two lines per service on stdout, each led by its service; --since and -t', async () => {
    const up = await yard(['up'], {cwd: repo, env})
    expect(up.exitCode, up.stderr).to.equal(0)
    // The services write their eight lines right after starting.
    for (let tries = 0; tries < 50 && cli(['logs']).stdout.trim().split('\n').length < 16; tries++)
      await new Promise((resolve) => setTimeout(resolve, 100))
    const all = cli(['logs'])
    expect(all.status, all.stderr).to.equal(0)
    // stderr lines too, on stdout; labels padded to one width, as compose does.
    expect(all.stdout.trim().split('\n').sort()).to.deep.equal(
      [1, 2, 3, 4]
        .flatMap((index) => [
          `web    | web-err-${index}`,
          `web    | web-out-${index}`,
          `worker | worker-err-${index}`,
          `worker | worker-out-${index}`,
        ])
        .sort(),
    )
    expect(all.stderr).to.equal('')

    const tail = cli(['logs', '--tail', '2'])
    expect(tail.status, tail.stderr).to.equal(0)
    const lines = tail.stdout.trim().split('\n')
    expect(lines.filter((line) => line.startsWith('web    | '))).to.have.length(2)
    expect(lines.filter((line) => line.startsWith('worker | '))).to.have.length(2)
    expect(lines).to.have.length(4)
    // The last two of what each wrote (which of its two streams came last is the container's race).
    for (const line of lines) expect(line).to.match(/^(web {4}\| web|worker \| worker)-(out|err)-[34]$/)

    const one = cli(['logs', 'worker', '-n', '1', '-t'])
    expect(one.status, one.stderr).to.equal(0)
    expect(one.stdout).to.match(/^worker \| \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\S* worker-(out|err)-[34]\n$/)
    const later = cli(['logs', '--since', '2099-01-01T00:00:00'])
    expect(later.status, later.stderr).to.equal(0)
    expect(later.stdout).to.equal('')

    const json = await yard(['logs', '--json'], {cwd: repo, env})
    expect(json.exitCode).to.equal(2)
    expect(json.stderr).to.contain('Nonexistent flag: --json')
    const help = await yard(['logs', '--help'], {cwd: repo, env})
    expect(help.stdout).not.to.contain('--json')
    expect((await yard(['down'], {cwd: repo, env})).exitCode).to.equal(0)
  })

  it("ps --all lists every checkout's stack and box; worktree list shows each stack's state", async () => {
    addWorktree(repo, 'feat')
    expect((await yard(['up'], {cwd: repo, env})).exitCode).to.equal(0)
    const all = await yard(['ps', '--all', '--json'], {cwd: repo, env})
    expect(all.exitCode, all.stderr).to.equal(0)
    const rows = all.json as CheckoutContainers[]
    expect(
      rows.map((row) => [
        row.worktree,
        row.project,
        row.stack.map((container) => `${container.service} ${container.state}`),
        row.box,
      ]),
    ).to.deep.equal([
      ['main', PREFIX, ['web running', 'worker running'], []],
      ['feat', `${PREFIX}-feat`, [], []],
    ])
    const text = await yard(['ps', '--all'], {cwd: repo, env})
    expect(text.stdout).to.match(new RegExp(`^main \\(${PREFIX}\\)\n  SERVICE +CONTAINER +STATE +PORTS\n  web `, 'm'))
    expect(text.stdout).to.match(new RegExp(`^feat \\(${PREFIX}-feat\\)\n  nothing runs$`, 'm'))
    const list = (await yard(['worktree', 'list'], {cwd: repo, env})).stdout.split('\n')
    expect(list[0]).to.match(/ STACK /)
    expect(list.find((line) => line.startsWith('main '))).to.match(/ running 2\/2 /)
    expect(list.find((line) => line.startsWith('feat '))).to.match(/ - +ok /)
    expect((await yard(['ps', 'feat', '--all'], {cwd: repo, env})).exitCode).to.equal(2)
    expect((await yard(['down'], {cwd: repo, env})).exitCode).to.equal(0)
  })

  it("a service that exits says its exit code and last lines in up's failure, ps shows the code; nuke takes yard's state", async () => {
    const broken = makeRepo(
      {
        'yard.toml': `[project]\nprefix = "${PREFIX}-b"\n`,
        'compose.yaml': ['services:', talker('web'), talker('job', 3), ''].join('\n'),
      },
      'broken',
    )
    const up = await yard(['up'], {cwd: broken, env})
    expect(up.exitCode).to.equal(1)
    expect(up.stderr).to.contain(`${PREFIX}-b: job did not start`)
    expect(up.stderr).to.contain('job exited with code 3; its last lines:')
    expect(up.stderr).to.contain('job | job-err-4')
    expect(up.stderr).not.to.contain('exited 0')
    const ps = await yard(['ps', '--json'], {cwd: broken, env})
    const job = (ps.json as StackContainer[]).find((row) => row.service === 'job')
    expect(job).to.deep.include({state: 'exited', exitCode: 3})
    expect((ps.json as StackContainer[]).find((row) => row.service === 'web')).not.to.have.property('exitCode')
    const text = await yard(['ps'], {cwd: broken, env})
    expect(text.stdout).to.match(/^job +\S+ +exited \(3\)/m)
    expect((await yard(['down'], {cwd: broken, env})).exitCode).to.equal(0)
    // nuke takes yard's own state of the stack too: the rendered compose file's directory.
    const rendered = path.join(env.YARD_STATE_DIR!, 'stacks', `${PREFIX}-b`)
    expect(existsSync(path.join(rendered, 'compose.yaml'))).to.equal(true)
    const dry = await yard(['nuke', '--dry-run'], {cwd: broken, env})
    expect(dry.stdout).to.include(`would remove yard state ${rendered}`)
    expect(existsSync(rendered)).to.equal(true)
    const nuke = await yard(['nuke'], {cwd: broken, env})
    expect(nuke.exitCode, nuke.stderr).to.equal(0)
    expect(nuke.stdout).to.include(`removed yard state ${rendered}`)
    expect(existsSync(rendered)).to.equal(false)
  })
})
