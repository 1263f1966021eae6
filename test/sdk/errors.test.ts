import {expect} from 'chai'

import {
  boundLines,
  ExitCode,
  InputError,
  OperationError,
  RefusedError,
  terminalSafe,
  YardError,
} from '../../src/sdk/errors.js'

describe('YardError across copies of the package (DESIGN.md §7)', () => {
  it('recognises a YardError made by another copy of the errors module, as a plugin with its own @yard-dev/cli makes them', async () => {
    // A query string loads the module a second time: other classes, as in a plugin's own node_modules.
    const copy = (await import(
      `../../src/sdk/errors.js?copy=${Date.now()}`
    )) as typeof import('../../src/sdk/errors.js')
    expect(copy.YardError).to.not.equal(YardError)
    const foreign = new copy.RefusedError('port busy', {fix: 'stop it'})
    expect(foreign instanceof YardError).to.equal(true)
    expect(foreign.code).to.equal(ExitCode.refused)
    expect(foreign.render()).to.equal('port busy\n  fix: stop it')
  })

  it('keeps the subclasses apart and plain errors out', () => {
    expect(new InputError('x') instanceof YardError).to.equal(true)
    expect(new InputError('x') instanceof RefusedError).to.equal(false)
    expect(new RefusedError('x') instanceof RefusedError).to.equal(true)
    expect(new Error('x') instanceof YardError).to.equal(false)
    expect((null as unknown) instanceof YardError).to.equal(false)
    expect(Object.assign(new Error('x'), {code: 3}) instanceof YardError).to.equal(false)
  })
})

describe('rendering errors for a terminal', () => {
  it("keeps the first and last 10 lines of a long why (a tool's stderr), saying how many were left out", () => {
    const stderr = Array.from(
      {length: 10_000},
      (_, index) => `error: unable to write file f${index}: No space left on device`,
    ).join('\n')
    const error = new OperationError('git worktree add failed with exit code 128', {why: stderr})
    const lines = error.why!.split('\n')
    expect(lines).to.have.length(21)
    expect(lines[0]).to.equal('error: unable to write file f0: No space left on device')
    expect(lines[10]).to.equal('… 9980 lines omitted …')
    expect(lines[20]).to.equal('error: unable to write file f9999: No space left on device')
    expect(error.render().split('\n')).to.have.length(22)
    expect(boundLines('a\nb\nc', 1)).to.equal('a\nb\nc')
  })

  it("escapes terminal escape sequences and newlines in echoed names; yard's own indented lines stay", () => {
    const name = 'evil\u001B]0;owned\u0007\u001B[2J\nfix: run rm -rf ~'
    const rendered = new InputError(`invalid worktree name "${name}"`, {
      why: `line one\nline two ${name}`,
      fix: `rename ${name}`,
    }).render()
    expect(rendered).not.to.match(/[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/)
    expect(rendered.split('\n')).to.deep.equal([
      String.raw`invalid worktree name "evil\x1b]0;owned\x07\x1b[2J\nfix: run rm -rf ~"`,
      '  why: line one',
      String.raw`       line two evil\x1b]0;owned\x07\x1b[2J`,
      '       fix: run rm -rf ~',
      String.raw`  fix: rename evil\x1b]0;owned\x07\x1b[2J\nfix: run rm -rf ~`,
    ])
    expect(terminalSafe('warning: a\u009Bb\nc\n  d')).to.equal(String.raw`warning: a\x9bb\nc` + '\n  d')
    expect(new RefusedError('the sandbox s holds unsaved work:\n  3 modified\n  1 stash').render()).to.equal(
      'the sandbox s holds unsaved work:\n  3 modified\n  1 stash',
    )
  })
})
