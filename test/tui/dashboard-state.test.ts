/**
 * The dashboard's reducer without Ink (docs/dashboard.md "Keys"): every key of the help screen in
 * every phase (browse, naming, confirming, filtering) and both modes, table-driven; then the
 * events that are not keys (rows loaded, work done, a fade) and the window following the selection.
 */
import {expect} from 'chai'

import type {DashboardMode} from '../../src/core/dashboard/dashboard.js'

import {nameProblem} from '../../src/core/identity/identity.js'
import {
  BINDINGS,
  type DashboardEvent,
  type DashboardState,
  type Effect,
  initialState,
  type Keypress,
  type Phase,
  reduce,
  type Step,
} from '../../src/tui/dashboard-state.js'
import {HELP_KEYS, KEY_TABLE, keyNotApplying} from '../../src/tui/dashboard-view.js'
import {localRow, sandboxRow} from '../support/dashboard-memory.js'

const context = {checkName: (name: string) => nameProblem(name)}
const MODES: DashboardMode[] = ['local', 'cluster']
const other = (mode: DashboardMode): DashboardMode => (mode === 'local' ? 'cluster' : 'local')
/** The rows on screen: the middle one is selected. */
const names = (mode: DashboardMode) => (mode === 'local' ? ['main', 'w1', 'w2'] : ['s1', 's2', 's3'])
const picked = (mode: DashboardMode) => names(mode)[1]

function stateIn(
  mode: DashboardMode,
  phase: Phase = {kind: 'browse'},
  extra: Partial<DashboardState> = {},
): DashboardState {
  const rows = {
    local: names('local').map((name, index) => localRow(name, index)),
    cluster: names('cluster').map((name, index) => sandboxRow(name, 10 + index)),
  }
  return {
    ...initialState(mode, 1, {columns: 100, rows: 30}),
    rows,
    selection: {index: 1, name: picked(mode)},
    status: '',
    phase,
    ...extra,
  }
}

/** The presses of each key of the help screen, as Ink reports them. */
const PRESSES: Record<string, Keypress[]> = {
  '↑/↓ j/k': [{input: '', downArrow: true}, {input: '', upArrow: true}, {input: 'j'}, {input: 'k'}],
  Tab: [{input: '', tab: true}],
  Enter: [{input: '\r', return: true}],
  'Ctrl-C': [{input: 'c', ctrl: true}],
  ...Object.fromEntries(['n', 'u', 'd', 'b', 'l', 'x', 'e', 'r', '/', '?', 'q'].map((key) => [key, [{input: key}]])),
}

/** What a step must show: fields of the next state, and its effects (fades aside; they are checked below). */
interface Outcome {
  state?: Partial<DashboardState>
  effects?: Effect[]
  /** The state is the one before. */
  unchanged?: true
}

const exit = (mode: DashboardMode, kind: 'quit' | 'shell' | 'logs', code?: number): Effect => ({
  kind: 'exit',
  exit: kind === 'quit' ? {kind, code: code!, mode, selected: 1} : {kind, name: picked(mode), mode, selected: 1},
})
const selecting = (mode: DashboardMode, index: number) => ({selection: {index, name: names(mode)[index]}})
const notHere = (mode: DashboardMode, key: string): Outcome | undefined =>
  mode === 'cluster' ? {state: {status: keyNotApplying(mode, key)}} : undefined
const run = (mode: DashboardMode, work: string, verb: string): Outcome => ({
  state: {status: `${verb} ${picked(mode)}…`},
  effects: [{kind: 'run', work: work as 'up', name: picked(mode), mode}],
})

