/**
 * The dashboard screen beyond its keys (DESIGN.md §6, §9), with ink-testing-library: the terminal
 * restored after a crash, "…" cells while a slow backend (a plugin registered through the
 * registry, test/fixtures/plugins/slow-stack) has not answered, the `n` prompt checked as you type
 * with core's name rule, and the detail pane.
 */
import {expect} from 'chai'
import {render} from 'ink-testing-library'
import {EventEmitter} from 'node:events'
import {createElement} from 'react'

import type {ClusterRow, LocalRow} from '../../src/core/dashboard/dashboard.js'
import type {CheckoutDetails} from '../../src/core/dashboard/details.js'

import {nameProblem} from '../../src/core/identity/identity.js'
import {createContext} from '../../src/core/kernel/context.js'
import {backendsOf} from '../../src/core/registry/backends.js'
import {loadRegistry} from '../../src/core/registry/registry.js'
import {DashboardApp, type DashboardServices} from '../../src/tui/dashboard-app.js'
import {
  dashboardServices,
  restoreTerminal,
  showScreen,
  type Terminal,
  waitForEnter,
} from '../../src/tui/dashboard-run.js'
import {addWorktree, cleanupTemp, makeRepo, tempDir} from '../support/repo.js'
import {testConfig} from '../support/yard.js'

const LEAVE_ALT = '\u001B[?1049l\u001B[?25h'

/** A terminal of the test's own: stdout records what is written, stdin records raw mode. */
class FakeStdin extends EventEmitter {
  isTTY = true
  isRaw = false
  paused = false
  rawModes: boolean[] = []
  setRawMode(mode: boolean) {
    this.rawModes.push(mode)
    this.isRaw = mode
    return this
  }

  setEncoding() {
    return this
  }

  read() {
    return null
  }

  referenced = false
  ref() {
    this.referenced = true
  }

  unref() {
    this.referenced = false
  }

  pause() {
    this.paused = true
    return this
  }

  resume() {
    this.paused = false
    return this
  }
}

class FakeStdout extends EventEmitter {
  columns = 100
  rows = 30
  isTTY = true
  written = ''
  // ink 8 settles waitUntilExit in the callback of a last empty write, as a real stream calls it.
  write = (text: string, callback?: () => void) => {
    this.written += text
    if (callback) setImmediate(callback)
    return true
  }
}

function fakeTerminal(): {terminal: Terminal; stdin: FakeStdin; stdout: FakeStdout} {
  const stdin = new FakeStdin()
  const stdout = new FakeStdout()
  return {terminal: {stdin, stdout, stderr: new FakeStdout()} as unknown as Terminal, stdin, stdout}
}

function localRow(name: string, offset: number): LocalRow {
  return {
    name,
    branch: name === 'main' ? 'main' : `wt/${name}`,
    path: `/src/app-worktrees/${name}`,
    head: 'a'.repeat(40),
    base: null,
    offset,
    offsetSource: name === 'main' ? 'main' : 'hash',
    project: name === 'main' ? 'app' : `app-${name}`,
    dirty: {modified: 0, untracked: 0},
    ahead: 0,
    behind: 0,
    missing: false,
    locked: false,
    trust: 'trusted',
    ports: {WEB_PORT: 3000 + offset},
    clashesWith: [],
    stack: {state: 'absent', running: 0, total: 0},
    box: {state: 'absent', running: 0, total: 0},
  }
}

/** Services over rows in memory; `calls` records the actions asked for. */
function memoryServices(overrides: Partial<DashboardServices> = {}) {
  const calls: string[] = []
  const rows = [localRow('main', 0), localRow('feat', 59)]
  const services: DashboardServices = {
    load: async (mode) => ({rows: mode === 'local' ? rows.map((row) => ({...row})) : ([] as ClusterRow[]), notes: []}),
    up: async (name) => `${name} is up`,
    down: async (name) => `${name} is down`,
    planRemove: async (name) => `remove ${name}`,
    remove: async (name) => `removed ${name}`,
    boxUp: async (name) => `the box of ${name} is up`,
    checkName: nameProblem,
    async create(mode, name) {
      calls.push(`create ${mode} ${name}`)
      rows.push(localRow(name, 21))
      return `created worktree ${name}`
    },
    details: async (name) => ({name, containers: [], logs: [], git: [], gitMore: 0, notes: []}),
    ...overrides,
  }
  return {services, calls}
}

async function frameWhere(
  app: {lastFrame(): string | undefined},
  test: (frame: string) => boolean,
  budgetMs = 3000,
): Promise<string> {
  for (let waited = 0; waited < budgetMs; waited += 20) {
    const frame = app.lastFrame() ?? ''
    if (test(frame)) return frame
    await new Promise((resolve) => setTimeout(resolve, 20))
  }

  throw new Error(`no frame matched; the last one:\n${app.lastFrame()}`)
}

