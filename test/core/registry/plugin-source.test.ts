import {expect} from 'chai'
import {mkdirSync} from 'node:fs'
import path from 'node:path'

import {
  classifyPluginSource,
  consentToInstall,
  PLUGIN_CODE_NOTE,
  type PluginSource,
} from '../../../src/core/registry/plugin-source.js'
import {ExitCode, YardError} from '../../../src/sdk/errors.js'
import {cleanupTemp, tempDir, writeFile} from '../../support/repo.js'

describe('plugin sources (DESIGN.md §7)', () => {
  let cwd: string

  beforeEach(() => {
    cwd = tempDir('yard-plugin-source')
    writeFile(cwd, 'mine/backend/package.json', '{"name": "mine"}\n')
    mkdirSync(path.join(cwd, 'empty'))
  })

  afterEach(cleanupTemp)

  it('classifies npm names, paths and git urls; a path becomes file:<absolute path>', () => {
    const table: Array<[string, string, string]> = [
      ['yard-backend-lima', 'npm', 'yard-backend-lima'],
      ['yard-backend-lima@2.1.0', 'npm', 'yard-backend-lima@2.1.0'],
      ['@acme/yard-nomad', 'npm', '@acme/yard-nomad'],
      ['@acme/yard-nomad@next', 'npm', '@acme/yard-nomad@next'],
      ['./mine/backend', 'path', `file:${cwd}/mine/backend`],
      ['mine/backend', 'path', `file:${cwd}/mine/backend`],
      [`${cwd}/mine/backend`, 'path', `file:${cwd}/mine/backend`],
      [`file:${cwd}/mine/backend`, 'path', `file:${cwd}/mine/backend`],
      [`file://${cwd}/mine/backend`, 'path', `file:${cwd}/mine/backend`],
      ['acme/yard-nomad', 'git', 'acme/yard-nomad'],
      ['https://github.com/acme/yard-nomad', 'git', 'https://github.com/acme/yard-nomad'],
      ['git+https://example.com/acme/nomad.git', 'git', 'git+https://example.com/acme/nomad.git'],
      ['git@example.com:acme/nomad.git', 'git', 'git@example.com:acme/nomad.git'],
      ['ssh://git@example.com/acme/nomad', 'git', 'ssh://git@example.com/acme/nomad'],
      ['github:acme/nomad', 'git', 'github:acme/nomad'],
    ]
    for (const [given, kind, spec] of table) {
      const source = classifyPluginSource(given, cwd)
      expect([source.kind, source.spec], given).to.deep.equal([kind, spec])
      expect(source.given).to.equal(given)
    }
  })

  it('classifies every spec that is not a plain registry name with npm-package-arg, so each is asked about', async () => {
    const table: Array<[string, string, string]> = [
      ['yard-backend-lima@^2.1', 'npm', 'yard-backend-lima@^2.1'],
      ['mine@file:./mine/backend', 'path', `file:${cwd}/mine/backend`],
      [`mine@file:${cwd}/mine/backend`, 'path', `file:${cwd}/mine/backend`],
      ['mine@git+https://example.com/acme/nomad.git', 'git', 'mine@git+https://example.com/acme/nomad.git'],
      ['mine@github:acme/nomad', 'git', 'mine@github:acme/nomad'],
      ['mine@https://example.com/nomad-1.0.0.tgz', 'tarball', 'mine@https://example.com/nomad-1.0.0.tgz'],
      ['https://example.com/nomad-1.0.0.tgz', 'tarball', 'https://example.com/nomad-1.0.0.tgz'],
      ['mine@npm:evil@1.0.0', 'alias', 'mine@npm:evil@1.0.0'],
      ['npm:evil', 'alias', 'npm:evil'],
    ]
    for (const [given, kind, spec] of table) {
      const source = classifyPluginSource(given, cwd)
      expect([source.kind, source.spec], given).to.deep.equal([kind, spec])
    }

    expect(classifyPluginSource('mine@npm:evil@1.0.0', cwd).description).to.equal(
      'the npm package evil@1.0.0 under the name mine',
    )
    expect(classifyPluginSource('npm:evil@1', cwd).description).to.equal('the npm package evil@1 (an npm: alias)')
    expect(() => classifyPluginSource('a\nb', cwd)).to.throw(YardError, String.raw`Invalid tag name "a\nb"`)
    const sources = table.slice(1).map(([given]) => classifyPluginSource(given, cwd))
    let refused: unknown
    await consentToInstall(sources, {
      yes: false,
      interactive: false,
      ask: async () => true,
      note: () => undefined,
    }).catch((error: unknown) => (refused = error))
    expect((refused as YardError).code).to.equal(ExitCode.refused)
    for (const source of sources) expect((refused as YardError).message).to.contain(source.description)
    expect(() => classifyPluginSource('mine@file:./nowhere', cwd)).to.throw(
      YardError,
      `cannot install a plugin from ${cwd}/nowhere: no such file or directory`,
    )
    expect(() => classifyPluginSource('Bad Name', cwd)).to.throw(YardError, 'cannot install a plugin from "Bad Name"')
  })

  it('refuses a path that does not exist or is no package (exit 2), naming the absolute path', () => {
    for (const [given, message] of [
      ['./nowhere', `cannot install a plugin from ${cwd}/nowhere: no such file or directory`],
      ['../gone/x', `cannot install a plugin from ${path.dirname(cwd)}/gone/x: no such file or directory`],
      ['empty', `${cwd}/empty is not a plugin package: it has no package.json`],
    ]) {
      let caught: unknown
      try {
        classifyPluginSource(given, cwd)
      } catch (error) {
        caught = error
      }

      expect(caught, given).to.be.instanceOf(YardError)
      expect((caught as YardError).code).to.equal(ExitCode.invalid)
      expect((caught as YardError).message).to.equal(message)
    }
  })
})