const BROWSE = (key: string, press: Keypress, mode: DashboardMode): Outcome => {
  switch (key) {
    case '↑/↓ j/k': {
      return {state: selecting(mode, press.downArrow || press.input === 'j' ? 2 : 0)}
    }

    case 'Tab': {
      return {state: {mode: other(mode), selection: {index: 0}, details: undefined}}
    }

    case 'Enter': {
      return {
        state: {details: {name: picked(mode)}},
        effects: mode === 'local' ? [{kind: 'details', name: picked(mode)}] : [],
      }
    }

    case 'n': {
      return {state: {phase: {kind: 'naming', text: ''}, status: '✗ type a name'}}
    }

    case 'u': {
      return notHere(mode, 'u') ?? run(mode, 'up', 'bringing up')
    }

    case 'd': {
      return notHere(mode, 'd') ?? run(mode, 'down', 'bringing down')
    }

    case 'b': {
      return notHere(mode, 'b') ?? run(mode, 'boxUp', 'starting the box of')
    }

    case 'l': {
      return notHere(mode, 'l') ?? {effects: [exit(mode, 'logs')]}
    }

    case 'x': {
      return {
        state: {status: `planning the removal of ${picked(mode)}…`},
        effects: [{kind: 'plan', name: picked(mode), mode}],
      }
    }

    case 'e': {
      return {effects: [exit(mode, 'shell')]}
    }

    case 'r': {
      return {
        state: {status: 'refreshing…', loading: {local: mode === 'local', cluster: mode === 'cluster'}},
        effects: [{kind: 'load', mode, announce: true}],
      }
    }

    case '/': {
      return {state: {phase: {kind: 'filtering'}, status: 'filter: type, Enter keeps it, Esc clears it'}}
    }

    case '?': {
      return {state: {help: true}}
    }

    case 'q': {
      return {effects: [exit(mode, 'quit', 0)]}
    }

    case 'Ctrl-C': {
      return {effects: [exit(mode, 'quit', 130)]}
    }
  }

  throw new Error(`no expectation for ${key}`)
}

const typedName = (mode: DashboardMode) => (mode === 'local' ? 'w3' : 's4')
const NAMING = (key: string, press: Keypress, mode: DashboardMode): Outcome => {
  if (key === 'Ctrl-C') return {effects: [exit(mode, 'quit', 130)]}
  if (key === 'Enter')
    return {
      state: {
        phase: {kind: 'browse'},
        status: `creating ${mode === 'local' ? 'worktree' : 'sandbox'} ${typedName(mode)}…`,
      },
      effects: [{kind: 'run', work: 'create', name: typedName(mode), mode}],
    }
  // Arrows and Tab type nothing; every other key is a character of the name.
  if (press.input === '') return {unchanged: true}
  return {state: {phase: {kind: 'naming', text: typedName(mode) + press.input}}}
}

const CONFIRMING = (key: string, _press: Keypress, mode: DashboardMode): Outcome => {
  if (key === 'Ctrl-C') return {effects: [exit(mode, 'quit', 130)]}
  return {state: {phase: {kind: 'browse'}, status: `remove ${picked(mode)}: declined, nothing was changed`}}
}

const FILTERING = (key: string, press: Keypress, mode: DashboardMode): Outcome => {
  if (key === 'Ctrl-C') return {effects: [exit(mode, 'quit', 130)]}
  if (key === 'Enter') return {state: {phase: {kind: 'browse'}, filter: '', status: ''}}
  if (press.input === '') return {unchanged: true}
  return {state: {phase: {kind: 'filtering'}, filter: press.input}}
}

const PHASES: Array<{phase: (mode: DashboardMode) => Phase; expect: typeof BROWSE}> = [
  {phase: () => ({kind: 'browse'}), expect: BROWSE},
  {phase: (mode) => ({kind: 'naming', text: typedName(mode)}), expect: NAMING},
  {phase: (mode) => ({kind: 'confirming', name: picked(mode), mode}), expect: CONFIRMING},
  {phase: () => ({kind: 'filtering'}), expect: FILTERING},
]

const withoutFades = (step: Step) => step.effects.filter((effect) => effect.kind !== 'fade')
const label = (press: Keypress) => JSON.stringify(press)

