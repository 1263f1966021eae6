/**
 * The dashboard screen's keys and rendering (DESIGN.md §6) with ink-testing-library: rows,
 * selection, Tab between modes, help, actions with progress and refusals in the status line,
 * quitting with 0 or (Ctrl-C) 130, one resize subscription, and columns cut with an ellipsis.
 */
import {expect} from 'chai'
import {render} from 'ink-testing-library'
import {readFileSync} from 'node:fs'
import path from 'node:path'
import {createElement} from 'react'

import type {ClusterRow, DashboardMode, LocalRow} from '../../src/core/dashboard/dashboard.js'

import {nameProblem} from '../../src/core/identity/identity.js'
import {DashboardApp, type DashboardExit, type DashboardServices, HELP_LINES} from '../../src/tui/dashboard-app.js'
import {LOCAL_COLUMNS, tableLines} from '../../src/tui/dashboard-table.js'
import {projectRoot} from '../support/yard.js'

const KEY = {down: '\u001B[B', up: '\u001B[A', tab: '\t', ctrlC: '\u0003'}

function localRow(name: string, offset: number, running: boolean): LocalRow {
  return {
    name,
    branch: name === 'main' ? 'main' : `wt/${name}`,
    path: `/src/app-worktrees/${name}`,
    head: 'a'.repeat(40),
    base: null,
    offset,
    offsetSource: name === 'main' ? 'main' : 'hash',
    project: `app-${name}`,
    dirty: {modified: 0, untracked: 0},
    ahead: 0,
    behind: 0,
    missing: false,
    locked: false,
    trust: 'trusted',
    ports: {WEB_PORT: 3000 + offset},
    clashesWith: [],
    stack: running ? {state: 'running', running: 1, total: 1} : {state: 'absent', running: 0, total: 0},
    box: {state: 'absent', running: 0, total: 0},
  }
}

/** A sandbox whose cache last fetched 7 minutes before the call. */
const sandboxRow = (): ClusterRow => ({
  name: 'sbx',
  project: 'app-sbx',
  runtime: 'podman',
  phase: 'Running',
  offset: 12,
  offsetSource: 'label',
  ports: {WEB_PORT: 3012},
  node: null,
  repos: [
    {
      slot: 'shop',
      identity: '/up/shop',
      key: 'shop-12345678',
      stale: true,
      lastFetched: null,
      lastError: 'fatal: unreachable',
      worktrees: [{branch: 'feat/cart', path: '/work/shop/feat-cart', dirty: false}],
    },
  ],
  clashesWith: [],
  lastFetched: {'shop-12345678': new Date(Date.now() - 7 * 60_000).toISOString()},
})

/** Services over rows kept in memory; `calls` records what the screen asked for. */
function memoryServices(overrides: Partial<DashboardServices> = {}) {
  const calls: string[] = []
  const local = [localRow('main', 0, false), localRow('feat', 59, false), localRow('fix', 7, false)]
  const services: DashboardServices = {
    async load(mode: DashboardMode) {
      calls.push(`load ${mode}`)
      return {rows: mode === 'local' ? local.map((row) => ({...row})) : [sandboxRow()], notes: []}
    },
    async up(name) {
      calls.push(`up ${name}`)
      local.find((row) => row.name === name)!.stack = {state: 'running', running: 1, total: 1}
      return `${name} is up`
    },
    async down(name) {
      calls.push(`down ${name}`)
      return `${name} is down`
    },
    planRemove: async (name, mode = 'local') =>
      `remove ${mode === 'local' ? '' : 'sandbox '}${name}: directory removed`,
    async remove(name, mode = 'local') {
      calls.push(`remove ${mode} ${name}`)
      return `removed ${name}`
    },
    async boxUp(name) {
      calls.push(`box up ${name}`)
      return `the box of ${name} is up`
    },
    checkName: nameProblem,
    async create(mode, name) {
      calls.push(`create ${mode} ${name}`)
      local.push(localRow(name, 33, false))
      return `created worktree ${name}`
    },
    details: async (name) => ({name, containers: [], logs: [], git: ['## wt/' + name], gitMore: 0, notes: []}),
    ...overrides,
  }
  return {services, calls}
}

/** Waits until the last frame satisfies `test` (Ink handles input asynchronously). */
async function frameWhere(app: {lastFrame(): string | undefined}, test: (frame: string) => boolean): Promise<string> {
  for (let waited = 0; waited < 3000; waited += 20) {
    const frame = app.lastFrame() ?? ''
    if (test(frame)) return frame
    await new Promise((resolve) => setTimeout(resolve, 20))
  }

  throw new Error(`no frame matched; the last one:\n${app.lastFrame()}`)
}

