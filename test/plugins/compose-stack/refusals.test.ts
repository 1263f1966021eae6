/**
 * What cannot be isolated (DESIGN.md §4.2): `network_mode: host`, a fixed `ipv4_address` and an
 * `external: true` volume with a fixed name make `yard up` in a worktree exit 3 before the
 * provider runs, naming each service, the reason and the way out, and nothing is created. Every
 * way out the report prints, once followed, passes `yard ports`, the provider's own parse and a
 * real `yard up`.
 */
import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import {once} from 'node:events'
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import {stringify} from 'yaml'

import {
  BUSYBOX_IMAGE,
  ensureDefaultImage,
  podman,
  podmanEnv,
  podmanTry,
  prepareStackTests,
  sweep,
} from '../../support/podman.js'
import {cleanupTemp, git, makeRepo, tempDir, writeFile} from '../../support/repo.js'
import {yard} from '../../support/yard.js'

const PREFIX = 'yardtest-z4'
const sleeper = `    image: ${BUSYBOX_IMAGE}\n    command: ["sh", "-c", "trap 'exit 0' TERM; sleep 100000 & wait"]\n`
const RISKY = `services:
  agent:
${sleeper}    network_mode: host
  dns:
${sleeper}    networks:
      back:
        ipv4_address: 172.31.250.53
  db:
${sleeper}    volumes: ["pg:/data"]
networks:
  back:
    ipam:
      config:
        - subnet: 172.31.250.0/24
volumes:
  pg:
    external: true
    name: ${PREFIX}-company-pg
`

const engineListing = () =>
  [
    podman('ps', '--all', '--format', '{{.Names}}'),
    podman('volume', 'ls', '--format', '{{.Name}}'),
    podman('network', 'ls', '--format', '{{.Name}}'),
  ].join('\n')

