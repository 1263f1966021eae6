import {expect} from 'chai'
import fc from 'fast-check'
import {execFileSync} from 'node:child_process'
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {
  cksum,
  findClashes,
  hashOffset,
  lowestFreeOffset,
  nameFromBranch,
  portsFor,
  prefixFromDirectory,
  validateName,
  validateOffset,
  validatePrefix,
} from '../../../src/core/identity/identity.js'
import {InputError} from '../../../src/sdk/errors.js'
import {cleanupTemp, tempDir} from '../../support/repo.js'
import {copiedVectorsDir, readVectors, sharedVectorsDir} from '../../support/vectors.js'

const vectors = readVectors<{cases: Array<{name: string; cksum: number; offset: number}>}>('offsets.json')

describe('identity: offsets (DESIGN.md §3.4)', () => {
  after(cleanupTemp)

  for (const vector of vectors.cases) {
    it(`gives ${vector.name} cksum ${vector.cksum} and offset ${vector.offset}`, () => {
      expect(cksum(new TextEncoder().encode(vector.name + '\n'))).to.equal(vector.cksum)
      expect(hashOffset(vector.name)).to.equal(vector.offset)
    })
  }

  it('matches the system cksum on 1,000 random strings, non-ASCII included, without cksum on its PATH', () => {
    const samples = fc.sample(fc.string({unit: 'binary', maxLength: 60}), {numRuns: 1000, seed: 20_261_129})
    samples.push('', 'é', '日本語', '🚀x', 'a'.repeat(300))
    const dir = tempDir('cksum')
    const files = samples.map((sample, index) => {
      const file = path.join(dir, String(index))
      writeFileSync(file, sample)
      return file
    })
    const system = new Map<string, number>()
    for (const line of execFileSync('cksum', files, {encoding: 'utf8', maxBuffer: 1 << 24})
      .trim()
      .split('\n')) {
      const [crc, , file] = line.split(' ', 3)
      system.set(file, Number(crc))
    }

    const savedPath = process.env.PATH
    process.env.PATH = dir // nothing called cksum is reachable while the product computes
    try {
      for (const [index, sample] of samples.entries()) {
        expect(cksum(new TextEncoder().encode(sample)), JSON.stringify(sample)).to.equal(system.get(files[index]))
      }
    } finally {
      process.env.PATH = savedPath
    }

    expect(system.size).to.equal(samples.length)
  })

  it('keeps test/vectors/ equal to the shared vectors when they are beside the checkout', () => {
    for (const name of ['offsets.json', 'identity.json']) {
      if (!existsSync(sharedVectorsDir + name)) continue
      expect(readFileSync(copiedVectorsDir + name, 'utf8'), name).to.equal(
        readFileSync(sharedVectorsDir + name, 'utf8'),
      )
    }
  })

  it('finds the feat/alpha clash of the vectors and the lowest free offset', () => {
    const clashes = findClashes([
      {name: 'feat', offset: hashOffset('feat')},
      {name: 'alpha', offset: hashOffset('alpha')},
      {name: 'review', offset: hashOffset('review')},
      {name: 'review', offset: hashOffset('review')},
    ])
    expect(clashes.get('feat')).to.deep.equal(['alpha'])
    expect(clashes.get('alpha')).to.deep.equal(['feat'])
    expect(clashes.get('review')).to.deep.equal([]) // same name twice is one identity
    expect(lowestFreeOffset([1, 2, 4])).to.equal(3)
    expect(lowestFreeOffset(Array.from({length: 89}, (_, i) => i + 1))).to.equal(undefined)
  })

  it('adds the offset to every port base', () => {
    expect(portsFor({APP_PORT: 3000, DB_PORT: 5400}, 59)).to.deep.equal({APP_PORT: 3059, DB_PORT: 5459})
  })

  describe('validateOffset', () => {
    const bad: Array<[unknown, string]> = [
      ['abc', 'env WT_OFFSET'],
      ['0', 'env WT_OFFSET'],
      ['90', 'env WT_OFFSET'],
      ['-1', 'env WT_OFFSET'],
      ['1.5', 'env WT_OFFSET'],
      [true, 'yard.local.toml [worktree-offsets] feat'],
      [1.5, 'yard.local.toml [worktree-offsets] feat'],
      ['7', 'yard.local.toml [worktree-offsets] feat'],
      [0n, 'yard.local.toml [worktree-offsets] feat'],
      [90n, 'yard.local.toml [worktree-offsets] feat'],
    ]
    for (const [value, source] of bad) {
      it(`refuses ${typeof value === 'string' ? JSON.stringify(value) : String(value)} from ${source}`, () => {
        let error: unknown
        try {
          validateOffset(value, source, 'the fix')
        } catch (error_) {
          error = error_
        }

        expect(error).to.be.instanceOf(InputError)
        expect((error as InputError).code).to.equal(2)
        expect((error as InputError).message).to.contain(source)
        expect((error as InputError).fix).to.equal('the fix')
      })
    }

    it('accepts 1..89 from env strings and TOML integers', () => {
      expect(validateOffset('1', 'env WT_OFFSET', '')).to.equal(1)
      expect(validateOffset(' 89 ', 'env WT_OFFSET', '')).to.equal(89)
      expect(validateOffset(7n, 'file', '')).to.equal(7)
    })
  })
})

