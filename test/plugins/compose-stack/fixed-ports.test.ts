/**
 * Fixed host ports (DESIGN.md §4.2): table-driven over short, long and ranged syntax, then one
 * real `yard up` in a worktree that must warn with the fix.
 */
import {expect} from 'chai'
import path from 'node:path'

import {loadComposeModel} from '../../../src/plugins/compose-stack/compose-model.js'
import {findFixedPorts, parsePortEntry} from '../../../src/plugins/compose-stack/fixed-ports.js'
import {interpolate, MissingVariableError} from '../../../src/plugins/compose-stack/interpolate.js'
import {cleanupTemp, git, makeRepo, tempDir, writeFile} from '../../support/repo.js'
import {podmanEnv, prepareStackTests, projectObjects, sweep, webService} from '../../support/podman.js'
import {yard} from '../../support/yard.js'

// The worktree's env and main's: [ports] APP_PORT = 3000 at offset 59 (DB_PORT is not in [ports]).
const worktreeEnv = {APP_PORT: '3059', WORKTREE: 'feat'}
const mainEnv = {APP_PORT: '3000'}

const table: Array<{entry: unknown; fixed: string | undefined; key?: string}> = [
  {entry: '5432:5432', fixed: '5432', key: 'DB_PORT'},
  {entry: '${DB_PORT:-5432}:5432', fixed: '5432', key: 'DB_PORT'},
  {entry: '${DB_PORT-5432}:5432/tcp', fixed: '5432', key: 'DB_PORT'},
  {entry: '127.0.0.1:5432:5432', fixed: '5432', key: 'DB_PORT'},
  {entry: '[::1]:5432:5432', fixed: '5432', key: 'DB_PORT'},
  {entry: '8000-8001:8000-8001', fixed: '8000-8001', key: 'DB_PORT'},
  {entry: {target: 5432, published: 5432}, fixed: '5432', key: 'DB_PORT'},
  {entry: {target: 5432, published: '${DB_PORT:-5432}', host_ip: '0.0.0.0'}, fixed: '5432', key: 'DB_PORT'},
  {entry: {target: 80, published: '8000-8001'}, fixed: '8000-8001', key: 'DB_PORT'},
  {entry: '${APP_PORT:-3000}:5432', fixed: undefined},
  {entry: '127.0.0.1:${APP_PORT}:5432', fixed: undefined},
  {entry: {target: 5432, published: '${APP_PORT}'}, fixed: undefined},
  {entry: '${APP_PORT}-${APP_PORT}:80', fixed: undefined},
  {entry: '5432', fixed: undefined},
  {entry: 5432, fixed: undefined},
  {entry: '127.0.0.1::5432', fixed: undefined},
  {entry: {target: 5432}, fixed: undefined},
]

describe('fixed host ports (DESIGN.md §4.2)', () => {
  for (const row of table) {
    it(`${JSON.stringify(row.entry)} → ${row.fixed === undefined ? 'moves with the offset' : `fixed ${row.fixed}`}`, () => {
      const fixed = findFixedPorts([{name: 'db', ports: [row.entry], usesDefaultNetwork: true}], worktreeEnv, mainEnv)
      expect(fixed.map((port) => port.host)).to.deep.equal(row.fixed === undefined ? [] : [row.fixed])
      if (row.key) expect(fixed[0].key).to.equal(row.key)
    })
  }

  it('parses the forms compose accepts', () => {
    expect(parsePortEntry('127.0.0.1:8080:80/udp')).to.deep.equal({host: '8080', container: '80'})
    expect(parsePortEntry('[::1]::80')).to.deep.equal({host: undefined, container: '80'})
    expect(parsePortEntry(['not', 'a', 'port'])).to.equal(undefined)
  })

  it('interpolates like compose: $$, defaults, alternatives, nesting and required variables', () => {
    const env = {SET: 'x', EMPTY: ''}
    expect(interpolate('$$SET ${SET} $SET', env)).to.equal('$SET x x')
    expect(interpolate('${EMPTY:-d} ${EMPTY-d} ${UNSET-d}', env)).to.equal('d  d')
    expect(interpolate('${SET:+alt} ${UNSET:+alt}.', env)).to.equal('alt .')
    expect(interpolate('${UNSET:-${SET}-y}', env)).to.equal('x-y')
    expect(() => interpolate('${UNSET:?set it}', env)).to.throw(MissingVariableError, 'UNSET')
  })

  it('reads services, their label forms and bare volumes from several files', () => {
    const dir = tempDir()
    writeFile(dir, 'a.yaml', 'services:\n  web:\n    labels: ["x=1"]\n    ports: ["80:80"]\nvolumes:\n  data:\n')
    writeFile(dir, 'b.yaml', 'services:\n  web:\n    ports: ["81:81"]\n    networks: [front]\n  db: {}\nnetworks:\n  front:\n    external: true\n')
    const model = loadComposeModel([path.join(dir, 'a.yaml'), path.join(dir, 'b.yaml')])
    expect(model.services).to.deep.equal([
      {name: 'web', ports: ['80:80', '81:81'], labelsForm: 'list', usesDefaultNetwork: false},
      {name: 'db', ports: [], usesDefaultNetwork: true},
    ])
    expect(model.volumes).to.deep.equal([{name: 'data', bare: true, external: false}])
    expect(model.networks).to.deep.equal([{name: 'front', bare: false, external: true}])
    cleanupTemp()
  })
})

describe('fixed host ports: yard up in a worktree warns with the fix (DESIGN.md §4.2)', function () {
  this.timeout(120_000)
  const prefix = 'yardtest-s4'

  before(prepareStackTests)
  after(() => {
    sweep(prefix)
    cleanupTemp()
  })

  it('names service, port and the ${DB_PORT:-5432}:5432 + [ports] fix, and still starts the stack', async () => {
    const composeFile = ['services:', '  db:', webService('db', '38391:8080'), '  web:', webService('web', '${WEB_PORT:-38392}:8080'), ''].join('\n')
    const repo = makeRepo({'yard.toml': `[project]\nprefix = "${prefix}"\n\n[ports]\nWEB_PORT = 38500\n`, 'compose.yaml': composeFile})
    git(repo, 'worktree', 'add', '-q', '-b', 'wt/feat', path.join(`${repo}-worktrees`, 'feat'))
    const up = await yard(['up', '--worktree', 'feat'], {cwd: repo, env: podmanEnv()})
    expect(up.exitCode, up.stderr).to.equal(0)
    expect(up.stderr).to.include('warning: service db of feat publishes host port 38391, the same as in main')
    expect(up.stderr).to.include('fix: publish "${DB_PORT:-38391}:8080" in the compose file and set [ports] DB_PORT = 38391')
    expect(up.stderr).not.to.include('service web')
    expect(projectObjects(`${prefix}-feat`).containers).to.deep.equal([`${prefix}-feat_db_1`, `${prefix}-feat_web_1`])
  })
})
