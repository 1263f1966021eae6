/**
 * `yard ports` and `yard env` with the host ports a compose file publishes itself (DESIGN.md
 * §4.2, the port rule): listed with their source, exported as YARD_PORT_*, and a shared host
 * port between two checkouts is a clash in `yard ports --all`. Reads files only: no engine.
 */
import {expect} from 'chai'

import type {ImplicitPort} from '../../src/core/backend.js'
import type {PortsReport} from '../../src/core/ports.js'
import {addWorktree, cleanupTemp, makeRepo, writeFile} from '../support/repo.js'
import {yard} from '../support/yard.js'

const clean = {WT_OFFSET: undefined, YARD_WORKTREE: undefined, WORKTREE: undefined, YARD_PREFIX: undefined, YARD_WORKTREES_ROOT: undefined, COMPOSE_FILE: undefined}
const compose = (ports: string[]) => `services:\n  web:\n    image: w\n    ports: [${ports.map((port) => JSON.stringify(port)).join(', ')}]\n`

describe('yard ports / env: the compose file\'s own host ports (DESIGN.md §4.2)', () => {
  afterEach(cleanupTemp)

  it('lists them with source and variable, as main and as a worktree publish them; env exports them', async () => {
    const repo = makeRepo({'yard.toml': '[ports]\nAPP_PORT = 3000\n', 'yard.local.toml': '[worktree-offsets]\nfeat = 2\n', 'compose.yaml': compose(['80:80', '127.0.0.1:${APP_PORT}:3000', '51820:51820/udp'])})
    addWorktree(repo, 'feat')
    const main = (await yard(['ports', '--json'], {cwd: repo, env: clean})).json as PortsReport
    const pick = (ports: ImplicitPort[]) => ports.map((port) => [port.source, port.variable, port.host, port.protocol])
    expect(pick(main.implicitPorts)).to.deep.equal([['compose:web:80', 'YARD_PORT_WEB_80', 80, 'tcp'], ['compose:web:51820', 'YARD_PORT_WEB_51820', 51_820, 'udp']])
    const feat = (await yard(['ports', '--json', '--worktree', 'feat'], {cwd: repo, env: clean})).json as PortsReport
    expect(feat.ports).to.deep.equal({APP_PORT: 3002})
    expect(pick(feat.implicitPorts)).to.deep.equal([['compose:web:80', 'YARD_PORT_WEB_80', 20_100, 'tcp'], ['compose:web:51820', 'YARD_PORT_WEB_51820', 20_101, 'udp']])
    const text = await yard(['ports', '--worktree', 'feat'], {cwd: repo, env: clean})
    expect(text.stdout).to.include('  YARD_PORT_WEB_51820=20101/udp  (compose:web:51820)')
    const env = (await yard(['env', '--format', 'json', '--worktree', 'feat'], {cwd: repo, env: clean})).json as Record<string, string>
    expect(env).to.include({APP_PORT: '3002', YARD_PORT_WEB_80: '20100', YARD_PORT_WEB_51820: '20101'})
  })

  it('--all: two checkouts whose files put a host port in the same place clash', async () => {
    const repo = makeRepo({'yard.local.toml': '[worktree-offsets]\nfeat = 1\nfix = 2\n', 'compose.yaml': compose(['80:80'])})
    // feat's file also fixes 20050, so its window starts at 20100: its 80 lands on 20100, where fix (offset 2) puts its own 80.
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