function mount(services: DashboardServices, exits: DashboardExit[] = []) {
  return render(
    createElement(DashboardApp, {services, initialMode: 'local', onExit: (exit: DashboardExit) => exits.push(exit)}),
  )
}

const selectedName = (app: {frames: string[]; lastFrame(): string | undefined}) => {
  const line = (app.lastFrame() ?? '').split('\n').find((text) => text.startsWith('›'))
  return line?.split(/\s+/, 2)[1]
}

describe('dashboard screen (DESIGN.md §6)', () => {
  it('shows the local rows with offset and ports; ↓/j/k move the selection; Tab shows sandboxes and returns', async () => {
    const {services} = memoryServices()
    const app = mount(services)
    const frame = await frameWhere(app, (text) => text.includes('fix'))
    expect(frame).to.match(/feat\s+wt\/feat\s+59 hash\s+WEB_PORT=3059\s+absent/)
    expect(selectedName(app)).to.equal('main')
    app.stdin.write(KEY.down)
    await frameWhere(app, () => selectedName(app) === 'feat')
    app.stdin.write('j')
    await frameWhere(app, () => selectedName(app) === 'fix')
    app.stdin.write('k')
    await frameWhere(app, () => selectedName(app) === 'feat')
    app.stdin.write(KEY.tab)
    const cluster = await frameWhere(app, (text) => text.includes('sbx'))
    expect(cluster).to.match(/sbx\s+podman\s+Running\s+12 label\s+shop: feat\/cart\s+shop stale 7m/)
    app.stdin.write(KEY.tab)
    await frameWhere(app, (text) => text.includes('local worktrees') && text.includes('feat'))
    app.unmount()
  })

  it('? shows the keys; q quits with 0 and Ctrl-C with 130', async () => {
    const exits: DashboardExit[] = []
    const app = mount(memoryServices().services, exits)
    await frameWhere(app, (text) => text.includes('feat'))
    app.stdin.write('?')
    await frameWhere(app, (text) => text.includes('x  remove (asks first)'))
    app.stdin.write('q')
    await frameWhere(app, () => exits.length === 1)
    expect(exits[0]).to.deep.include({kind: 'quit', code: 0})
    const again: DashboardExit[] = []
    const second = mount(memoryServices().services, again)
    await frameWhere(second, (text) => text.includes('feat'))
    second.stdin.write(KEY.ctrlC)
    await frameWhere(second, () => again.length === 1)
    expect(again[0]).to.deep.include({kind: 'quit', code: 130})
  })

  it('u brings the selected stack up with progress, and the row turns running; a failure shows in the status line', async () => {
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => (release = resolve))
    const {services, calls} = memoryServices()
    const slowUp = services.up
    services.up = async (name) => {
      await gate
      return slowUp(name)
    }

    services.down = async () => {
      throw Object.assign(new Error('port 3059 is busy'), {fix: 'stop what listens there'})
    }

    const app = mount(services)
    await frameWhere(app, (text) => text.includes('feat'))
    app.stdin.write('j')
    await frameWhere(app, () => selectedName(app) === 'feat')
    app.stdin.write('u')
    await frameWhere(app, (text) => text.includes('bringing up feat…'))
    // Input still works while the action runs.
    app.stdin.write('?')
    await frameWhere(app, (text) => text.includes('r  refresh now'))
    release()
    const after = await frameWhere(app, (text) => /feat\s+wt\/feat.*running 1\/1/.test(text))
    expect(after).to.include('feat is up')
    expect(calls).to.include('up feat')
    app.stdin.write('d')
    await frameWhere(app, (text) => text.includes('port 3059 is busy — fix: stop what listens there'))
    app.unmount()
  })

  it('x shows a refusal and removes nothing; a plan asks y/N, n declines and y removes', async () => {
    const {services, calls} = memoryServices({
      async planRemove(name) {
        if (name === 'feat')
          throw new Error('feat has unsaved work: 1 modified, 1 untracked, 1 commit on no remote branch')
        return `remove ${name}: directory removed, branch kept`
      },
    })
    const app = mount(services)
    await frameWhere(app, (text) => text.includes('feat'))
    app.stdin.write('x')
    await frameWhere(app, (text) => text.includes('the main checkout is never removed'))
    app.stdin.write('j')
    await frameWhere(app, () => selectedName(app) === 'feat')
    app.stdin.write('x')
    await frameWhere(app, (text) =>
      text.includes('remove feat refused: feat has unsaved work: 1 modified, 1 untracked, 1 commit'),
    )
    app.stdin.write('j')
    await frameWhere(app, () => selectedName(app) === 'fix')
    app.stdin.write('x')
    await frameWhere(app, (text) => text.includes('branch kept — remove fix? y/N'))
    app.stdin.write('n')
    await frameWhere(app, (text) => text.includes('remove fix: declined, nothing was changed'))
    app.stdin.write('x')
    await frameWhere(app, (text) => text.includes('remove fix? y/N'))
    app.stdin.write('y')
    await frameWhere(app, (text) => text.includes('removed fix'))
    expect(calls.filter((call) => call.startsWith('remove'))).to.deep.equal(['remove local fix'])
    app.unmount()
  })

  it('follows resizes through one subscription, keeps the selection, and cuts columns with an ellipsis', async () => {
    const app = mount(memoryServices().services)
    await frameWhere(app, (text) => text.includes('feat'))
    const listeners = app.stdout.listenerCount('resize')
    app.stdin.write('j')
    await frameWhere(app, () => selectedName(app) === 'feat')
    let columns = 40
    Object.defineProperty(app.stdout, 'columns', {get: () => columns, configurable: true})
    app.stdout.emit('resize')
    const narrow = await frameWhere(app, (text) => text.includes('…') && !text.includes('WEB_PORT=3059'))
    for (const line of narrow.replaceAll(/\u001B\[[0-9;]*m/g, '').split('\n')) expect(line.length).to.be.at.most(40)
    expect(selectedName(app)).to.match(/^fe/)
    columns = 100
    app.stdout.emit('resize')
    await frameWhere(app, (text) => text.includes('WEB_PORT=3059'))
    expect(selectedName(app)).to.equal('feat')
    app.stdin.write(KEY.tab)
    await frameWhere(app, (text) => text.includes('sbx'))
    expect(app.stdout.listenerCount('resize')).to.equal(listeners)
    app.unmount()
  })

  it('a slow gather is not started again on every tick; r refreshes on demand', async () => {
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => (release = resolve))
    const {services, calls} = memoryServices()
    const {load} = services
    services.load = async (mode) => {
      await gate
      return load(mode)
    }

    const app = render(createElement(DashboardApp, {services, initialMode: 'local', intervalMs: 20, onExit() {}}))
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(calls.filter((call) => call === 'load local')).to.have.length(0)
    release()
    await frameWhere(app, (text) => text.includes('feat'))
    const before = calls.length
    expect(before).to.be.at.most(2)
    app.stdin.write('r')
    await frameWhere(app, () => calls.length > before)
    app.unmount()
  })

  it('/ filters the rows by name or branch as you type; Esc clears the filter', async () => {
    const app = mount(memoryServices().services)
    await frameWhere(app, (text) => text.includes('fix'))
    app.stdin.write('/')
    await frameWhere(app, (text) => text.includes('filter: type'))
    app.stdin.write('fe')
    const filtered = await frameWhere(app, (text) => text.includes('/fe') && !/^\s+fix\s/m.test(text))
    expect(filtered).to.match(/^› feat\s/m)
    expect(filtered).not.to.match(/^\s+main\s/m)
    app.stdin.write('\r')
    await frameWhere(app, (text) => !text.includes('filter: type'))
    app.stdin.write('j')
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(selectedName(app)).to.equal('feat')
    app.stdin.write('/')
    await frameWhere(app, (text) => text.includes('filter: type'))
    app.stdin.write('\u001B')
    await frameWhere(app, (text) => /^\s+fix\s/m.test(text) && /main\s+main/.test(text))
    app.unmount()
  })

  it('Enter opens the detail pane of the selected row and closes it', async () => {
    const app = mount(memoryServices().services)
    await frameWhere(app, (text) => text.includes('fix'))
    app.stdin.write('j')
    await frameWhere(app, () => selectedName(app) === 'feat')
    app.stdin.write('\r')
    const shown = await frameWhere(app, (text) =>
      text.includes('feat — project app-feat, offset 59 (hash), clashes: none'),
    )
    expect(shown).to.include('path /src/app-worktrees/feat')
    expect(shown).to.include('git status: 0 modified, 0 untracked')
    app.stdin.write('\r')
    await frameWhere(app, (text) => !text.includes('project app-feat'))
    app.unmount()
  })

  it('tableLines narrows the widest column first and never exceeds the width', () => {
    const rows = [localRow('main', 0, true), localRow('a-very-long-worktree-name-indeed', 33, false)]
    const wide = tableLines(LOCAL_COLUMNS, rows)
    const narrow = tableLines(LOCAL_COLUMNS, rows, 60)
    expect(wide[2]).to.include('a-very-long-worktree-name-indeed')
    for (const line of narrow) expect(line.length).to.be.at.most(60)
    expect(narrow[2]).to.match(/^a-very\S*…/)
  })
})

