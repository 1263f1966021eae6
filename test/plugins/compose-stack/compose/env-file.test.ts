/** Compose's env file format (compose-go `dotenv`), table-driven. */
import {expect} from 'chai'

import {parseEnvFile} from '../../../../src/plugins/compose-stack/compose/env-file.js'
import {InputError} from '../../../../src/sdk/errors.js'

const table: Array<{title: string; text: string; env?: Record<string, string>; expected: Record<string, string>}> = [
  {
    title: 'plain, spaces around =, colon form, export prefix',
    text: 'A=1\nB = 2\nC: 3\nexport D=4\n  E=5\n',
    expected: {A: '1', B: '2', C: '3', D: '4', E: '5'},
  },
  {
    title: 'comments: whole lines, and after a value only with a space before #',
    text: '# c\nA=1 # c\nB=a#b\n\n#C=3\n',
    expected: {A: '1', B: 'a#b'},
  },
  {
    title: String.raw`single quotes are literal (no escapes but \', no interpolation)`,
    text: "A='1'\nB=''\nC='\\n'\nD='Let\\'s go!'\nE='$X ${X}'\n",
    env: {X: 'x'},
    expected: {A: '1', B: '', C: String.raw`\n`, D: "Let's go!", E: '$X ${X}'},
  },
  {
    title: 'double quotes: escapes, several lines, inline comment after',
    text: 'A="1"\nB=""\nC="\\n"\nD = "echo \'asd\'" # c\nE="first\nsecond"\nF="say \\"hi\\" \\\\ \\$X"\n',
    env: {X: 'x'},
    expected: {A: '1', B: '', C: '\n', D: "echo 'asd'", E: 'first\nsecond', F: String.raw`say "hi" \ $X`},
  },
  {
    title: "interpolation: the caller's environment first, then keys set above; defaults",
    text: 'A=1\nB=${A}\nC=$X-${A}\nD="${NOPE:-dflt}"\nX=local\nE=$X\n',
    env: {X: 'env'},
    expected: {A: '1', B: '1', C: 'env-1', D: 'dflt', X: 'local', E: 'env'},
  },
  {
    title: "a bare key takes the caller's value when set; a BOM is ignored",
    text: '\uFEFFSET\nUNSET\nA=1',
    env: {SET: 'yes'},
    expected: {SET: 'yes', A: '1'},
  },
  {
    title: 'dots, dashes and brackets are key characters; an empty value is empty',
    text: 'a.b-c[0]=v\nEMPTY=\n',
    expected: {'a.b-c[0]': 'v', EMPTY: ''},
  },
]

describe('compose env file format', () => {
  for (const row of table) {
    it(row.title, () => {
      expect(parseEnvFile(row.text, 'x.env', row.env ?? {})).to.deep.equal(row.expected)
    })
  }

  for (const [text, message] of [
    ['A="open\nB=1\n', /x\.env:1: unterminated quoted value/],
    ['OK=1\nA B=1\n', /x\.env:2: key cannot contain a space/],
    ['A$=1\n', /unexpected character "\$"/],
    ['A=${NEEDED:?please}\n', /x\.env:1: required variable NEEDED is missing a value: please/],
  ] as const) {
    it(`refuses ${JSON.stringify(text)} naming file and line`, () => {
      expect(() => parseEnvFile(text, 'x.env', {})).to.throw(InputError, message)
    })
  }
})