const mount = (services: DashboardServices) =>
  render(createElement(DashboardApp, {services, initialMode: 'local', onExit() {}}))
const rowLine = (frame: string, name: string) =>
  frame.split('\n').find((line) => line.replace(/^›/, ' ').trim().split(/\s+/, 1)[0] === name) ?? ''
const statusLine = (frame: string) => frame.trimEnd().split('\n').at(-1) ?? ''

describe('dashboard: the terminal after a crash (DESIGN.md §9)', () => {
  it('restoreTerminal leaves the alternate screen, shows the cursor and turns raw mode off', () => {
    const {terminal, stdin, stdout} = fakeTerminal()
    stdin.setRawMode(true)
    restoreTerminal(terminal)
    expect(stdout.written).to.equal(LEAVE_ALT)
    expect(stdin.isRaw).to.equal(false)
    restoreTerminal(terminal)
    expect(stdin.rawModes).to.deep.equal([true, false])
  })

  it('an exception in a render ends the screen with the terminal restored, and is thrown on', async () => {
    const {terminal, stdin, stdout} = fakeTerminal()
    const broken = localRow('feat', 59)
    Object.defineProperty(broken, 'ports', {
      get() {
        throw new Error('a cell could not be drawn')
      },
    })
    const {services} = memoryServices({load: async () => ({rows: [broken], notes: []})})
    const shown = showScreen(services, 'local', 0, {terminal, intervalMs: 0})
    let thrown: Error | undefined
    await shown.catch((error: Error) => (thrown = error))
    expect(thrown?.message).to.equal('a cell could not be drawn')
    expect(stdout.written.startsWith('\u001B[?1049h')).to.equal(true)
    expect(stdout.written.endsWith(LEAVE_ALT)).to.equal(true)
    expect(stdin.isRaw).to.equal(false)
    expect(stdin.rawModes).to.include(true)
    expect(stdin.paused).to.equal(true)
  })

  it('an action that throws at once (not a rejected promise) goes to the status line; keys keep working', async () => {
    const {services} = memoryServices({
      up() {
        throw new Error('the engine is gone')
      },
    })
    const app = mount(services)
    await frameWhere(app, (frame) => frame.includes('feat'))
    app.stdin.write('u')
    await frameWhere(app, (frame) => statusLine(frame).includes('the engine is gone'))
    app.stdin.write('j')
    await frameWhere(app, (frame) => rowLine(frame, 'feat').startsWith('›'))
    app.unmount()
  })
})

describe('dashboard: a slow stack backend from a plugin (DESIGN.md §6)', function () {
  this.timeout(60_000)
  let repo: string
  let services: DashboardServices

  before(async () => {
    repo = makeRepo({
      'yard.toml':
        '[project]\nprefix = "yardtest-d3"\n\n[stack]\nbackend = "slow-stack"\n\n[ports]\nWEB_PORT = 38700\n',
      'compose.yaml': 'services:\n  web:\n    image: none\n',
    })
    addWorktree(repo, 'feat')
    const registry = backendsOf(await loadRegistry(await testConfig(['slow-stack'])))
    const env = {
      ...process.env,
      YARD_STATE_DIR: tempDir('yard-state'),
      YARD_WORKTREE: undefined,
      WT_OFFSET: undefined,
      YARD_PREFIX: undefined,
    }
    services = dashboardServices(createContext({env, cwd: repo, warn() {}}), registry)
  })

  after(() => {
    delete process.env.YARD_FIXTURE_STACK_DELAY_MS
    cleanupTemp()
  })

  it('shows the rows at once with "…" in the stack and box cells, then the states when the backend answers', async () => {
    process.env.YARD_FIXTURE_STACK_DELAY_MS = '1000'
    const app = mount(services)
    const early = await frameWhere(app, (frame) => rowLine(frame, 'feat') !== '', 10_000)
    expect(rowLine(early, 'feat')).to.match(/feat\s+wt\/feat\s+\d+ hash\s+WEB_PORT=\d+\s+…\s+…/)
    expect(rowLine(early, 'main')).to.match(/main\s+main\s+0 main\s+WEB_PORT=38700\s+…\s+…/)
    const later = await frameWhere(app, (frame) => rowLine(frame, 'feat').includes('running 1/1'), 10_000)
    expect(rowLine(later, 'feat')).to.match(/running 1\/1\s+absent\s+0M 0U/)
    expect(rowLine(later, 'main')).to.match(/absent\s+absent\s+0M 0U/)
    app.unmount()
  })

  it("u shows the stack backend's warnings (a fixed host port) in the status line with its outcome", async () => {
    process.env.YARD_FIXTURE_STACK_DELAY_MS = '0'
    const app = mount(services)
    await frameWhere(app, (frame) => rowLine(frame, 'feat').includes('running 1/1'), 10_000)
    app.stdin.write('j')
    await frameWhere(app, (frame) => rowLine(frame, 'feat').startsWith('›'))
    app.stdin.write('u')
    await frameWhere(
      app,
      (frame) =>
        statusLine(frame) ===
        "feat is up — service web of feat publishes the fixed host port 5432; it clashes with main's",
      10_000,
    )
    app.unmount()
  })

  it('a backend that never answers keeps "…" in its cells while git cells fill in and keys work', async () => {
    process.env.YARD_FIXTURE_STACK_DELAY_MS = 'never'
    const app = mount(services)
    const done = await frameWhere(app, (frame) => rowLine(frame, 'feat').includes('0M 0U'), 10_000)
    expect(rowLine(done, 'feat')).to.match(/WEB_PORT=\d+\s+…\s+…\s+0M 0U/)
    app.stdin.write('j')
    await frameWhere(app, (frame) => rowLine(frame, 'feat').startsWith('›'))
    app.unmount()
  })
})