describe('compose-stack: what cannot be isolated is refused before anything starts (DESIGN.md §4.2)', function () {
  this.timeout(120_000)
  let repo: string
  let env: Record<string, string | undefined>
  let state: string
  const feat = () => path.join(`${repo}-worktrees`, 'feat')
  const run = async (args: string[]) => yard(args, {cwd: repo, env})

  before(async () => {
    await prepareStackTests()
    sweep(PREFIX)
    repo = makeRepo({'yard.toml': `[project]\nprefix = "${PREFIX}"\n`, 'compose.yaml': RISKY})
    git(repo, 'worktree', 'add', '-q', '-b', 'wt/feat', feat())
    env = podmanEnv()
    state = env.YARD_STATE_DIR!
  })

  after(() => {
    sweep(PREFIX)
    cleanupTemp()
  })

  it('exits 3 naming service, reason and way out; the provider never runs and nothing is created', async () => {
    const before = engineListing()
    const up = await run(['up', '--worktree', 'feat'])
    expect(up.exitCode, up.stderr).to.equal(3)
    expect(up.stderr).to.include(`cannot isolate ${PREFIX}-feat`)
    expect(up.stderr).to.match(/agent: network_mode: host shares the host's network/)
    expect(up.stderr).to.include(
      'agent: remove network_mode: host (publish its ports instead), or allow it: [stack] allow-shared = ["agent"]',
    )
    expect(up.stderr).to.match(/dns: ipv4_address 172\.31\.250\.53 on network back/)
    expect(up.stderr).to.match(/volumes\.pg: external volume yardtest-z4-company-pg has a fixed name/)
    expect(up.stderr).to.include('[stack] external = "per-checkout"')
    // One fix line per refusal, never a literal \n.
    expect(up.stderr).not.to.include(String.raw`\n`)
    expect(up.stderr).to.match(/\n {7}agent: remove network_mode: host/)
    expect(
      existsSync(path.join(state, 'stacks', `${PREFIX}-feat`, 'compose.yaml')),
      'no rendered file: the provider was not run',
    ).to.equal(false)
    expect(engineListing()).to.equal(before)
    const doctor = await yard(['doctor', '--json'], {cwd: feat(), env})
    const check = (
      doctor.json as {checks: Array<{name: string; level: string; detail: string; fix?: string}>}
    ).checks.find((item) => item.name === 'stack isolation')
    expect(check?.level, doctor.stdout).to.equal('fail')
    expect(check?.detail).to.include('feat: yard up refuses volumes.pg').and.to.include('agent (network_mode: host')
    expect(check?.fix).to.include('[stack] allow-shared = ["agent"]')
    const mainPlan = await run(['up', '--dry-run', '--json'])
    expect((mainPlan.json as {report: unknown[]}).report, 'main runs its literal values').to.deep.equal([])
  })

  it("every way out, once followed, passes yard ports, the provider's parse and yard up", async () => {
    const dry = await run(['up', '--dry-run', '--json', '--worktree', 'feat'])
    const actions = (dry.json as {report: Array<{kind: string; action: string}>}).report
      .filter((entry) => entry.kind === 'refused')
      .map((entry) => entry.action)
    const settings = actions.flatMap((action) =>
      [...action.matchAll(/\[stack\] ([a-z-]+ = (?:"[^"]*"|\[[^\]]*\]))/g)].map((match) => match[1]),
    )
    expect(settings).to.deep.equal(['external = "per-checkout"', 'allow-shared = ["agent"]'])
    writeFile(repo, 'yard.toml', `[project]\nprefix = "${PREFIX}"\n\n[stack]\n${settings.join('\n')}\n`)
    // The other ways out are edits: "remove ipv4_address", "remove ipam.config from the network".
    expect(actions.join('\n')).to.include('remove ipv4_address').and.to.include('remove ipam.config')
    writeFile(
      feat(),
      'compose.yaml',
      RISKY.replace(/ {4}networks:\n {6}back:\n {8}ipv4_address: .*\n/, '    networks: [back]\n').replace(
        / {4}ipam:\n {6}config:\n {8}- subnet: .*\n/,
        '    driver: bridge\n',
      ),
    )
    expect((await run(['ports', '--worktree', 'feat'])).exitCode).to.equal(0)
    expect((await run(['config'])).exitCode).to.equal(0)
    const fixed = await run(['up', '--dry-run', '--json', '--worktree', 'feat'])
    const plan = fixed.json as {
      compose: Record<string, unknown>
      report: Array<{kind: string; service: string; action: string}>
    }
    expect(plan.report.filter((entry) => entry.kind === 'refused')).to.deep.equal([])
    expect(plan.report.find((entry) => entry.service === 'volumes.pg')?.action).to.include(
      `yard creates ${PREFIX}-feat_pg for this worktree, empty`,
    )
    const rendered = path.join(tempDir('yardtest-z4-rendered'), 'compose.yaml')
    writeFileSync(rendered, stringify(plan.compose))
    // podman-compose 1.0.3 has no `config`; `ps` parses the whole file and creates nothing.
    const provider = spawnSync('podman-compose', ['-f', rendered, '-p', `${PREFIX}-feat`, 'ps'], {encoding: 'utf8'})
    expect(provider.status, provider.stderr + provider.stdout).to.equal(0)
    expect(plan.report.find((entry) => entry.service === 'agent')?.action).to.include(
      "shares the host's network with every checkout",
    )
    // podman-compose 1.0.3 cannot start a network_mode: host service at all (it adds --net with
    // the default network, which podman refuses), so the real up runs the rest of the file.
    writeFile(
      feat(),
      'compose.yaml',
      readFileSync(path.join(feat(), 'compose.yaml'), 'utf8').replace(/ {2}agent:\n( {4}.*\n)+/, ''),
    )
    const up = await run(['up', '--worktree', 'feat'])
    expect(up.exitCode, up.stderr).to.equal(0)
    expect(
      podman('volume', 'inspect', '--format', '{{index .Labels "yard.dev/project"}}', `${PREFIX}-feat_pg`),
    ).to.equal(`${PREFIX}-feat`)
    // The box joins every network of the project, not only <project>_default (dns is only on back).
    await ensureDefaultImage()
    const box = await run(['box', 'up', '--worktree', 'feat'])
    expect(box.exitCode, box.stderr).to.equal(0)
    expect(
      podman(
        'container',
        'inspect',
        '--format',
        '{{range $name, $_ := .NetworkSettings.Networks}}{{$name}} {{end}}',
        `${PREFIX}-feat-box`,
      )
        .trim()
        .split(' ')
        .sort(),
    ).to.deep.equal([`${PREFIX}-feat_back`, `${PREFIX}-feat_default`])
    const nuke = await run(['nuke', '--worktree', 'feat'])
    expect(nuke.exitCode, nuke.stderr).to.equal(0)
    expect(podmanTry('volume', 'exists', `${PREFIX}-feat_pg`).status, 'nuke removes the per-checkout volume').to.equal(
      1,
    )
  })

  it('an up that fails part-way names the services it left running, and down removes them', async () => {
    const part = path.join(`${repo}-worktrees`, 'part')
    git(repo, 'worktree', 'add', '-q', '-b', 'wt/part', part)
    writeFile(
      part,
      'compose.yaml',
      `services:\n  good:\n${sleeper}  bad:\n    image: localhost/${PREFIX}-missing:1\n    depends_on: [good]\n`,
    )
    const up = await run(['up', '--worktree', 'part'])
    expect(up.exitCode, up.stderr).to.equal(1)
    expect(up.stderr).to.include(`${PREFIX}-part: bad did not start`)
    expect(up.stderr).to.include('left running: good')
    expect(up.stderr).to.include('`yard down --worktree part` removes what it left')
    const down = await run(['down', '--worktree', 'part'])
    expect(down.exitCode, down.stderr).to.equal(0)
    expect(
      podman('ps', '--all', '--filter', `label=com.docker.compose.project=${PREFIX}-part`, '--format', '{{.Names}}'),
    ).to.equal('')
  })

  it('yard up --json gives the report, the services and the ports', async () => {
    const up = await run(['up', '--json', '--worktree', 'feat'])
    expect(up.exitCode, up.stderr).to.equal(0)
    const json = up.json as Record<string, unknown> & {services: Array<{service: string}>; report: unknown[]}
    expect(Object.keys(json)).to.deep.equal([
      'project',
      'boxOnly',
      'files',
      'report',
      'services',
      'ports',
      'implicitPorts',
      'stoppedShared',
    ])
    expect(json.services.map((service) => service.service).sort()).to.deep.equal(['db', 'dns'])
    expect(json.report.length).to.be.greaterThan(0)
    expect((await run(['nuke', '--worktree', 'feat'])).exitCode).to.equal(0)
  })

  it("up probes the compose file's own host ports too: a busy one is exit 3 naming its source", async () => {
    const busy = path.join(`${repo}-worktrees`, 'busy')
    git(repo, 'worktree', 'add', '-q', '-b', 'wt/busy', busy)
    writeFile(busy, 'compose.yaml', `services:\n  web:\n${sleeper}    ports: ["8765:80"]\n`)
    const dry = await run(['up', '--dry-run', '--json', '--worktree', 'busy'])
    const published = (dry.json as {compose: {services: {web: {ports: string[]}}}}).compose.services.web.ports[0]
    const port = Number(published.split(':', 1)[0])
    const server = net.createServer().listen(port, '0.0.0.0')
    await once(server, 'listening')
    try {
      const up = await run(['up', '--worktree', 'busy'])
      expect(up.exitCode, up.stderr).to.equal(3)
      expect(up.stderr).to.include(`port ${port} (compose:web:8765) is in use by another process`)
      expect(
        podman('ps', '--all', '--filter', `label=com.docker.compose.project=${PREFIX}-busy`, '--format', '{{.Names}}'),
      ).to.equal('')
    } finally {
      server.close()
    }
  })
})
