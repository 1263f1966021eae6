/**
 * `up` that fails part-way (DESIGN.md §4.2, docs/stacks.md "Ownership"), on real podman and
 * podman-compose: it names the services it left running and stopped and points at `yard down`;
 * a later `up` says it starts the stopped ones again and fails again while they do not run; once
 * the compose file is fixed, `up` recreates the stopped container from it (not the stale one);
 * `down` removes everything; `up --json` gives the report, the services and the published ports.
 */
import {expect} from 'chai'
import {spawn} from 'node:child_process'
import {writeFileSync} from 'node:fs'
import path from 'node:path'

import type {ImplicitPort, StackContainer, StackReportEntry} from '../../../src/sdk/stack.js'

import {
  BUSYBOX_IMAGE,
  fetchText,
  podmanEnv,
  prepareStackTests,
  projectObjects,
  sweep,
  webService,
} from '../../support/podman.js'
import {cleanupTemp, makeRepo} from '../../support/repo.js'
import {projectRoot, yard} from '../../support/yard.js'

const PREFIX = 'yardtest-s7'
const WEB_PORT = 38_640

/** web serves on a literal host port; `worker` runs `command` (one that exits at once does not start). */
function compose(command: string): string {
  return [
    'services:',
    '  web:',
    webService('part-way', `${WEB_PORT}:8080`),
    '  worker:',
    `    image: ${BUSYBOX_IMAGE}`,
    `    command: ["sh", "-c", ${JSON.stringify(command)}]`,
    '',
  ].join('\n')
}

describe('compose-stack: up that fails part-way (DESIGN.md §4.2)', function () {
  this.timeout(120_000)
  let repo: string
  let env: Record<string, string | undefined>
  const run = async (args: string[]) => yard(args, {cwd: repo, env})

  before(async () => {
    sweep(PREFIX)
    await prepareStackTests()
    repo = makeRepo({
      'yard.toml': `[project]\nprefix = "${PREFIX}"\n`,
      'compose.yaml': compose('echo cannot start; exit 3'),
    })
    env = podmanEnv()
  })

  after(() => {
    sweep(PREFIX)
    cleanupTemp()
  })

  it('names what it left running and stopped, and points at yard down', async () => {
    const first = await run(['up'])
    expect(first.exitCode, first.stderr).to.equal(1)
    expect(first.stderr).to.include(`${PREFIX}: worker did not start`)
    expect(first.stderr).to.include('left running: web')
    expect(first.stderr).to.include('left stopped: worker (exited)')
    expect(first.stderr).to.include('`yard down` removes what it left')
    expect(await fetchText(WEB_PORT)).to.equal('part-way')
  })

  it('a second up says it starts the stopped container again, and fails again while it does not run', async () => {
    const second = await run(['up'])
    expect(second.exitCode, second.stderr).to.equal(1)
    expect(second.stderr).to.include('note: starting worker (exited) of yardtest-s7 again')
    expect(second.stderr).to.include(`${PREFIX}: worker did not start`)
    expect(second.stderr).to.include('left running: web')
  })

  it('after the file is fixed, up makes the stopped container afresh from it; --json has the report, services and ports', async () => {
    writeFileSync(path.join(repo, 'compose.yaml'), compose("trap 'exit 0' TERM; sleep 100000 & wait"))
    const fixed = await run(['up', '--json'])
    expect(fixed.exitCode, fixed.stderr).to.equal(0)
    expect(fixed.stderr).to.include(
      'note: recreating worker (exited) of yardtest-s7: made from another compose file than the current one',
    )
    const json = fixed.json as {report: StackReportEntry[]; services: StackContainer[]; implicitPorts: ImplicitPort[]}
    expect(json.services.map((row) => [row.service, row.state])).to.deep.equal([
      ['web', 'running'],
      ['worker', 'running'],
    ])
    expect(json.services[0].ports).to.deep.equal([{host: WEB_PORT, container: 8080}])
    expect(json.implicitPorts.map((port) => [port.source, port.host])).to.deep.equal([
      [`compose:web:${WEB_PORT}`, WEB_PORT],
    ])
    expect(json.report).to.deep.equal([])
    const again = await run(['up'])
    expect(again.exitCode, again.stderr).to.equal(0)
    expect(again.stderr).not.to.include('note:')
  })

  it('a running container made from an edited definition is made afresh, as docker compose does', async () => {
    const worker = "trap 'exit 0' TERM; sleep 100000 & wait"
    const edited = [
      'services:',
      '  web:',
      webService('edited', `${WEB_PORT}:8080`),
      '  worker:',
      `    image: ${BUSYBOX_IMAGE}`,
      `    command: ["sh", "-c", ${JSON.stringify(worker)}]`,
      '',
    ].join('\n')
    writeFileSync(path.join(repo, 'compose.yaml'), edited)
    const up = await run(['up'])
    expect(up.exitCode, up.stderr).to.equal(0)
    expect(up.stderr).to.include(
      'note: recreating web of yardtest-s7: made from another compose file than the current one',
    )
    expect(up.stderr).not.to.include('worker')
    expect(await fetchText(WEB_PORT)).to.equal('edited')
    const again = await run(['up'])
    expect(again.exitCode, again.stderr).to.equal(0)
    expect(again.stderr).not.to.include('note:')
  })

  it('two ups of one project at once take turns: both succeed', async () => {
    expect((await run(['down'])).exitCode).to.equal(0)
    const childEnv: NodeJS.ProcessEnv = {...process.env}
    for (const [key, value] of Object.entries(env)) {
      if (value === undefined) delete childEnv[key]
      else childEnv[key] = value
    }

    const up = async () =>
      new Promise<{code: number | null; stderr: string}>((resolve) => {
        const child = spawn(process.execPath, [path.join(projectRoot, 'bin', 'dev.js'), 'up'], {
          cwd: repo,
          env: childEnv,
          stdio: ['ignore', 'ignore', 'pipe'],
        })
        let stderr = ''
        child.stderr.on('data', (chunk) => (stderr += String(chunk)))
        child.on('exit', (code) => resolve({code, stderr}))
      })
    const [first, second] = await Promise.all([up(), up()])
    expect(first.code, first.stderr).to.equal(0)
    expect(second.code, second.stderr).to.equal(0)
    expect(await fetchText(WEB_PORT)).to.equal('edited')
  })

  it('down removes everything it left', async () => {
    const down = await run(['down'])
    expect(down.exitCode, down.stderr).to.equal(0)
    expect(projectObjects(PREFIX).containers).to.deep.equal([])
    expect(projectObjects(PREFIX).networks).to.deep.equal([])
  })
})
