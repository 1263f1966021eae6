/** Compose variable interpolation (compose specification, "Interpolation"), table-driven. */
import {expect} from 'chai'

import {
  escapeInterpolation,
  interpolate,
  InvalidTemplateError,
  MissingVariableError,
} from '../../../../src/plugins/compose-stack/compose/interpolate.js'

const env = {SET: 'x', EMPTY: ''}

const table: Array<[string, string]> = [
  ['plain', 'plain'],
  ['$$SET $$ $${SET}', '$SET $ ${SET}'],
  ['$SET ${SET} $SET_x ${SET}_x', 'x x  x_x'],
  ['${EMPTY:-d} ${EMPTY-d} ${UNSET-d} ${UNSET:-d}', 'd  d d'],
  ['${SET:+alt} ${EMPTY:+alt} ${EMPTY+alt} ${UNSET+alt}.', 'alt  alt .'],
  ['${UNSET:-${SET}-y} ${UNSET:-${UNSET2:-deep}}', 'x-y deep'],
  ['$ alone, $5 and $-', '$ alone, $5 and $-'],
  ['${SET:?never}', 'x'],
]

describe('compose interpolation', () => {
  for (const [text, expected] of table) {
    it(`${text} → ${expected}`, () => expect(interpolate(text, env)).to.equal(expected))
  }

  it('${VAR:?msg} and ${VAR?msg}: missing (and, with :, empty) is an error carrying the message', () => {
    expect(() => interpolate('${UNSET:?set it}', env)).to.throw(
      MissingVariableError,
      'required variable UNSET is missing a value: set it',
    )
    expect(() => interpolate('${EMPTY:?}', env)).to.throw(MissingVariableError, 'EMPTY')
    expect(interpolate('${EMPTY?unused}', env)).to.equal('')
  })

  it('a malformed ${…} is an error', () => {
    for (const text of ['${}', '${1A}', '${A B}', '${SET', '${SET!x}'])
      expect(() => interpolate(text, env), text).to.throw(InvalidTemplateError)
  })

  it('reports unset variables without default', () => {
    const unset: string[] = []
    interpolate('$A ${B} ${C:-c} ${SET}', env, (name) => unset.push(name))
    expect(unset).to.deep.equal(['A', 'B'])
  })

  it('escapeInterpolation doubles every $, so the provider interpolates back to the same text', () => {
    const model = {services: {web: {command: ['echo $HOME ${X} $$'], environment: {A: 'a$b'}}}}
    const escaped = escapeInterpolation(model)
    expect(escaped.services.web.command[0]).to.equal('echo $$HOME $${X} $$$$')
    expect(interpolate(escaped.services.web.command[0], {HOME: 'no'})).to.equal('echo $HOME ${X} $$')
    expect(escaped.services.web.environment.A).to.equal('a$$b')
  })
})