describe('dashboard: n creates a worktree through a prompt checked as you type (DESIGN.md §3.1, §6)', () => {
  it('says what is wrong with each name as it is typed, refuses Enter on a bad one, and creates a good one with progress', async () => {
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => (release = resolve))
    const {services, calls} = memoryServices()
    const {create} = services
    services.create = async (mode, name) => {
      await gate
      return create(mode, name)
    }

    const app = mount(services)
    await frameWhere(app, (frame) => frame.includes('feat'))
    app.stdin.write('n')
    await frameWhere(app, (frame) => statusLine(frame) === 'new worktree: ▏ ✗ type a name')
    app.stdin.write('New')
    await frameWhere(app, (frame) =>
      statusLine(frame).startsWith('new worktree: New▏ ✗ names use only a-z, 0-9 and inner hyphens'),
    )
    app.stdin.write('\r')
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(calls).to.deep.equal([])
    // Three backspaces typed faster than the screen reads them: one chunk.
    app.stdin.write('\u007F\u007F\u007F')
    app.stdin.write('main')
    await frameWhere(app, (frame) => statusLine(frame).includes('✗ "main" is reserved'))
    for (let index = 0; index < 4; index++) app.stdin.write('\u007F')
    app.stdin.write('feat')
    await frameWhere(app, (frame) => statusLine(frame).includes('✗ feat already exists'))
    app.stdin.write('-')
    await frameWhere(app, (frame) => statusLine(frame).includes('✗ names use only'))
    app.stdin.write('2')
    await frameWhere(
      app,
      (frame) =>
        statusLine(frame) === 'new worktree: feat-2▏ ✓ Enter creates worktree feat-2 on branch wt/feat-2; Esc cancels',
    )
    app.stdin.write('\r')
    await frameWhere(app, (frame) => statusLine(frame) === 'creating worktree feat-2…')
    // Input still works while the worktree is being made.
    app.stdin.write('j')
    await frameWhere(app, (frame) => rowLine(frame, 'feat').startsWith('›'))
    release()
    const made = await frameWhere(
      app,
      (frame) => rowLine(frame, 'feat-2') !== '' && statusLine(frame) === 'created worktree feat-2',
    )
    expect(rowLine(made, 'feat-2')).to.match(/feat-2\s+wt\/feat-2\s+21 hash/)
    expect(calls).to.deep.equal(['create local feat-2'])
    app.unmount()
  })

  it('Esc closes the prompt without creating anything; in cluster mode it names a sandbox', async () => {
    const {services, calls} = memoryServices({
      load: async (mode) => ({rows: mode === 'local' ? [localRow('main', 0)] : ([] as ClusterRow[]), notes: []}),
    })
    const app = mount(services)
    await frameWhere(app, (frame) => frame.includes('main'))
    app.stdin.write('n')
    app.stdin.write('x1')
    await frameWhere(app, (frame) => statusLine(frame).startsWith('new worktree: x1▏ ✓'))
    app.stdin.write('\u001B')
    await frameWhere(app, (frame) => statusLine(frame) === 'new: cancelled')
    app.stdin.write('\t')
    await frameWhere(app, (frame) => frame.includes('no sandboxes'))
    app.stdin.write('n')
    app.stdin.write('sb')
    await frameWhere(app, (frame) => statusLine(frame) === 'new sandbox: sb▏ ✓ Enter creates sandbox sb; Esc cancels')
    app.stdin.write('\u001B')
    await frameWhere(app, (frame) => statusLine(frame) === 'new: cancelled')
    expect(calls).to.deep.equal([])
    app.unmount()
  })
})