describe('dashboard screen: rows that do not fit scroll (DESIGN.md §6)', () => {
  /** Services over main and `count` worktrees w01…; boxes absent. */
  const manyRows = (count: number) =>
    memoryServices({
      load: async () => ({
        rows: [
          localRow('main', 0, false),
          ...Array.from({length: count}, (_, index) =>
            localRow(`w${String(index + 1).padStart(2, '0')}`, index + 1, false),
          ),
        ],
        notes: [],
      }),
    })

  /** Mounts the screen on a terminal of `rows`×`columns` (the size comes through a resize, as on a terminal). */
  async function mountSized(services: DashboardServices, rows: number, columns: number, exits: DashboardExit[] = []) {
    const app = mount(services, exits)
    Object.defineProperties(app.stdout, {
      columns: {get: () => columns, configurable: true},
      rows: {get: () => rows, configurable: true},
    })
    app.stdout.emit('resize')
    return app
  }

  /** The frame's lines, colours removed, trailing blank lines kept (the screen is rows - 1 high). */
  const frameLines = (frame: string) => frame.replaceAll(/\u001B\[[0-9;]*m/g, '').split('\n')

  it('50 rows at 40 lines: title, header, a window of rows, "↓ N more" and the status line; ↓ scrolls and the selection stays on screen', async () => {
    const app = await mountSized(manyRows(50).services, 40, 120)
    const first = frameLines(await frameWhere(app, (text) => text.includes('↓') && text.includes('w01')))
    expect(first.length).to.be.at.most(39)
    expect(first[0]).to.match(/^yard dashboard — local worktrees/)
    expect(first[1]).to.match(/^ {2}NAME\s+BRANCH/)
    expect(first[2]).to.match(/^› main\s/)
    const shown = first.filter((line) => /^[› ] (main|w\d\d)\s/.test(line)).length
    expect(shown).to.be.at.least(30)
    expect(first).to.include(`  ↓ ${51 - shown} more`)
    for (let index = 1; index <= 50; index++) {
      app.stdin.write('j')
      const name = `w${String(index).padStart(2, '0')}`
      const lines = frameLines(await frameWhere(app, () => selectedName(app) === name))
      expect(lines.length, `at ${name}`).to.be.at.most(39)
      expect(lines[0], `at ${name}`).to.match(/^yard dashboard/)
      expect(lines[1], `at ${name}`).to.match(/^ {2}NAME/)
      // The rows on screen are consecutive, and as many as before.
      const visible = lines
        .filter((line) => /^[› ] (main|w\d\d)\s/.test(line))
        .map((line) => line.slice(2).split(/\s+/, 1)[0])
      expect(visible, `at ${name}`).to.have.length(shown)
      expect(visible, `at ${name}`).to.include(name)
    }

    const bottom = frameLines(app.lastFrame() ?? '')
    expect(bottom).to.include(`  ↑ ${51 - shown} more`)
    expect(bottom.some((line) => line.startsWith('› w50'))).to.equal(true)
    // Back up: the window follows at its top edge.
    for (let index = 0; index < shown; index++) app.stdin.write('k')
    const up = frameLines(await frameWhere(app, () => selectedName(app) === `w${String(50 - shown).padStart(2, '0')}`))
    expect(up.find((line) => /^[› ] (main|w\d\d)\s/.test(line))).to.match(/^› /)
    expect(up.some((line) => /^ {2}↑ \d+ more {2}↓ \d+ more$/.test(line))).to.equal(true)
    app.unmount()
  })

  it('a tiny height (6) with 4 rows still shows the selected row and the header, each line whole, no text left over', async () => {
    const app = await mountSized(manyRows(3).services, 6, 100)
    const known = (line: string) =>
      line === '' ||
      /^yard dashboard — local worktrees {2}\(Tab: cluster, \? help, q quit\)$/.test(line) ||
      /^ {2}NAME\s+BRANCH.*GIT$/.test(line) ||
      /^[› ] (main|w0\d)\s+\S+\s+\d+ (main|hash)/.test(line) ||
      /^ {2}(↑ \d+ more)?( {2})?(↓ \d+ more)?$/.test(line)
    for (const [key, name] of [
      ['', 'main'],
      ['j', 'w01'],
      ['j', 'w02'],
      ['j', 'w03'],
      ['k', 'w02'],
      ['k', 'w01'],
      ['k', 'main'],
    ]) {
      if (key) app.stdin.write(key)
      const lines = frameLines(await frameWhere(app, () => selectedName(app) === name))
      expect(lines.length, lines.join('\n')).to.be.at.most(5)
      for (const line of lines) expect(known(line), `"${line}" in\n${lines.join('\n')}`).to.equal(true)
      expect(lines.filter((line) => line.startsWith('  NAME'))).to.have.length(1)
    }

    app.unmount()
  })

  it('the detail pane and the help are cut to fit, the selected row staying on screen', async () => {
    const app = await mountSized(manyRows(50).services, 20, 100)
    await frameWhere(app, (text) => text.includes('w01'))
    for (let index = 0; index < 30; index++) app.stdin.write('j')
    await frameWhere(app, () => selectedName(app) === 'w30')
    app.stdin.write('\r')
    app.stdin.write('?')
    const lines = frameLines(
      await frameWhere(app, (text) => text.includes('w30 — project') && /… \d+ more lines/.test(text)),
    )
    expect(lines.length).to.be.at.most(19)
    expect(lines[0]).to.match(/^yard dashboard/)
    expect(lines.some((line) => line.startsWith('› w30'))).to.equal(true)
    app.unmount()
  })
})

describe('dashboard screen: e', () => {
  it('e on a row without a box stays on the screen and says how to make one; on a row with a box it hands over', async () => {
    const exits: DashboardExit[] = []
    const {services} = memoryServices()
    const {load} = services
    services.load = async (mode) => {
      const loaded = await load(mode)
      if (mode === 'local') (loaded.rows as LocalRow[])[2].box = {state: 'running', running: 1, total: 1}
      return loaded
    }

    const app = mount(services, exits)
    await frameWhere(app, (text) => text.includes('fix'))
    app.stdin.write('e')
    await frameWhere(app, (text) => text.includes('no box for main: run yard box up (u starts only the stack)'))
    app.stdin.write('j')
    await frameWhere(app, () => selectedName(app) === 'feat')
    app.stdin.write('e')
    await frameWhere(app, (text) => text.includes('no box for feat: run yard box up --worktree feat'))
    expect(exits).to.deep.equal([])
    app.stdin.write('j')
    await frameWhere(app, () => selectedName(app) === 'fix')
    app.stdin.write('e')
    await frameWhere(app, () => exits.length === 1)
    expect(exits[0]).to.deep.include({kind: 'shell', name: 'fix', mode: 'local', selected: 2})
    app.unmount()
  })
})

describe('docs/dashboard.md keys', () => {
  it('the keys table names the keys of the ? screen, in the same order', async () => {
    const app = mount(memoryServices().services)
    await frameWhere(app, (text) => text.includes('fix'))
    app.stdin.write('?')
    const frame = await frameWhere(app, (text) => text.includes('this help'))
    app.unmount()
    // The ? screen: each line is one or two `KEY  what` entries, 3 or more spaces apart.
    const start = frame.split('\n').findIndex((line) => line.startsWith(HELP_LINES[0].split('  ', 1)[0]))
    const shown = frame.split('\n').slice(start, start + HELP_LINES.length)
    const helpKeys = shown.flatMap((line) => line.trimEnd().split(/ {3,}/)).map((entry) => entry.split('  ', 1)[0])
    const doc = readFileSync(path.join(projectRoot, 'docs', 'dashboard.md'), 'utf8')
    const section = doc.slice(doc.indexOf('\n## Keys\n'), doc.indexOf('\n## ', doc.indexOf('\n## Keys\n') + 1))
    const docKeys = section
      .split('\n')
      .filter((line) => line.startsWith('| ') && !line.startsWith('| key |'))
      .map((line) => line.split(' | ', 1)[0].slice(2).replaceAll('`', '').trim())
    expect(helpKeys).to.include('n')
    expect(docKeys).to.deep.equal(helpKeys)
  })
})
