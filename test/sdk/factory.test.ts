import {expect} from 'chai'

import {checkFactory} from '../../src/sdk/factory-check.js'
import {contractMajor} from '../../src/sdk/factory.js'

describe('contractMajor', () => {
  const cases: Array<[unknown, number | undefined]> = [
    [1, 1],
    [0, 0],
    ['1', 1],
    ['1.x', 1],
    ['1.2.3', 1],
    ['2.0', 2],
    ['12.x.x', 12],
    [1.5, undefined],
    [-1, undefined],
    [NaN, undefined],
    ['', undefined],
    ['v1', undefined],
    ['one', undefined],
    ['1.', undefined],
    ['^1', undefined],
    [null, undefined],
    [undefined, undefined],
  ]
  for (const [contract, major] of cases) {
    it(`${JSON.stringify(contract) ?? 'undefined'} → ${major}`, () => expect(contractMajor(contract)).to.equal(major))
  }
})

describe('checkFactory', () => {
  const create = () => ({})

  it('accepts a factory for contract 1 and keeps the original object', () => {
    const factory = {kind: 'cache', id: 'git-cache', contract: '1.x', create, extra: true}
    const check = checkFactory(factory, 1, 'p')
    expect(check).to.deep.equal({status: 'ok', factory, major: 1})
    expect(check.status === 'ok' && check.factory).to.equal(factory)
  })

  it('names every field at fault', () => {
    expect(checkFactory({kind: 'sandbox', id: '-x', contract: 1, create, description: 3}, 1, 'p')).to.deep.equal({
      status: 'broken',
      reason:
        'malformed backend factory: id: must be lowercase letters, digits and dashes, starting with a letter or digit, got "-x"; description: must be a string, got 3',
    })
    expect(checkFactory({create}, 1, 'p')).to.deep.equal({
      status: 'broken',
      reason:
        'malformed backend factory: kind: must be one of machine, stack, cache, sandbox, got undefined; id: must be a string, got undefined; contract: must be a contract version such as 1, "1" or "1.x", got undefined',
    })
  })

  it('says which element is no object', () => {
    expect(checkFactory([], 3, 'p')).to.deep.equal({
      status: 'broken',
      reason: 'backend factory #3 is an array, not an object',
    })
    expect(checkFactory('machine', 1, 'p')).to.deep.equal({
      status: 'broken',
      reason: 'backend factory #1 is "machine", not an object',
    })
  })

  it('reports another contract major as incompatible, checked after the shape', () => {
    expect(checkFactory({kind: 'stack', id: 'old', contract: 0, create}, 1, 'yard-old')).to.deep.equal({
      status: 'incompatible',
      major: 0,
      reason:
        'implements backend contract 0, but this yard supports contract 1: install a release of yard-old made for contract 1, or a yard that supports contract 0',
    })
    expect(checkFactory({kind: 'stack', id: 'old', contract: 2}, 1, 'p').status).to.equal('broken')
  })
})
