/**
 * `yard ports` and `yard env` with the host ports a compose file publishes itself (DESIGN.md
 * §4.2, the port rule): listed with their source, exported as YARD_PORT_*, and a shared host
 * port between two checkouts is a clash in `yard ports --all`. Reads files only: no engine.
 */
import {expect} from 'chai'

import type {PortsReport} from '../../src/core/identity/ports.js'
import type {ImplicitPort} from '../../src/sdk/stack.js'

import {addWorktree, cleanupTemp, makeRepo, writeFile} from '../support/repo.js'
import {yard} from '../support/yard.js'

const clean = {
  WT_OFFSET: undefined,
  YARD_WORKTREE: undefined,
  WORKTREE: undefined,
  YARD_PREFIX: undefined,
  YARD_WORKTREES_ROOT: undefined,
  COMPOSE_FILE: undefined,
}
const compose = (ports: string[]) =>
  `services:\n  web:\n    image: w\n    ports: [${ports.map((port) => JSON.stringify(port)).join(', ')}]\n`

describe("yard ports / env: the compose file's own host ports (DESIGN.md §4.2)", () => {
  afterEach(cleanupTemp)

  it('lists them with source and variable, as main and as a worktree publish them; env exports them', async () => {
    const repo = makeRepo({
      'yard.toml': '[ports]\nAPP_PORT = 3000\n',
      'yard.local.toml': '[worktree-offsets]\nfeat = 2\n',
      'compose.yaml': compose(['80:80', '127.0.0.1:${APP_PORT}:3000', '51820:51820/udp']),
    })
    addWorktree(repo, 'feat')
    const main = (await yard(['ports', '--json'], {cwd: repo, env: clean})).json as PortsReport
    const pick = (ports: ImplicitPort[]) => ports.map((port) => [port.source, port.variable, port.host, port.protocol])
    expect(pick(main.implicitPorts)).to.deep.equal([
      ['compose:web:80', 'YARD_PORT_WEB_80', 80, 'tcp'],
      ['compose:web:51820', 'YARD_PORT_WEB_51820_UDP', 51_820, 'udp'],
    ])
    const feat = (await yard(['ports', '--json', '--worktree', 'feat'], {cwd: repo, env: clean})).json as PortsReport
    expect(feat.ports).to.deep.equal({APP_PORT: 3002})
    expect(pick(feat.implicitPorts)).to.deep.equal([
      ['compose:web:80', 'YARD_PORT_WEB_80', 20_100, 'tcp'],
      ['compose:web:51820', 'YARD_PORT_WEB_51820_UDP', 20_101, 'udp'],
    ])
    const text = await yard(['ports', '--worktree', 'feat'], {cwd: repo, env: clean})
    expect(text.stdout).to.include('  YARD_PORT_WEB_51820_UDP=20101/udp  (compose:web:51820)')
    const env = (await yard(['env', '--format', 'json', '--worktree', 'feat'], {cwd: repo, env: clean})).json as Record<
      string,
      string
    >
    expect(env).to.include({APP_PORT: '3002', YARD_PORT_WEB_80: '20100', YARD_PORT_WEB_51820_UDP: '20101'})
  })

  it('tcp and udp on one port get a variable each; one port on two bind addresses is one variable', async () => {
    const repo = makeRepo({
      'yard.local.toml': '[worktree-offsets]\nfeat = 1\n',
      'compose.yaml': compose(['53:53', '53:53/udp', '127.0.0.1:8080:80', '[::1]:8080:80']),
    })
    addWorktree(repo, 'feat')
    const feat = (await yard(['ports', '--json', '--worktree', 'feat'], {cwd: repo, env: clean})).json as PortsReport
    expect(feat.implicitPorts.map((port) => [port.variable, port.host, port.protocol, port.hostIp])).to.deep.equal([
      ['YARD_PORT_WEB_53', 20_000, 'tcp', undefined],
      ['YARD_PORT_WEB_53_UDP', 20_000, 'udp', undefined],
      ['YARD_PORT_WEB_8080', 20_001, 'tcp', '127.0.0.1'],
      ['YARD_PORT_WEB_8080', 20_001, 'tcp', '[::1]'],
    ])
    const text = (await yard(['env', '--worktree', 'feat'], {cwd: repo, env: clean})).stdout
    const exported = text
      .split('\n')
      .filter((line) => line.includes('YARD_PORT_'))
      .map((line) => line.replace(/^export /, '').split('=', 1)[0])
    expect(exported).to.deep.equal(['YARD_PORT_WEB_53', 'YARD_PORT_WEB_53_UDP', 'YARD_PORT_WEB_8080'])
  })

  it("a literal equal to a worktree's [ports] value moves there; main moves one inside a [ports] range", async () => {
    const file =
      'services:\n  db:\n    image: p\n    ports: ["${DB_PORT:-5432}:5432"]\n  replica:\n    image: p\n    ports: ["5433:5433"]\n'
    const repo = makeRepo({
      'yard.toml': '[ports]\nDB_PORT = 5432\n',
      'yard.local.toml': '[worktree-offsets]\nfeat = 1\n',
      'compose.yaml': file,
    })
    addWorktree(repo, 'feat')
    const all = (await yard(['ports', '--all', '--json'], {cwd: repo, env: clean})).json as PortsReport[]
    const row = (name: string) => all.find((report) => report.worktree === name)!
    expect(row('feat').ports).to.deep.equal({DB_PORT: 5433})
    expect(row('feat').implicitPorts.map((port) => [port.source, port.host])).to.deep.equal([
      ['compose:replica:5433', 20_000],
    ])
    expect(row('main').implicitPorts.map((port) => [port.source, port.host])).to.deep.equal([
      ['compose:replica:5433', 28_900],
    ])
    expect(row('main').clashesWith).to.deep.equal([])
    expect(row('feat').clashesWith).to.deep.equal([])
    const dry = (await yard(['up', '--dry-run', '--json', '--worktree', 'feat'], {cwd: repo, env: clean})).json as {
      compose: {services: Record<string, {ports: string[]}>}
    }
    expect(dry.compose.services.db.ports).to.deep.equal(['5433:5432'])
    expect(dry.compose.services.replica.ports).to.deep.equal(['20000:5433'])
  })

  it('--all: two checkouts whose files put a host port in the same place clash', async () => {
    const repo = makeRepo({
      'yard.local.toml': '[worktree-offsets]\nfeat = 1\nfix = 2\n',
      'compose.yaml': compose(['80:80']),
    })
    // feat's file also fixes 20050, so its window starts at 20100: its 80 lands on 20100, where fix
    // (offset 2) puts its own 80.
    writeFile(addWorktree(repo, 'feat'), 'compose.yaml', compose(['80:80', '20050:20050']))
    addWorktree(repo, 'fix')
    const all = (await yard(['ports', '--all', '--json'], {cwd: repo, env: clean})).json as PortsReport[]
    const row = (name: string) => all.find((report) => report.worktree === name)!
    expect(row('feat').implicitPorts[0].host).to.equal(20_100)
    expect(row('fix').implicitPorts[0].host).to.equal(20_100)
    expect(row('feat').clashesWith).to.deep.equal(['fix'])
    expect(row('fix').clashesWith).to.deep.equal(['feat'])
    expect(row('main').clashesWith).to.deep.equal([])
  })
})
