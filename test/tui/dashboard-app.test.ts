/**
 * The dashboard screen's keys and rendering (DESIGN.md §6) with ink-testing-library: rows,
 * selection, Tab between modes, help, actions with progress and refusals in the status line,
 * quitting with 0 or (Ctrl-C) 130, one resize subscription, and columns cut with an ellipsis.
 */
import {expect} from 'chai'
import {render} from 'ink-testing-library'
import {createElement} from 'react'

import type {ClusterRow, DashboardMode, LocalRow} from '../../src/core/dashboard.js'
import {nameProblem} from '../../src/core/identity.js'
import {DashboardApp, DashboardExit, DashboardServices} from '../../src/tui/dashboard-app.js'
import {LOCAL_COLUMNS, tableLines} from '../../src/tui/dashboard-table.js'

const KEY = {down: '\u001B[B', up: '\u001B[A', tab: '\t', ctrlC: '\u0003'}

function localRow(name: string, offset: number, running: boolean): LocalRow {
  return {
    name, branch: name === 'main' ? 'main' : `wt/${name}`, path: `/src/app-worktrees/${name}`, head: 'a'.repeat(40), base: null, offset,
    offsetSource: name === 'main' ? 'main' : 'hash', project: `app-${name}`, dirty: {modified: 0, untracked: 0}, ahead: 0, behind: 0, missing: false, locked: false,
    ports: {WEB_PORT: 3000 + offset}, clashesWith: [], stack: running ? {state: 'running', running: 1, total: 1} : {state: 'absent', running: 0, total: 0}, box: {state: 'absent', running: 0, total: 0},
  }
}

/** A sandbox whose cache last fetched 7 minutes before the call. */
const sandboxRow = (): ClusterRow => ({
  name: 'sbx', project: 'app-sbx', runtime: 'podman', phase: 'Running', offset: 12, offsetSource: 'label', ports: {WEB_PORT: 3012},
  repos: [{slot: 'shop', identity: '/up/shop', key: 'shop-12345678', stale: true, worktrees: [{branch: 'feat/cart', path: '/work/shop/feat-cart', dirty: false}]}],
  clashesWith: [], lastFetched: {'shop-12345678': new Date(Date.now() - 7 * 60_000).toISOString()},
})

/** Services over rows kept in memory; `calls` records what the screen asked for. */
function memoryServices(overrides: Partial<DashboardServices> = {}) {
  const calls: string[] = []
  const local = [localRow('main', 0, false), localRow('feat', 59, false), localRow('fix', 7, false)]
  const services: DashboardServices = {
    load: async (mode: DashboardMode) => {
      calls.push(`load ${mode}`)
      return {rows: mode === 'local' ? local.map((row) => ({...row})) : [sandboxRow()], notes: []}
    },
    up: async (name) => {
      calls.push(`up ${name}`)
      local.find((row) => row.name === name)!.stack = {state: 'running', running: 1, total: 1}
      return `${name} is up`
    },
    down: async (name) => {
      calls.push(`down ${name}`)
      return `${name} is down`
    },
    planRemove: async (name) => `remove ${name}: directory removed`,
    remove: async (name) => {
      calls.push(`remove ${name}`)
      return `removed ${name}`
    },
    checkName: nameProblem,
    create: async (mode, name) => {
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
  return render(createElement(DashboardApp, {services, initialMode: 'local', onExit: (exit: DashboardExit) => exits.push(exit)}))
}

const selectedName = (app: {frames: string[]; lastFrame(): string | undefined}) => {
  const line = (app.lastFrame() ?? '').split('\n').find((text) => text.startsWith('›'))
  return line?.split(/\s+/)[1]
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
      planRemove: async (name) => {
        if (name === 'feat') throw new Error('feat has unsaved work: 1 modified, 1 untracked, 1 commit on no remote branch')
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
    await frameWhere(app, (text) => text.includes('remove feat refused: feat has unsaved work: 1 modified, 1 untracked, 1 commit'))
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
    expect(calls.filter((call) => call.startsWith('remove'))).to.deep.equal(['remove fix'])
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
    const narrow = await frameWhere(app, (text) => text.includes('…') && !/WEB_PORT=3059/.test(text))
    for (const line of narrow.replace(/\u001B\[[0-9;]*m/g, '').split('\n')) expect(line.length).to.be.at.most(40)
    expect(selectedName(app)).to.match(/^fe/)
    columns = 100
    app.stdout.emit('resize')
    await frameWhere(app, (text) => /WEB_PORT=3059/.test(text))
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
    const load = services.load
    services.load = async (mode) => {
      await gate
      return load(mode)
    }
    const app = render(createElement(DashboardApp, {services, initialMode: 'local', intervalMs: 20, onExit: () => {}}))
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
    const shown = await frameWhere(app, (text) => text.includes('feat — project app-feat, offset 59 (hash), clashes: none'))
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
