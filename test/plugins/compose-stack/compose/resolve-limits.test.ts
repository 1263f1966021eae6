/**
 * Inputs built to exhaust the resolver: alias bombs, include diamonds and cycles, deep
 * recursion. Each is refused (exit 2, naming the file) or resolved in linear time — never a
 * hang, a RangeError or gigabytes of memory.
 */
import {expect} from 'chai'
import {symlinkSync} from 'node:fs'

import {cleanupTemp} from '../../../support/repo.js'
import {type ResolverCase, runCases} from './resolve-support.js'

/** `levels` anchors, each a list of `fanOut` aliases of the one before; the first a `size`-character string. */
function laughs(levels: number, fanOut: number, size: number, use: string): string {
  let text = `x-l0: &l0 '${'l'.repeat(size)}'\n`
  for (let level = 1; level <= levels; level++)
    text += `x-l${level}: &l${level} [${Array.from({length: fanOut}, () => `*l${level - 1}`).join(', ')}]\n`
  return `${text}services:\n  web:\n    image: x\n    command: ${use}\n`
}

/** A diamond `depth` levels deep: every file includes both files of the next level. */
function diamond(depth: number): Record<string, string> {
  const files: Record<string, string> = {
    'compose.yaml': 'include: [l0a.yaml, l0b.yaml]\nservices:\n  top: {image: x}\n',
  }
  for (let level = 0; level < depth; level++) {
    for (const side of ['a', 'b']) {
      const next = level < depth - 1 ? `include: [l${level + 1}a.yaml, l${level + 1}b.yaml]\n` : ''
      files[`l${level}${side}.yaml`] =
        `${next}services:\n  s${level}${side}: {image: x}\n  shared: {image: "\${UNSET_IMAGE}"}\n`
    }
  }

  return files
}

function extendsChain(length: number): string {
  let text = 'services:\n'
  for (let index = 0; index < length; index++) text += `  s${index}:\n    extends: s${index + 1}\n`
  return `${text}  s${length}:\n    image: x\n`
}

const cases: ResolverCase[] = [
  {
    rule: 'alias expansion: a 10 KB "billion laughs" of long strings is refused before it grows (it would render to gigabytes)',
    files: {'compose.yaml': laughs(4, 10, 9000, '*l4')},
    error: /compose\.yaml: its aliases expand to more than 16777216 characters of text/,
  },
  {
    rule: 'alias expansion: a "billion laughs" of many small nodes is refused',
    files: {'compose.yaml': laughs(9, 10, 1, '*l9')},
    error: /compose\.yaml: its aliases expand to more than 100000 nodes/,
  },
  {
    rule: 'alias expansion: ordinary fragment reuse (a list aliased by 100 services) resolves',
    files: {
      'compose.yaml': `x-env: &env [A=1, B=2, C=3]\nservices:\n${Array.from({length: 100}, (_, index) => `  s${index}: {image: x, environment: *env}\n`).join('')}`,
    },
    check: (result) => expect(Object.keys(result.model.services)).to.have.length(100),
  },
  {
    rule: 'include: a diamond 20 levels deep is read once per file, in linear time, its warnings said once',
    files: diamond(20),
    check(result) {
      expect(Object.keys(result.model.services)).to.have.length(42)
      expect(result.files).to.have.length(41)
      expect(result.warnings.map((warning) => warning.kind)).to.deep.equal(['unset-variable'])
    },
  },
  {
    rule: 'include: a cycle through a symbolic link is an include cycle, not endless recursion',
    files: {
      'compose.yaml': 'include: [a.yaml]\nservices: {top: {image: x}}\n',
      'a.yaml': 'include: [link/compose.yaml]\n',
    },
    setup: (dir) => symlinkSync('.', `${dir}/link`),
    error: /include cycle: .*compose\.yaml → .*a\.yaml → .*link\/compose\.yaml/,
  },
  {
    rule: 'include: a cycle found at a later path of a long-form entry is an include cycle',
    files: {
      'compose.yaml': 'include: [a.yaml]\nservices: {top: {image: x}}\n',
      'a.yaml': 'include:\n  - path: [b.yaml, compose.yaml]\n',
      'b.yaml': 'services: {b: {image: x}}\n',
    },
    error: /include cycle: .*compose\.yaml → .*a\.yaml → .*compose\.yaml/,
  },
  {
    rule: 'include: nesting deeper than 32 levels is refused',
    files: Object.fromEntries([
      ...Array.from({length: 40}, (_, index) => [
        index === 0 ? 'compose.yaml' : `i${index}.yaml`,
        `include: [i${index + 1}.yaml]\nservices: {s${index}: {image: x}}\n`,
      ]),
      ['i40.yaml', 'services: {}\n'],
    ]),
    error: /includes nest more than 32 levels deep/,
  },
  {
    rule: 'extends: a 10 000-long chain is refused with exit 2, not a RangeError',
    files: {'compose.yaml': extendsChain(10_000)},
    error: /services\.s\d+\.extends: the extends chain is longer than 64 services/,
  },
  {
    rule: 'extends: a chain of 20 resolves',
    files: {'compose.yaml': extendsChain(20)},
    check: (result) => expect(result.model.services.s0).to.deep.equal({image: 'x'}),
  },
  {
    rule: 'nesting: 10 000 nested flow sequences are refused, not a stack overflow',
    files: {
      'compose.yaml': `services:\n  web:\n    image: x\n    labels:\n      a: ${'['.repeat(10_000)}${']'.repeat(10_000)}\n`,
    },
    error: /compose\.yaml: nested more than 64 levels deep/,
  },
  {
    rule: 'nesting: 200 nested block mappings are refused, naming where',
    files: {
      'compose.yaml': `services:\n  web:\n    image: x\n    x-deep:\n${Array.from({length: 200}, (_, index) => `${'  '.repeat(index + 3)}k${index}:`).join('\n')} end\n`,
    },
    error: /compose\.yaml: services\.web\.x-deep\.k0.*…: nested more than 64 levels deep/,
  },
  {
    rule: 'interpolation: defaults nested 5 000 deep are refused, not a stack overflow',
    files: {'compose.yaml': `services:\n  web:\n    image: "${'${A:-'.repeat(5000)}x${'}'.repeat(5000)}"\n`},
    error: /compose\.yaml: services\.web\.image: invalid interpolation format .*nested more than 32 levels deep/,
  },
  {
    rule: 'interpolation: the same in a .env file names its line',
    files: {
      '.env': `A=1\nB=${'${Z:-'.repeat(5000)}x${'}'.repeat(5000)}\n`,
      'compose.yaml': 'services: {web: {image: x}}\n',
    },
    error: /\.env:2: invalid interpolation format .*nested more than 32 levels deep/,
  },
  {
    rule: 'interpolation: defaults nested 10 deep resolve',
    files: {'compose.yaml': `services:\n  web:\n    image: "${'${A:-'.repeat(10)}x${'}'.repeat(10)}"\n`},
    services: {web: {image: 'x'}},
  },
  {
    rule: 'YAML: a key given twice is refused with its line, in linear time for a 10 000-service file',
    files: {
      'compose.yaml': `services:\n${Array.from({length: 10_000}, (_, index) => `  s${index}: {image: x}\n`).join('')}  s5: {image: y}\n`,
    },
    error: /compose\.yaml:10002:3: services: the key "s5" is defined twice/,
  },
]

describe('compose resolver: inputs built to exhaust it', function () {
  this.timeout(20_000)

  after(() => cleanupTemp())
  runCases(cases)
})
