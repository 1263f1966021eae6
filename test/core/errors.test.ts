import {expect} from 'chai'

import {ExitCode, InputError, RefusedError, YardError} from '../../src/core/errors.js'

describe('YardError across copies of the package (DESIGN.md §7)', () => {
  it('recognises a YardError made by another copy of the errors module, as a plugin with its own @yard-dev/cli makes them', async () => {
    // A query string loads the module a second time: other classes, as in a plugin's own node_modules.
    const copy = (await import(`../../src/core/errors.js?copy=${Date.now()}`)) as typeof import('../../src/core/errors.js')
    expect(copy.YardError).to.not.equal(YardError)
    const foreign = new copy.RefusedError('port busy', {fix: 'stop it'})
    expect(foreign instanceof YardError).to.equal(true)
    expect((foreign as YardError).code).to.equal(ExitCode.refused)
    expect((foreign as YardError).render()).to.equal('port busy\n  fix: stop it')
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