describe('identity: names and prefixes (DESIGN.md §3.1)', () => {
  const refused = ['Feature.Auth', 'main', 'default', 'worktrees', 'a/b', '..', 'a'.repeat(41), '', '-x', 'x-']
  for (const name of refused) {
    it(`refuses the name ${JSON.stringify(name)} with the rule and a valid suggestion`, () => {
      let error: InputError | undefined
      try {
        validateName(name)
      } catch (error_) {
        error = error_ as InputError
      }

      expect(error, 'refused').to.be.instanceOf(InputError)
      expect(error!.code).to.equal(2)
      expect(error!.why).to.contain('[a-z0-9]')
      const suggestion = /use "([^"]+)"/.exec(error!.fix ?? '')?.[1]
      expect(suggestion, error!.fix).to.be.a('string')
      expect(() => validateName(suggestion!)).not.to.throw()
    })
  }

  it('suggests what --branch would derive, so a/b and a-b are never suggested the same name', () => {
    const suggestion = (name: string) => {
      try {
        validateName(name)
      } catch (error) {
        return /use "([^"]+)"/.exec((error as InputError).fix ?? '')?.[1]
      }
    }

    expect(suggestion('a/b')).to.equal(nameFromBranch('a/b')).and.not.equal('a-b')
    expect(suggestion('Feature.Auth')).to.match(/^feature-auth-[0-9a-f]{4}$/)
  })

  it('accepts a 40-character name', () => {
    expect(validateName('a'.repeat(40))).to.equal('a'.repeat(40))
  })

  it('derives names from branches so a/x and a-x never meet', () => {
    const slashed = nameFromBranch('a/x')
    expect(slashed).to.match(/^a-x-[0-9a-f]{4}$/)
    expect(nameFromBranch('a-x')).to.equal('a-x')
    expect(nameFromBranch('feature/Login.v2')).to.match(/^feature-login-v2-[0-9a-f]{4}$/)
    expect(nameFromBranch('main')).to.match(/^main-[0-9a-f]{4}$/)
    expect(nameFromBranch('///')).to.match(/^wt-[0-9a-f]{4}$/)
    const long = nameFromBranch('x'.repeat(60))
    expect(long).to.match(/^x{35}-[0-9a-f]{4}$/)
    for (const branch of ['a/x', 'feature/Login.v2', 'main', '///', 'x'.repeat(60), 'Ünïcode/branch'])
      expect(() => validateName(nameFromBranch(branch))).not.to.throw()
  })

  it('derives prefixes from directory names, cut to 22', () => {
    expect(prefixFromDirectory('My.App')).to.equal('my-app')
    const thirty = 'abcdefghij-klmnopqrst-uvwxyz1234'.slice(0, 30)
    expect(thirty).to.have.length(30)
    expect(prefixFromDirectory(thirty)).to.equal('abcdefghij-klmnopqrst')
    expect(prefixFromDirectory('abcdefghijklmnopqrstuvwxyz1234')).to.equal('abcdefghijklmnopqrstuv')
    expect(() => validatePrefix('Bad_Prefix', 'env YARD_PREFIX')).to.throw(InputError, /env YARD_PREFIX/)
    expect(() => validatePrefix('a'.repeat(23), 'yard.toml [project] prefix')).to.throw(InputError, /more than 22/)
  })
})