describe('dashboard reducer: every key of the help screen in every phase and mode (docs/dashboard.md)', () => {
  it('the key table, its bindings, the presses here and the help screen name the same keys', () => {
    const keys = KEY_TABLE.map((entry) => entry.key)
    expect(Object.keys(BINDINGS)).to.have.members(keys)
    expect(Object.keys(PRESSES)).to.have.members(keys)
    expect(HELP_KEYS.map(([key]) => key)).to.deep.equal(keys)
  })

  for (const {phase, expect: expected} of PHASES) {
    for (const mode of MODES) {
      for (const {key} of KEY_TABLE) {
        for (const press of PRESSES[key]) {
          it(`${phase(mode).kind}, ${mode}: ${key} ${label(press)}`, () => {
            const before = stateIn(mode, phase(mode))
            const step = reduce(before, {type: 'key', press}, context)
            const outcome = expected(key, press, mode)
            if (outcome.unchanged) expect(step.state).to.equal(before)
            else expect(step.state).to.deep.include({...outcome.state})
            expect(withoutFades(step)).to.deep.equal(outcome.effects ?? [])
          })
        }
      }
    }
  }
})

describe('dashboard reducer: keys beyond the help screen, and rows that are not there', () => {
  const key = (press: Keypress): DashboardEvent => ({type: 'key', press})

  it('Esc closes the help, cancels the prompt, declines a removal and clears the filter', () => {
    const esc = key({input: '', escape: true})
    expect(reduce(stateIn('local', {kind: 'browse'}, {help: true}), esc, context).state.help).to.equal(false)
    expect(reduce(stateIn('local', {kind: 'naming', text: 'w3'}), esc, context).state).to.deep.include({
      phase: {kind: 'browse'},
      status: 'new: cancelled',
    })
    expect(
      reduce(stateIn('local', {kind: 'confirming', name: 'w1', mode: 'local'}), esc, context).state.status,
    ).to.equal('remove w1: declined, nothing was changed')
    expect(reduce(stateIn('local', {kind: 'filtering'}, {filter: 'w'}), esc, context).state).to.deep.include({
      phase: {kind: 'browse'},
      filter: '',
    })
    // A filter kept with Enter: Esc in the table clears it (the help, when open, goes first).
    expect(reduce(stateIn('local', {kind: 'browse'}, {filter: 'w1'}), esc, context).state).to.deep.include({
      filter: '',
      status: 'filter cleared',
    })
    expect(reduce(stateIn('local', {kind: 'browse'}, {filter: 'w1', help: true}), esc, context).state).to.deep.include({
      filter: 'w1',
      help: false,
    })
  })

  it('y removes after the question; Backspace edits the name and the filter', () => {
    const yes = reduce(
      stateIn('cluster', {kind: 'confirming', name: 's2', mode: 'cluster'}),
      key({input: 'y'}),
      context,
    )
    expect(withoutFades(yes)).to.deep.equal([{kind: 'run', work: 'remove', name: 's2', mode: 'cluster'}])
    expect(yes.state.status).to.equal('removing s2…')
    const back = key({input: '\u007F', delete: true})
    expect(reduce(stateIn('local', {kind: 'naming', text: 'w3'}), back, context).state.phase).to.deep.equal({
      kind: 'naming',
      text: 'w',
    })
    expect(reduce(stateIn('local', {kind: 'filtering'}, {filter: 'w2'}), back, context).state.filter).to.equal('w')
  })

  it('Enter on a bad or taken name stays in the prompt and says why', () => {
    const taken = reduce(stateIn('local', {kind: 'naming', text: 'w2'}), key({input: '\r', return: true}), context)
    expect(taken.state).to.deep.include({phase: {kind: 'naming', text: 'w2'}, status: '✗ w2 already exists'})
    expect(withoutFades(taken)).to.deep.equal([])
  })

  it('the row keys say there is no row on an empty screen; main is never removed', () => {
    const empty = stateIn('cluster', {kind: 'browse'}, {rows: {local: [], cluster: []}})
    expect(reduce(empty, key({input: 'x'}), context).state.status).to.equal(
      'x: there is no row selected (n makes a sandbox)',
    )
    const main = {...stateIn('local'), selection: {index: 0, name: 'main'}}
    expect(reduce(main, key({input: 'x'}), context).state.status).to.equal('the main checkout is never removed')
  })
})

