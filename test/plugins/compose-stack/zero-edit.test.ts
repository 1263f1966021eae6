/**
 * Zero-edit stacks on real podman and podman-compose 1.0.3 (DESIGN.md §4.2 "yard renders the
 * stack"): one compose file with literal ports ("80:80", "5432:5432", 9229/9230 close together,
 * a /udp port, a 127.0.0.1: port, a port set in .env), a container_name, an anonymous volume and
 * an image: + build: service runs in main and three worktrees at once without an edit; each
 * answers on the ports `yard ports` lists; a second up is a no-op; nuke of one leaves the
 * others; nuke of all leaves nothing. Then `yard up --dry-run --json` in main and a worktree.
 */
import {expect} from 'chai'
import path from 'node:path'

import type {ImplicitPort} from '../../../src/sdk/stack.js'

import {BUSYBOX_IMAGE, fetchText, podman, podmanEnv, podmanTry, prepareStackTests, sweep} from '../../support/podman.js'
import {cleanupTemp, git, makeRepo, writeFile} from '../../support/repo.js'
import {yard} from '../../support/yard.js'

const PREFIX = 'yardtest-z'
const APP_IMAGE = 'localhost/yardtest-z-app:dev'
/** Pinned offsets, so the ports the rule gives are known: worktree k publishes L[i] at 20000 + (k − 1)·100 + i. */
const OFFSETS = {feat: 3, fix: 41, docs: 89} as const

/** A service serving `text` over HTTP on each container port given, stopping at once on SIGTERM. */
function serving(text: string, ports: number[]): string {
  const servers = ports.map((port) => `httpd -p ${port} -h /www;`).join(' ')
  return String.raw`["sh", "-c", "trap 'exit 0' TERM; mkdir -p /www; echo \"${text}\" > /www/index.html; ${servers} sleep 100000 & wait"]`
}

const COMPOSE = `services:
  web:
    image: ${BUSYBOX_IMAGE}
    container_name: yardtest-z-web
    command: ${serving('web ${WORKTREE:-main}', [80])}
    ports: ["80:80"]
    volumes: ["/app/node_modules"]
  db:
    image: ${BUSYBOX_IMAGE}
    command: ${serving('db ${WORKTREE:-main}', [5432])}
    ports: ["5432:5432"]
  debug:
    image: ${BUSYBOX_IMAGE}
    command: ${serving('debug ${WORKTREE:-main}', [9229, 9230, 9100])}
    ports: ["9229:9229", "9230:9230", "127.0.0.1:9100:9100", "51820:51820/udp"]
  app:
    image: ${APP_IMAGE}
    build: ./app
    command: ["sh", "-c", "trap 'exit 0' TERM; mkdir -p /www; echo \\"app $$(cat /page.txt)\\" > /www/index.html; httpd -p 8080 -h /www; sleep 100000 & wait"]
    ports: ["\${APP_PORT}:8080"]
`

