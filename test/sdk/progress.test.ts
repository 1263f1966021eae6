/** The progress port's parsing of git's `--progress` lines (git's progress.c) and the runner's stderr listener. */
import {expect} from 'chai'
import path from 'node:path'

import {OperationError} from '../../src/sdk/errors.js'
import {ProcessRunner} from '../../src/sdk/process.js'
import {gitProgressListener, parseGitProgress, type ProgressUpdate, withoutProgress} from '../../src/sdk/progress.js'
import {nextState, progressLine} from '../../src/tui/progress.js'
import {cleanupTemp, makeRepo, tempDir} from '../support/repo.js'

describe('git progress lines (progress.c display())', () => {
  const cases: Array<[string, ProgressUpdate | undefined]> = [
    [
      'Receiving objects:  45% (4500/10000), 1.20 MiB | 2.40 MiB/s',
      {phase: 'Receiving objects', done: 4500, total: 10_000, unit: 'objects', bytes: '1.20 MiB', rate: '2.40 MiB/s'},
    ],
    [
      'Receiving objects: 100% (402/402), 78.30 MiB | 3.01 MiB/s, done.',
      {phase: 'Receiving objects', done: 402, total: 402, unit: 'objects', bytes: '78.30 MiB', rate: '3.01 MiB/s'},
    ],
    [
      'remote: Counting objects:   3% (91/3002)   ',
      {phase: 'Counting objects', done: 91, total: 3002, unit: 'objects'},
    ],
    ['remote: Enumerating objects: 3002, done.', {phase: 'Enumerating objects', done: 3002, unit: 'objects'}],
    ['Resolving deltas:  12% (12/100)', {phase: 'Resolving deltas', done: 12, total: 100, unit: 'deltas'}],
    ['Updating files:  50% (5/10)', {phase: 'Updating files', done: 5, total: 10, unit: 'files'}],
    ["fatal: repository '/nowhere' does not exist", undefined],
    ['warning: You appear to have cloned an empty repository.', undefined],
  ]
  for (const [line, expected] of cases) {
    it(`reads ${JSON.stringify(line)}`, () => expect(parseGitProgress(line)).to.deep.equal(expected))
  }

  it(String.raw`a listener splits redraws at \r and \n, also across chunks`, () => {
    const seen: number[] = []
    const listen = gitProgressListener({step() {}, update: (update) => seen.push(update.done), done() {}})
    for (const chunk of [
      'Receiving objects:   1% (1/100)\rReceiving obj',
      'ects:  50% (50/100)\r',
      'Receiving objects: 100% (100/100), done.\n',
    ])
      listen(chunk)
    expect(seen).to.deep.equal([1, 50, 100])
  })

  it("withoutProgress keeps git's words and drops every redraw", () => {
    const stderr =
      'remote: Enumerating objects: 3, done.\nReceiving objects:  50% (1/2)\rReceiving objects: 100% (2/2), done.\nfatal: early EOF\n'
    expect(withoutProgress(stderr)).to.equal('fatal: early EOF\n')
  })
})

describe('the progress frame', () => {
  it('draws a bar with counts, bytes and rate; counts alone without a total', () => {
    expect(progressLine({done: 50, total: 100, unit: 'objects', bytes: '1.00 MiB', rate: '2.00 MiB/s'})).to.equal(
      ` 50% ${'█'.repeat(12)}${'░'.repeat(12)} 50/100 objects, 1.00 MiB, 2.00 MiB/s`,
    )
    expect(progressLine({done: 3002, unit: 'objects'})).to.equal('3002 objects')
  })

  it('a step ends the one before with its seconds; an update belongs to the current step', () => {
    let state = nextState({done: []}, {step: 'cloning'}, 1000)
    state = nextState(state, {update: {done: 1, total: 2, unit: 'objects'}}, 1500)
    expect(state.current?.update?.done).to.equal(1)
    state = nextState(state, {step: 'pinning'}, 3500)
    expect(state.done).to.deep.equal([{name: 'cloning', seconds: 2.5}])
    expect(state.current).to.deep.equal({name: 'pinning', started: 3500})
    expect(nextState(state, {end: 'done'}, 4000)).to.deep.equal({
      done: [
        {name: 'cloning', seconds: 2.5},
        {name: 'pinning', seconds: 0.5},
      ],
      ended: true,
    })
    expect(nextState(state, {end: 'failed'}, 4000)).to.include({failed: true, ended: true})
    // done: the operation is over; a failure after it marks no step.
    const over = nextState(state, {done: true}, 4000)
    expect(over).to.deep.equal({
      done: [
        {name: 'cloning', seconds: 2.5},
        {name: 'pinning', seconds: 0.5},
      ],
    })
    expect(nextState(over, {end: 'failed'}, 4500).current).to.equal(undefined)
  })
})

describe('ProcessRunner onStderr', () => {
  after(() => cleanupTemp())

  it("hands git's progress over as it comes, and a failure names git's error without the redraws", async () => {
    const repo = makeRepo({}, 'upstream')
    const updates: string[] = []
    const port = {step() {}, update: (update: ProgressUpdate) => updates.push(update.phase ?? ''), done() {}}
    const runner = new ProcessRunner()
    await runner.git(
      ['clone', '--bare', '--no-local', '--quiet', '--progress', '--', repo, path.join(tempDir(), 'copy.git')],
      {onStderr: gitProgressListener(port)},
    )
    expect(updates).to.include('Enumerating objects')
    const failure = await runner
      .git(
        [
          'clone',
          '--bare',
          '--quiet',
          '--progress',
          '--',
          path.join(repo, 'nowhere'),
          path.join(tempDir(), 'none.git'),
        ],
        {onStderr() {}},
      )
      .catch((error: unknown) => error)
    expect(failure).to.be.instanceOf(OperationError)
    expect((failure as OperationError).why).to.match(/^fatal: .*does not exist/)
  })
})
