import {expect} from 'chai'
import {chmodSync, mkdirSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {parse} from 'smol-toml'

import {loadConfig} from '../../../src/core/config/config.js'
import {addToGitignore, GITIGNORE_ENTRIES, yardTomlTemplate} from '../../../src/core/config/init.js'
import {cleanupTemp, tempDir} from '../../support/repo.js'

/** The template with every commented-out `key = value` line switched on. */
const uncommentAll = (text: string) => text.replaceAll(/^# ([A-Za-z][\w-]* = .*)$/gm, '$1')

describe('yard init core (DESIGN.md §3.2, §4.1)', () => {
  afterEach(cleanupTemp)

  describe('yardTomlTemplate', () => {
    it('is valid with every example switched on: the config loader accepts every key it shows', async () => {
      const main = path.join(tempDir(), 'shop')
      const text = uncommentAll(yardTomlTemplate({mainDirectoryName: 'shop'}))
      expect(text).not.to.match(/^# [a-z][\w-]* = /m)
      mkdirSync(main)
      writeFileSync(path.join(main, 'yard.toml'), text)
      const config = await loadConfig({mainPath: main, env: {}})
      expect(config.project.prefix).to.equal('shop')
      expect(config.worktrees.root).to.equal(`${main}-worktrees`)
      expect(config.ports).to.deep.equal({APP_PORT: 3000, DB_PORT: 5432})
      expect(config.stack).to.deep.include({provider: 'auto', files: ['compose.yaml']})
      expect(config.cluster).to.deep.include({runtime: 'podman', namespace: 'yard'})
      for (const key of [
        'project.prefix',
        'worktrees.root',
        'worktrees.base',
        'worktrees.transcripts-archive',
        'ports.APP_PORT',
        'stack.files',
        'stack.provider',
        'box.image',
        'cache.root',
        'cluster.runtime',
        'cluster.context',
        'cluster.namespace',
        'cluster.image',
      ]) {
        expect(config.origins[key], key).to.equal('yard.toml')
      }
    })

    it('keeps defaults commented out; --prefix becomes a value; keys are kebab-case', async () => {
      const plain = parse(yardTomlTemplate({mainDirectoryName: 'My App'}))
      expect(plain).to.deep.equal({project: {}, worktrees: {}, ports: {}, stack: {}, box: {}, cache: {}, cluster: {}})
      const text = yardTomlTemplate({mainDirectoryName: 'My App', prefix: 'shop'})
      expect(parse(text)).to.have.deep.property('project', {prefix: 'shop'})
      const keys = [...uncommentAll(text).matchAll(/^([a-z][\w-]*) = /gm)].map((match) => match[1])
      expect(keys).to.include.members([
        'prefix',
        'root',
        'base',
        'transcripts-archive',
        'files',
        'provider',
        'image',
        'runtime',
        'context',
        'namespace',
      ])
      for (const key of keys) expect(key).to.match(/^[a-z]+(-[a-z]+)*$/)
    })

    it('quotes odd directory names in the commented examples', async () => {
      const text = yardTomlTemplate({mainDirectoryName: String.raw`we"ird\dir`})
      expect(text).to.include(String.raw`# root = "../we\"ird\\dir-worktrees"`)
      expect(parse(uncommentAll(text))).to.have.nested.property('worktrees.root', String.raw`../we"ird\dir-worktrees`)
    })
  })

  describe('addToGitignore', () => {
    const cases: Array<{title: string; before: string | undefined; after: string; added: string[]}> = [
      {
        title: 'creates a missing file',
        before: undefined,
        after: 'yard.local.toml\n.yard/\n',
        added: ['yard.local.toml', '.yard/'],
      },
      {
        title: 'handles an empty file',
        before: '',
        after: 'yard.local.toml\n.yard/\n',
        added: ['yard.local.toml', '.yard/'],
      },
      {
        title: 'adds the missing final newline first',
        before: 'dist',
        after: 'dist\nyard.local.toml\n.yard/\n',
        added: ['yard.local.toml', '.yard/'],
      },
      {
        title: 'counts /entry and entry without a trailing slash as present',
        before: '/yard.local.toml\n.yard\n',
        after: '/yard.local.toml\n.yard\n',
        added: [],
      },
      {
        title: 'keeps CRLF line endings and adds only what is missing',
        before: 'node_modules\r\n.yard/\r\n',
        after: 'node_modules\r\n.yard/\r\nyard.local.toml\r\n',
        added: ['yard.local.toml'],
      },
      {
        title: 'does not take a comment or a negation for an entry',
        before: '# yard.local.toml\n!.yard/\n',
        after: '# yard.local.toml\n!.yard/\nyard.local.toml\n.yard/\n',
        added: ['yard.local.toml', '.yard/'],
      },
    ]
    for (const {title, before, after, added} of cases) {
      it(title, async () => {
        const file = path.join(tempDir(), '.gitignore')
        if (before !== undefined) writeFileSync(file, before)
        expect(await addToGitignore(file, GITIGNORE_ENTRIES)).to.deep.equal(added)
        expect(readFileSync(file, 'utf8')).to.equal(after)
        expect(await addToGitignore(file, GITIGNORE_ENTRIES)).to.deep.equal([])
        expect(readFileSync(file, 'utf8')).to.equal(after)
      })
    }

    it('keeps the file mode', async () => {
      const file = path.join(tempDir(), '.gitignore')
      writeFileSync(file, 'x\n')
      chmodSync(file, 0o600)
      await addToGitignore(file, GITIGNORE_ENTRIES)
      expect(statSync(file).mode & 0o777).to.equal(0o600)
    })
  })
})