describe('dashboard reducer: events that are not keys', () => {
  it('a load runs one at a time per mode; its rows and notes replace "loading…"', () => {
    const start = {...stateIn('local'), status: 'loading…', rows: {local: undefined, cluster: undefined}}
    const first = reduce(start, {type: 'tick'}, context)
    expect(first.effects).to.deep.equal([{kind: 'load', mode: 'local', announce: false}])
    expect(reduce(first.state, {type: 'tick'}, context).effects).to.deep.equal([])
    const early = reduce(first.state, {type: 'early', mode: 'local', rows: [localRow('main', 0)]}, context).state
    expect(early.rows.local?.map((row) => row.name)).to.deep.equal(['main'])
    const loaded = reduce(
      early,
      {
        type: 'loaded',
        mode: 'local',
        rows: [localRow('main', 0), localRow('w1', 1)],
        notes: ['a note'],
        announce: false,
      },
      context,
    )
    expect(loaded.state).to.deep.include({status: 'a note', loading: {local: false, cluster: false}})
    expect(loaded.state.rows.local).to.have.length(2)
  })

  it('a made row is selected once it is there; the outcome fades only while nothing else was said', () => {
    const done = reduce(
      stateIn('local'),
      {type: 'done', message: 'created w3', select: {mode: 'local', name: 'w3'}},
      context,
    )
    expect(done.state.selection.name).to.equal('w3')
    const fade = done.effects.find((effect) => effect.kind === 'fade')
    expect(fade).to.deep.equal({kind: 'fade', seq: done.state.statusSeq})
    expect(done.effects).to.deep.include({kind: 'load', mode: 'local', announce: false})
    expect(reduce(done.state, {type: 'fade', seq: done.state.statusSeq}, context).state.status).to.equal('')
    const later = reduce(done.state, {type: 'failed', message: 'other'}, context).state
    expect(reduce(later, {type: 'fade', seq: done.state.statusSeq}, context).state.status).to.equal('other')
    const asking = reduce(done.state, {type: 'planned', name: 'w1', mode: 'local', plan: 'remove w1'}, context).state
    expect(asking.status).to.equal('remove w1 — remove w1? y/N')
    expect(reduce(asking, {type: 'fade', seq: asking.statusSeq}, context).state.status).to.equal(
      'remove w1 — remove w1? y/N',
    )
  })

  it('work under way does not fade; a refusal says so with its reason', () => {
    expect(
      reduce(stateIn('local'), {type: 'key', press: {input: 'u'}}, context).effects.some(
        (effect) => effect.kind === 'fade',
      ),
    ).to.equal(false)
    expect(
      reduce(stateIn('local'), {type: 'refused', name: 'w1', error: 'unsaved work'}, context).state.status,
    ).to.equal('remove w1 refused: unsaved work')
  })

  it('the window follows the selection down and up, moving only as far as it must', () => {
    const rows = Array.from({length: 40}, (_, index) => localRow(index === 0 ? 'main' : `w${index}`, index))
    let state: DashboardState = {
      ...stateIn('local'),
      rows: {local: rows, cluster: []},
      selection: {index: 0},
      size: {columns: 100, rows: 12},
    }
    const down = {type: 'key', press: {input: 'j'}} as const
    for (let step = 0; step < 20; step++) state = reduce(state, down, context).state
    expect(state.selection.name).to.equal('w20')
    expect(state.window).to.be.greaterThan(0)
    const bottom = state.window
    state = reduce(state, {type: 'key', press: {input: 'k'}}, context).state
    expect(state.window).to.equal(bottom)
    state = reduce(state, {type: 'resize', columns: 100, rows: 60}, context).state
    expect(state.window).to.equal(0)
  })
})
