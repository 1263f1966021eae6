/**
 * The dashboard's keys and status line beyond the basics (docs/dashboard.md "Keys"), with
 * ink-testing-library: questions and refusals that keep their end at 80 columns, cluster mode's
 * `x` and the keys that do not apply there, Esc, where the selection goes, natural order, the
 * status line fading, `l`, `b`. The screen rules alone are table-driven below, without Ink.
 */
import {expect} from 'chai'
import {render} from 'ink-testing-library'
import {createElement} from 'react'

import type {DashboardMode} from '../../src/core/dashboard/dashboard.js'

import {DashboardApp, type DashboardExit, type DashboardServices} from '../../src/tui/dashboard-app.js'
import {shellBanner} from '../../src/tui/dashboard-run.js'
import {
  filterRows,
  keyNotApplying,
  selectionIn,
  sortRows,
  statusLayout,
  wrapText,
} from '../../src/tui/dashboard-view.js'
import {LONG_PLAN, LONG_REFUSAL, memoryServices, sandboxRow} from '../support/dashboard-memory.js'

const plain = (text: string) => text.replaceAll(/\u001B\[[0-9;]*m/g, '')

async function frameWhere(
  app: {lastFrame(): string | undefined},
  test: (frame: string) => boolean,
  budgetMs = 3000,
): Promise<string> {
  for (let waited = 0; waited < budgetMs; waited += 20) {
    const frame = plain(app.lastFrame() ?? '')
    if (test(frame)) return frame
    await new Promise((resolve) => setTimeout(resolve, 20))
  }

  throw new Error(`no frame matched; the last one:\n${plain(app.lastFrame() ?? '')}`)
}

function mount(
  services: DashboardServices,
  options: {mode?: DashboardMode; columns?: number; rows?: number; fadeMs?: number; exits?: DashboardExit[]} = {},
) {
  const exits = options.exits ?? []
  const app = render(
    createElement(DashboardApp, {
      services,
      initialMode: options.mode ?? 'local',
      statusFadeMs: options.fadeMs ?? 0,
      onExit: (exit: DashboardExit) => exits.push(exit),
    }),
  )
  Object.defineProperties(app.stdout, {
    columns: {get: () => options.columns ?? 100, configurable: true},
    rows: {get: () => options.rows ?? 30, configurable: true},
  })
  app.stdout.emit('resize')
  return app
}

const selectedName = (frame: string) =>
  frame
    .split('\n')
    .find((line) => line.startsWith('›'))
    ?.split(/\s+/, 2)[1]
const rowNames = (frame: string) =>
  frame
    .split('\n')
    .filter((line) => /^[› ] (main|w\d+|sbx|extra)\s/.test(line))
    .map((line) => line.split(/\s+/, 2)[1])
const lastLines = (frame: string, count: number) => frame.trimEnd().split('\n').slice(-count)

describe('dashboard: questions and refusals keep their end', () => {
  it('at 80 columns the y/N of a long plan is on screen, every line within 80 columns', async () => {
    const app = mount(memoryServices().services, {columns: 80, rows: 24})
    await frameWhere(app, (text) => selectedName(text) === 'main')
    app.stdin.write('jj')
    await frameWhere(app, (text) => selectedName(text) === 'w2')
    app.stdin.write('x')
    const frame = await frameWhere(app, (text) => text.includes('y/N'))
    for (const line of frame.split('\n')) expect(line.length, line).to.be.at.most(80)
    const status = lastLines(frame, 2).join(' ')
    expect(status).to.match(/remove w2\? y\/N$/)
    // Nothing of the plan is lost: its words are all on the screen, in order.
    expect(
      frame
        .split('\n')
        .map((line) => line.trim())
        .join(' '),
    ).to.include(LONG_PLAN.slice(-40))
    app.stdin.write('y')
    await frameWhere(app, (text) => text.includes('removed w2; its branch is kept'))
    app.unmount()
  })

  it('a refusal longer than the status line is shown whole in a pane, the status line ending with its fix', async () => {
    const app = mount(memoryServices().services, {columns: 80, rows: 24})
    await frameWhere(app, (text) => selectedName(text) === 'main')
    app.stdin.write('jjj')
    await frameWhere(app, (text) => selectedName(text) === 'w10')
    app.stdin.write('x')
    const frame = await frameWhere(app, (text) => text.includes('message:'))
    expect(lastLines(frame, 1)[0]).to.match(/--force$/)
    const pane = frame
      .split('\n')
      .slice(frame.split('\n').indexOf('message:') + 1)
      .map((line) => line.trim())
    expect(pane.join(' ')).to.include(`remove w10 refused: ${LONG_REFUSAL}`)
    app.unmount()
  })
})

describe('dashboard: cluster mode', () => {
  it('x removes the selected sandbox after y/N; a refusal removes nothing', async () => {
    const {services, calls} = memoryServices()
    const app = mount(services, {mode: 'cluster'})
    await frameWhere(app, (text) => selectedName(text) === 'sbx')
    app.stdin.write('x')
    await frameWhere(app, (text) =>
      text.includes(
        'remove sandbox sbx: pod app-sbx, lease sandbox app-sbx on the cache app-12345678 — remove sbx? y/N',
      ),
    )
    app.stdin.write('y')
    await frameWhere(app, (text) => text.includes('removed sandbox sbx'))
    expect(calls).to.deep.equal(['remove cluster sbx'])
    app.unmount()
    const refusing = memoryServices(
      {},
      {load: async (mode) => ({rows: mode === 'cluster' ? [sandboxRow('dirty', 5)] : [], notes: []})},
    )
    const second = mount(refusing.services, {mode: 'cluster'})
    await frameWhere(second, (text) => selectedName(text) === 'dirty')
    second.stdin.write('x')
    await frameWhere(second, (text) =>
      text.includes('remove dirty refused: the sandbox dirty holds unsaved work: app/wt-dirty: 1 modified'),
    )
    second.stdin.write('y')
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(refusing.calls).to.deep.equal([])
    second.unmount()
  })

  it('u, d, b and l say in the status line why they do not apply; an empty screen says n makes a sandbox', async () => {
    const {services, calls} = memoryServices({emptyCluster: true})
    const app = mount(services, {mode: 'cluster'})
    await frameWhere(app, (text) => text.includes('no sandboxes: n makes one'))
    for (const [key, said] of [
      ['u', 'u: a sandbox has no stack to start'],
      ['d', 'd: a sandbox has no stack to stop'],
      ['b', 'b: a sandbox is its own box'],
      ['l', 'l: sandboxes have no stack logs here'],
    ]) {
      app.stdin.write(key)
      await frameWhere(app, (text) => text.includes(said))
    }

    app.stdin.write('x')
    await frameWhere(app, (text) => text.includes('x: there is no row selected (n makes a sandbox)'))
    expect(calls).to.deep.equal([])
    app.unmount()
  })
})

describe('dashboard: keys and the selection', () => {
  it('Esc closes the help', async () => {
    const app = mount(memoryServices().services)
    await frameWhere(app, (text) => selectedName(text) === 'main')
    app.stdin.write('?')
    await frameWhere(app, (text) => text.includes('remove (asks first)'))
    app.stdin.write('\u001B')
    await frameWhere(app, (text) => !text.includes('remove (asks first)'))
    app.unmount()
  })

  it('rows come in natural order, main first: w1, w2, w10', async () => {
    const app = mount(memoryServices().services)
    expect(rowNames(await frameWhere(app, (text) => text.includes('w10')))).to.deep.equal(['main', 'w1', 'w2', 'w10'])
    app.unmount()
  })

  it('the selection survives a filter and its clearing, and follows a row just made', async () => {
    const app = mount(memoryServices().services)
    await frameWhere(app, (text) => selectedName(text) === 'main')
    app.stdin.write('jjj')
    await frameWhere(app, (text) => selectedName(text) === 'w10')
    app.stdin.write('/w1')
    const filtered = await frameWhere(app, (text) => text.includes('/w1') && !text.includes(' w2 '))
    expect(rowNames(filtered)).to.deep.equal(['w1', 'w10'])
    expect(selectedName(filtered)).to.equal('w10')
    app.stdin.write('\u001B')
    const cleared = await frameWhere(app, (text) => rowNames(text).length === 4)
    expect(selectedName(cleared)).to.equal('w10')
    app.stdin.write('n')
    app.stdin.write('extra')
    await frameWhere(app, (text) => text.includes('✓ Enter creates worktree extra'))
    app.stdin.write('\r')
    const made = await frameWhere(
      app,
      (text) => text.includes('created worktree extra') && rowNames(text).includes('extra'),
    )
    expect(selectedName(made)).to.equal('extra')
    app.unmount()
  })

  it('an outcome fades from the status line; a question stays', async () => {
    const app = mount(memoryServices().services, {fadeMs: 300})
    await frameWhere(app, (text) => selectedName(text) === 'main')
    app.stdin.write('u')
    await frameWhere(app, (text) => text.includes('main is up'))
    await frameWhere(app, (text) => !text.includes('main is up'), 2000)
    app.stdin.write('j')
    await frameWhere(app, (text) => selectedName(text) === 'w1')
    app.stdin.write('x')
    await frameWhere(app, (text) => text.includes('remove w1? y/N'))
    await new Promise((resolve) => setTimeout(resolve, 700))
    expect(plain(app.lastFrame() ?? '')).to.include('remove w1? y/N')
    app.unmount()
  })

  it("b starts the selected row's box; l leaves to follow its logs", async () => {
    const exits: DashboardExit[] = []
    const {services, calls} = memoryServices()
    const app = mount(services, {exits})
    await frameWhere(app, (text) => selectedName(text) === 'main')
    app.stdin.write('jj')
    await frameWhere(app, (text) => selectedName(text) === 'w2')
    app.stdin.write('b')
    await frameWhere(app, (text) => text.includes('the box of w2 is up'))
    expect(calls).to.deep.equal(['box up w2'])
    app.stdin.write('l')
    await frameWhere(app, () => exits.length === 1)
    expect(exits[0]).to.deep.include({kind: 'logs', name: 'w2', mode: 'local'})
    app.unmount()
  })

  it('e says which box the shell is in and that exit returns', () => {
    expect(shellBanner('local', 'feat')).to.equal(
      'yard: a shell in the box of feat; type exit to return to the dashboard',
    )
    expect(shellBanner('cluster', 'sbx')).to.equal(
      'yard: a shell in the sandbox sbx; type exit to return to the dashboard',
    )
  })
})

describe('dashboard screen rules (no terminal)', () => {
  const rows = (...names: string[]) => names.map((name) => ({name, branch: `wt/${name}`}))
  const sorts: Array<[string[], string[]]> = [
    [
      ['w10', 'main', 'w2', 'w1'],
      ['main', 'w1', 'w2', 'w10'],
    ],
    [
      ['b', 'a10', 'a9', 'main'],
      ['main', 'a9', 'a10', 'b'],
    ],
    [
      ['feat-2', 'feat-10', 'feat-1'],
      ['feat-1', 'feat-2', 'feat-10'],
    ],
  ]
  for (const [given, sorted] of sorts) {
    it(`sorts ${given.join(' ')} as ${sorted.join(' ')}`, () =>
      expect(sortRows(rows(...given), 'local').map((row) => row.name)).to.deep.equal(sorted))
  }

  const selections: Array<[string, string[], string | undefined, number, number]> = [
    ['the named row where it is now', ['main', 'w1', 'w10'], 'w10', 0, 2],
    ['the same index when the name is gone', ['main', 'w1'], 'w10', 1, 1],
    ['the last row when the index is past it', ['main'], 'gone', 3, 0],
    ['0 for no rows', [], 'w1', 2, 0],
  ]
  for (const [what, names, name, index, expected] of selections) {
    it(`selection: ${what}`, () => expect(selectionIn(rows(...names), name, index)).to.equal(expected))
  }

  it('filters by name or branch', () => {
    expect(
      filterRows(
        [
          {name: 'a', branch: 'feature/x'},
          {name: 'b', branch: 'main'},
        ],
        'feat',
      ).map((row) => row.name),
    ).to.deep.equal(['a'])
  })

  const keys: Array<[DashboardMode, string, boolean]> = [
    ['cluster', 'u', true],
    ['cluster', 'd', true],
    ['cluster', 'b', true],
    ['cluster', 'l', true],
    ['cluster', 'x', false],
    ['cluster', 'e', false],
    ['local', 'u', false],
    ['local', 'l', false],
  ]
  for (const [mode, key, refused] of keys) {
    it(`${key} in ${mode} mode ${refused ? 'says why it does not apply' : 'applies'}`, () =>
      expect(keyNotApplying(mode, key) !== undefined).to.equal(refused))
  }

  it('wraps at spaces and cuts a word longer than the width', () => {
    expect(wrapText('aaa bbb ccc', 7)).to.deep.equal(['aaa bbb', 'ccc'])
    expect(wrapText('abcdefghij', 4)).to.deep.equal(['abcd', 'efgh', 'ij'])
  })

  it('a status message keeps its last lines; one longer than three lines goes whole into a pane', () => {
    expect(statusLayout('short', 80)).to.deep.equal({lines: ['short'], pane: []})
    const long = statusLayout(Array.from({length: 40}, (_, index) => `word${index}`).join(' ') + ' y/N', 40)
    expect(long.lines).to.have.length(3)
    expect(long.lines.at(-1)).to.match(/y\/N$/)
    expect(long.pane[0]).to.equal('message:')
    expect(long.pane.slice(1).join(' ').replaceAll(/\s+/g, ' ').trim()).to.match(/^word0 .* word39 y\/N$/)
  })
})