describe('zero-edit stacks: main and three worktrees at once (DESIGN.md §4.2)', function () {
  this.timeout(240_000)
  let repo: string
  let env: Record<string, string | undefined>
  const names = ['main', ...Object.keys(OFFSETS)] as const
  const flag = (name: string) => (name === 'main' ? [] : ['--worktree', name])
  const run = async (args: string[]) => yard(args, {cwd: repo, env})
  const project = (name: string) => (name === 'main' ? PREFIX : `${PREFIX}-${name}`)
  const objects = (name: string) => ({
    containers: podman(
      'ps',
      '--all',
      '--filter',
      `label=com.docker.compose.project=${project(name)}`,
      '--format',
      '{{.Names}}',
    )
      .split('\n')
      .filter(Boolean)
      .sort(),
    volumes: podman(
      'volume',
      'ls',
      '--filter',
      `label=com.docker.compose.project=${project(name)}`,
      '--format',
      '{{.Name}}',
    )
      .split('\n')
      .filter(Boolean)
      .sort(),
  })

  before(async () => {
    await prepareStackTests()
    sweep(PREFIX)
    repo = makeRepo({
      'yard.toml': `[project]\nprefix = "${PREFIX}"\n`,
      'yard.local.toml': `[worktree-offsets]\n${Object.entries(OFFSETS)
        .map(([name, offset]) => `${name} = ${offset}`)
        .join('\n')}\n`,
      'compose.yaml': COMPOSE,
      '.env': 'APP_PORT=8088\n',
      'app/Containerfile': `FROM ${BUSYBOX_IMAGE}\nCOPY page.txt /page.txt\n`,
      'app/page.txt': 'built in main\n',
    })
    for (const name of Object.keys(OFFSETS))
      git(repo, 'worktree', 'add', '-q', '-b', `wt/${name}`, path.join(`${repo}-worktrees`, name))
    // fix's branch builds a different page: its own build, not main's image.
    writeFile(path.join(`${repo}-worktrees`, 'fix', 'app'), 'page.txt', 'built in fix\n')
    env = podmanEnv()
  })

  after(() => {
    sweep(PREFIX)
    for (const image of podmanTry('images', '--format', '{{.Repository}}:{{.Tag}}').stdout.split('\n'))
      if (image.startsWith('localhost/yardtest-z-app:')) podmanTry('rmi', '--force', image)
    cleanupTemp()
  })

  it('dry runs in main and a worktree: the documented shape, no shared host port or container name, nothing created', async () => {
    const before =
      podman('ps', '--all', '--format', '{{.Names}}') +
      podman('volume', 'ls', '--format', '{{.Name}}') +
      podman('network', 'ls', '--format', '{{.Name}}')
    interface DryRun {
      project: string
      files: string[]
      compose: {services: Record<string, {ports?: string[]; container_name?: string}>}
      report: Array<Record<string, unknown>>
    }
    const plans: DryRun[] = []
    for (const name of ['main', 'feat']) {
      const dry = await run(['up', '--dry-run', '--json', ...flag(name)])
      expect(dry.exitCode, dry.stderr).to.equal(0)
      const json = dry.json as DryRun
      expect(Object.keys(json)).to.deep.equal(['project', 'files', 'compose', 'report'])
      expect(json.project).to.equal(project(name))
      expect(json.files).to.deep.equal([
        path.join(name === 'main' ? repo : path.join(`${repo}-worktrees`, name), 'compose.yaml'),
      ])
      for (const entry of json.report) expect(Object.keys(entry)).to.deep.equal(['kind', 'service', 'detail', 'action'])
      plans.push(json)
    }

    const hostPorts = (plan: DryRun) =>
      Object.values(plan.compose.services).flatMap((service) =>
        (service.ports ?? []).map((port) => port.replace(/\/.*$/, '').split(':').at(-2)),
      )
    expect(hostPorts(plans[0])).to.have.members(['80', '5432', '9229', '9230', '9100', '51820', '8088'])
    expect(hostPorts(plans[1]).filter((port) => hostPorts(plans[0]).includes(port))).to.deep.equal([])
    expect(plans[1].compose.services.web.container_name).to.equal('yardtest-z-feat-yardtest-z-web')
    expect(plans[1].report.filter((entry) => entry.kind === 'refused')).to.deep.equal([])
    const after =
      podman('ps', '--all', '--format', '{{.Names}}') +
      podman('volume', 'ls', '--format', '{{.Name}}') +
      podman('network', 'ls', '--format', '{{.Name}}')
    expect(after).to.equal(before)
  })

  it('runs main and three worktrees at once; each answers on the ports yard ports lists; a second up is a no-op', async () => {
    for (const name of names) {
      const up = await run(['up', ...flag(name)])
      expect(up.exitCode, `${name}: ${up.stderr}`).to.equal(0)
    }

    for (const name of names) {
      const ports = await run(['ports', '--json', ...flag(name)])
      const listed = (ports.json as {implicitPorts: ImplicitPort[]}).implicitPorts
      const host = (source: string) => listed.find((port) => port.source === source)!.host
      const who = name === 'main' ? 'main' : name
      expect(await fetchText(host('compose:web:80'))).to.equal(`web ${who}`)
      expect(await fetchText(host('compose:db:5432'))).to.equal(`db ${who}`)
      expect(await fetchText(host('compose:debug:9229'))).to.equal(`debug ${who}`)
      expect(await fetchText(host('compose:debug:9230'))).to.equal(`debug ${who}`)
      expect(await fetchText(host('compose:debug:9100'))).to.equal(`debug ${who}`)
      expect(await fetchText(host('compose:app:8088'))).to.equal(
        name === 'fix' ? 'app built in fix' : 'app built in main',
      )
      const udp = podman('port', name === 'main' ? `${PREFIX}_debug_1` : `${project(name)}_debug_1`, '51820/udp')
      expect(udp).to.match(new RegExp(`:${host('compose:debug:51820')}$`))
      if (name !== 'main') {
        const offset = OFFSETS[name as keyof typeof OFFSETS]
        // L = 80 5432 8088 9100 9229 9230 51820: worktree k publishes L[i] at 20000 + (k − 1)·100 + i.
        expect(host('compose:web:80')).to.equal(20_000 + (offset - 1) * 100)
        expect(host('compose:debug:51820')).to.equal(20_000 + (offset - 1) * 100 + 6)
      }
    }

    const started = podman('ps', '--all', '--filter', `name=${PREFIX}`, '--format', '{{.ID}} {{.Status}}')
    for (const name of names) {
      const again = await run(['up', ...flag(name)])
      expect(again.exitCode, again.stderr).to.equal(0)
    }

    expect(
      podman('ps', '--all', '--filter', `name=${PREFIX}`, '--format', '{{.ID}} {{.Status}}').replaceAll(
        /Up [^\n]*/g,
        'Up',
      ),
    ).to.equal(started.replaceAll(/Up [^\n]*/g, 'Up'))
  })

  it("nuke of one worktree leaves the others' containers, volumes and images; nuke of all leaves nothing", async () => {
    const kept = Object.fromEntries(['main', 'feat', 'fix'].map((name) => [name, objects(name)]))
    expect(kept.feat.volumes, "the anonymous volume is the project's").to.have.length(1)
    const nuke = await run(['nuke', '--worktree', 'docs'])
    expect(nuke.exitCode, nuke.stderr).to.equal(0)
    expect(objects('docs')).to.deep.equal({containers: [], volumes: []})
    for (const name of ['main', 'feat', 'fix']) expect(objects(name), name).to.deep.equal(kept[name])
    expect(podmanTry('image', 'exists', `${APP_IMAGE}-${PREFIX}-feat`).status).to.equal(0)
    expect(podmanTry('image', 'exists', APP_IMAGE).status).to.equal(0)
    // A second up of a worktree whose anonymous volume exists is not refused (it is the project's).
    const again = await run(['up', '--worktree', 'feat'])
    expect(again.exitCode, again.stderr).to.equal(0)
    for (const name of ['main', 'feat', 'fix']) expect((await run(['nuke', ...flag(name)])).exitCode).to.equal(0)
    const listing = (...args: string[]) =>
      podman(...args)
        .split('\n')
        .filter((line) => line.includes(PREFIX))
    expect(listing('ps', '--all', '--format', '{{.Names}} {{.Labels}}')).to.deep.equal([])
    expect(listing('volume', 'ls', '--format', '{{.Name}} {{.Labels}}')).to.deep.equal([])
    expect(listing('network', 'ls', '--format', '{{.Name}} {{.Labels}}')).to.deep.equal([])
  })
})