describe('consent to install (DESIGN.md Appendix B)', () => {
  const npm: PluginSource = {given: 'n', kind: 'npm', spec: 'n', description: 'the npm package n'}
  const local: PluginSource = {given: './p', kind: 'path', spec: 'file:/x/p', description: 'the local path /x/p'}
  const repo: PluginSource = {given: 'a/b', kind: 'git', spec: 'a/b', description: 'the git repository a/b'}

  function consent(options: {yes?: boolean; interactive?: boolean; answer?: boolean}) {
    const asked: string[] = []
    const notes: string[] = []
    return {
      asked,
      notes,
      consent: {
        yes: options.yes ?? false,
        interactive: options.interactive ?? false,
        async ask(question: string) {
          asked.push(question)
          return options.answer ?? false
        },
        note: (text: string) => notes.push(text),
      },
    }
  }

  async function outcome(promise: Promise<void>): Promise<YardError | undefined> {
    try {
      await promise
      return undefined
    } catch (error) {
      return error as YardError
    }
  }

  it('says once that plugins run code and never asks for an npm name', async () => {
    const run = consent({})
    expect(await outcome(consentToInstall([npm, npm], run.consent))).to.equal(undefined)
    expect(run.notes).to.deep.equal([PLUGIN_CODE_NOTE])
    expect(run.asked).to.deep.equal([])
  })

  it('refuses a path or git url without a terminal and without --yes (exit 3), naming both ways on', async () => {
    const run = consent({interactive: false})
    const error = await outcome(consentToInstall([npm, local, repo], run.consent))
    expect(error?.code).to.equal(ExitCode.refused)
    expect(error?.message).to.equal(
      'refused to install from the local path /x/p, the git repository a/b without confirmation',
    )
    expect(error?.fix).to.include('--yes')
    expect(error?.fix).to.include('yard plugins link PATH')
    expect(run.asked).to.deep.equal([])
  })

  it('skips the question with --yes', async () => {
    const run = consent({yes: true})
    expect(await outcome(consentToInstall([local], run.consent))).to.equal(undefined)
    expect(run.asked).to.deep.equal([])
    expect(run.notes).to.have.length(1)
  })

  it('asks once on a terminal: yes proceeds, no is exit 3', async () => {
    const yes = consent({interactive: true, answer: true})
    expect(await outcome(consentToInstall([local, repo], yes.consent))).to.equal(undefined)
    expect(yes.asked).to.deep.equal(['Install and run code from the local path /x/p, the git repository a/b?'])
    const no = consent({interactive: true, answer: false})
    const error = await outcome(consentToInstall([repo], no.consent))
    expect(error?.code).to.equal(ExitCode.refused)
    expect(error?.message).to.equal('refused: nothing installed from the git repository a/b')
  })
})