describe('dashboard: the detail pane (DESIGN.md §6)', () => {
  it('Enter shows "…" until the facts come, then containers with ports, recent log lines and git status', async () => {
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => (release = resolve))
    const facts: CheckoutDetails = {
      name: 'feat',
      containers: [
        {service: 'web', container: 'app-feat-web-1', state: 'running', ports: [{host: 3059, container: 8080}]},
        {service: 'box', container: 'app-feat-box', state: 'running', ports: []},
      ],
      logs: ['web | serving hello feat', 'web | GET / 200'],
      git: ['## wt/feat', '?? notes.txt'],
      gitMore: 3,
      notes: [],
    }
    const asked: string[] = []
    const {services} = memoryServices({
      async details(name) {
        asked.push(name)
        await gate
        return facts
      },
    })
    const app = mount(services)
    await frameWhere(app, (frame) => frame.includes('feat'))
    app.stdin.write('j')
    await frameWhere(app, (frame) => rowLine(frame, 'feat').startsWith('›'))
    app.stdin.write('\r')
    const waiting = await frameWhere(app, (frame) => frame.includes('services: …'))
    expect(waiting).to.include('recent logs: …')
    expect(waiting).to.include('feat — project app-feat, offset 59 (hash)')
    release()
    const shown = await frameWhere(app, (frame) => frame.includes('services:\n'))
    expect(shown).to.match(/^ {2}web {2}running {2}3059→8080 {2}\(app-feat-web-1\)$/m)
    expect(shown).to.match(/^ {2}box {2}running {2}\(app-feat-box\)$/m)
    expect(shown).to.match(/^recent logs:\n {2}web \| serving hello feat\n {2}web \| GET \/ 200$/m)
    expect(shown).to.match(/^git status --short:\n {2}## wt\/feat\n {2}\?\? notes\.txt\n {2}… 3 more$/m)
    expect(asked).to.deep.equal(['feat'])
    app.stdin.write('\r')
    await frameWhere(app, (frame) => !frame.includes('recent logs'))
    // Tab closes a pane (it belongs to the other mode's row): back in local mode, Enter opens one.
    app.stdin.write('\r')
    await frameWhere(app, (frame) => frame.includes('recent logs:'))
    app.stdin.write('\t')
    await frameWhere(app, (frame) => frame.includes('no sandboxes') && !frame.includes('recent logs'))
    app.stdin.write('\t')
    await frameWhere(app, (frame) => frame.includes('local worktrees') && rowLine(frame, 'main').startsWith('›'))
    app.stdin.write('\r')
    await frameWhere(app, (frame) => frame.includes('main — project app, offset 0 (main)'))
    app.unmount()
  })

  it('says when the stack backend gives no logs, and shows why the facts could not be had', async () => {
    const {services} = memoryServices({
      details: async (name) => ({
        name,
        containers: [],
        logs: null,
        git: ['## main'],
        gitMore: 0,
        notes: ['containers: no answer within 4 s'],
      }),
    })
    const app = mount(services)
    await frameWhere(app, (frame) => frame.includes('feat'))
    app.stdin.write('\r')
    const shown = await frameWhere(app, (frame) => frame.includes('recent logs: none from this stack backend'))
    expect(shown).to.include('services: nothing runs')
    expect(shown).to.include('note: containers: no answer within 4 s')
    app.stdin.write('\r')
    await frameWhere(app, (frame) => !frame.includes('recent logs'))
    const failing = mount(
      memoryServices({
        async details() {
          throw Object.assign(new Error('no worktree named feat'), {fix: 'run yard worktree list'})
        },
      }).services,
    )
    await frameWhere(failing, (frame) => frame.includes('feat'))
    failing.stdin.write('j')
    failing.stdin.write('\r')
    await frameWhere(failing, (frame) =>
      frame.includes('details: no worktree named feat — fix: run yard worktree list'),
    )
    failing.unmount()
    app.unmount()
  })
})

describe('dashboard: the wait after a failed e (DESIGN.md §6)', () => {
  it('waitForEnter reads stdin in cooked mode, referenced and resumed, until a line comes; then pauses it again', async () => {
    const {stdin} = fakeTerminal()
    // As the screen leaves it: raw mode on until restored, paused, unreferenced.
    stdin.isRaw = true
    stdin.pause()
    let done = false
    const waiting = waitForEnter(stdin as unknown as NodeJS.ReadStream).then(() => (done = true))
    expect(stdin.isRaw).to.equal(false)
    expect(stdin.paused).to.equal(false)
    // A referenced stdin keeps the process alive while it waits (else Node ends it with 13).
    expect(stdin.referenced).to.equal(true)
    stdin.emit('data', 'ab')
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(done).to.equal(false)
    stdin.emit('data', 'c\n')
    await waiting
    expect(stdin.paused).to.equal(true)
    expect(stdin.referenced).to.equal(false)
    expect(stdin.listenerCount('data')).to.equal(0)
  })
})
