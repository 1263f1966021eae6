/**
 * The isolation report's ways out and rewrites, followed (DESIGN.md §4.2, issue acceptance 6):
 * every `[stack]` setting the refusals suggest, written into yard.toml together, passes `yard
 * ports` and `yard config`; the rendered files of main and a worktree then pass podman-compose
 * 1.0.3's own parse down to the `podman run` argv it would run (`--dry-run` with a podman that is
 * /bin/true: nothing reaches the engine), publish exactly the host ports `yard ports` lists, and
 * share none. Reads files and runs podman-compose only: no engine.
 */
import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import path from 'node:path'

import type {PortsReport} from '../../../src/core/identity/ports.js'
import type {ComposeModelDocument} from '../../../src/plugins/compose-stack/compose/types.js'

import {imageReferenceProblem} from '../../../src/core/machine/image-reference.js'
import {renderComposeFile} from '../../../src/plugins/compose-stack/compose/render.js'
import {addWorktree, cleanupTemp, makeRepo, tempDir, writeFile} from '../../support/repo.js'
import {yard} from '../../support/yard.js'

const clean = {
  WT_OFFSET: undefined,
  YARD_WORKTREE: undefined,
  WORKTREE: undefined,
  YARD_PREFIX: undefined,
  YARD_WORKTREES_ROOT: undefined,
  COMPOSE_FILE: undefined,
}
const TAG = 'v'.repeat(120)
const FILE = `services:
  web:
    build: ./web
    image: localhost/web:${TAG}
    container_name: web
    ports: ["80:80", "127.0.0.1:81:81", "[::1]:82:82/udp", "8000-8002:8000-8002", {target: 5044, published: 5044}, "53:53", "53:53/udp"]
  db:
    image: postgres:16
    ports: ["\${DB_PORT:-5432}:5432", "5433:5433"]
  vpn:
    image: busybox
    container_name: vpn
  side:
    image: busybox
    network_mode: container:vpn
  agent:
    image: busybox
    network_mode: host
  probe:
    image: busybox
    network_mode: container:company-proxy
    volumes: ["pg:/data"]
volumes:
  pg:
    external: true
    name: company-pg
`

interface Plan {
  compose: ComposeModelDocument
  report: Array<{kind: string; service: string | null; detail: string; action: string}>
}

/** The host ports (`port/protocol`) in the `-p` arguments of the `podman run` lines podman-compose prints. */
function providerPorts(output: string): string[] {
  const ports: string[] = []
  for (const match of output.matchAll(/ -p (\S+)/g)) {
    const [spec, protocol = 'tcp'] = match[1].split('/', 2)
    const host = spec.replace(/^\[[^\]]*\]:|^[\d.]+:(?=\d+(?:-\d+)?:)/, '').split(':', 1)[0]
    const [start, end = start] = host.split('-').map(Number)
    for (let port = start; port <= end; port++) ports.push(`${port}/${protocol}`)
  }

  return ports.sort()
}

describe("the isolation report's suggestions, followed, pass yard ports and the provider's parse (DESIGN.md §4.2)", function () {
  this.timeout(60_000)

  afterEach(cleanupTemp)

  it('one yard.toml with every suggested [stack] setting; rendered files podman-compose accepts, on the ports yard ports lists', async () => {
    const repo = makeRepo({
      'yard.toml': '[project]\nprefix = "app"\n\n[ports]\nDB_PORT = 5432\n',
      'yard.local.toml': '[worktree-offsets]\nfeat = 3\n',
      'compose.yaml': FILE,
      'web/Dockerfile': 'FROM busybox\n',
    })
    const feat = addWorktree(repo, 'feat')
    const run = async (args: string[]) => yard(args, {cwd: repo, env: clean})
    const refused = ((await run(['up', '--dry-run', '--json', '--worktree', 'feat'])).json as Plan).report.filter(
      (entry) => entry.kind === 'refused',
    )
    expect(refused.map((entry) => entry.service)).to.deep.equal(['probe', 'volumes.pg', 'agent'])
    const settings = [
      ...new Set(
        refused.flatMap((entry) =>
          [...entry.action.matchAll(/\[stack\] ([a-z-]+ = (?:"[^"]*"|\[[^\]]*\]))/g)].map((match) => match[1]),
        ),
      ),
    ]
    // Both services refused for sharing are in one setting: yard.toml can hold the key once.
    expect(settings).to.deep.equal(['allow-shared = ["probe", "agent"]', 'external = "per-checkout"'])
    writeFile(
      feat,
      'yard.toml',
      `[project]\nprefix = "app"\n\n[ports]\nDB_PORT = 5432\n\n[stack]\n${settings.join('\n')}\n`,
    )
    writeFile(
      repo,
      'yard.toml',
      `[project]\nprefix = "app"\n\n[ports]\nDB_PORT = 5432\n\n[stack]\n${settings.join('\n')}\n`,
    )
    expect((await run(['config'])).exitCode).to.equal(0)

    const seen = new Map<string, string>()
    for (const target of ['main', 'feat']) {
      const ports = await run(['ports', '--json', '--worktree', target])
      expect(ports.exitCode, ports.stderr).to.equal(0)
      const listed = ports.json as PortsReport
      const plan = (await run(['up', '--dry-run', '--json', '--worktree', target])).json as Plan
      expect(
        plan.report.filter((entry) => entry.kind === 'refused'),
        target,
      ).to.deep.equal([])
      const image = plan.compose.services.web.image!
      expect(imageReferenceProblem(image), image).to.equal(undefined)
      const file = path.join(tempDir(`rendered-${target}`), 'compose.yaml')
      writeFile(path.dirname(file), 'compose.yaml', renderComposeFile(plan.compose))
      const provider = spawnSync(
        'podman-compose',
        ['--podman-path', '/bin/true', '--dry-run', '-f', file, '-p', listed.project, 'up', '-d'],
        {encoding: 'utf8'},
      )
      expect(provider.status, provider.stderr + provider.stdout).to.equal(0)
      const published = providerPorts(provider.stdout)
      const fromYard = [
        ...Object.values(listed.ports).map((port) => `${port}/tcp`),
        ...listed.implicitPorts.flatMap((port) =>
          Array.from(
            {length: (port.hostEnd ?? port.host) - port.host + 1},
            (_, index) => `${port.host + index}/${port.protocol}`,
          ),
        ),
      ].sort()
      expect(published, `${target}: what the provider publishes is what yard ports lists`).to.deep.equal(fromYard)
      for (const port of published) {
        expect(seen.get(port), `${port} published by ${seen.get(port)} and ${target}`).to.equal(undefined)
        seen.set(port, target)
      }
    }
  })
})
