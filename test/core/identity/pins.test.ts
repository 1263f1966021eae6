import {expect} from 'chai'
import {existsSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {parse} from 'smol-toml'

import {editPinText, pinAuthor, removeYardPin, restorePinFile, writePin} from '../../../src/core/identity/pins.js'
import {cleanupTemp, tempDir} from '../../support/repo.js'

const LOCAL = `# my personal yard settings
[ports]
APP_PORT = 3100 # moved: 3000 is taken on this laptop

[worktree-offsets]
# keep feat where my bookmarks expect it
feat = 12   # do not touch

[machine]
cpus = 4
`

describe('offset pins: text edits of [worktree-offsets] (DESIGN.md §3.4)', () => {
  afterEach(cleanupTemp)

  describe('editPinText', () => {
    it("adds a pin after the table's last pin, keeping every comment and the other tables", () => {
      const text = editPinText(LOCAL, 'alpha', 1)
      expect(text).to.equal(LOCAL.replace('feat = 12   # do not touch\n', 'feat = 12   # do not touch\nalpha = 1\n'))
      expect(parse(text)).to.deep.equal({
        ports: {APP_PORT: 3100},
        'worktree-offsets': {feat: 12, alpha: 1},
        machine: {cpus: 4},
      })
    })

    it('changes a value in place, keeping indentation and the trailing comment', () => {
      expect(editPinText(LOCAL, 'feat', 7)).to.equal(
        LOCAL.replace('feat = 12   # do not touch', 'feat = 7   # do not touch'),
      )
      expect(editPinText('[worktree-offsets]\n  "feat"=3\n', 'feat', 9)).to.equal('[worktree-offsets]\n  feat = 9\n')
    })

    it("deletes only the pin's line", () => {
      expect(editPinText(LOCAL, 'feat', undefined)).to.equal(LOCAL.replace('feat = 12   # do not touch\n', ''))
      expect(editPinText(LOCAL, 'nope', undefined)).to.equal(LOCAL)
    })

    it('appends the table when there is none, and writes a new file from nothing', () => {
      expect(editPinText('', 'alpha', 5)).to.equal('[worktree-offsets]\nalpha = 5\n')
      expect(editPinText('[ports]\nAPP_PORT = 3000', 'alpha', 5)).to.equal(
        '[ports]\nAPP_PORT = 3000\n\n[worktree-offsets]\nalpha = 5\n',
      )
    })

    it('keeps CRLF line endings and does not take a pin of the same name from another table', () => {
      const crlf = '[other]\r\nalpha = "x"\r\n[worktree-offsets]\r\n'
      expect(editPinText(crlf, 'alpha', 4)).to.equal('[other]\r\nalpha = "x"\r\n[worktree-offsets]\r\nalpha = 4\r\n')
    })

    it("does not match a longer name that starts with the pin's name", () => {
      expect(editPinText('[worktree-offsets]\nfeat-2 = 3\n', 'feat', 4)).to.equal(
        '[worktree-offsets]\nfeat-2 = 3\nfeat = 4\n',
      )
    })
  })

  describe('pins yard wrote', () => {
    it('marks a pin yard writes with a trailing "# yard:" comment, new or changed in place', () => {
      expect(editPinText(LOCAL, 'alpha', 1, 'clash with feat')).to.include(
        'feat = 12   # do not touch\nalpha = 1 # yard: clash with feat\n',
      )
      expect(
        editPinText('[worktree-offsets]\n  alpha = 4 # yard: clash with b\n', 'alpha', 5, 'clash with c'),
      ).to.equal('[worktree-offsets]\n  alpha = 5 # yard: clash with c\n')
      expect(parse(editPinText(LOCAL, 'alpha', 1, 'clash with feat'))).to.have.nested.property(
        'worktree-offsets.alpha',
        1,
      )
    })

    it('tells a pin yard wrote from a hand-written one', () => {
      const text = `${LOCAL}[worktree-offsets]\n`.replace(
        'feat = 12   # do not touch\n',
        'feat = 12   # do not touch\nalpha = 1 # yard: clash with feat\n',
      )
      expect(pinAuthor(text, 'alpha')).to.equal('yard')
      expect(pinAuthor(text, 'feat')).to.equal('hand')
      expect(pinAuthor(text, 'ghost')).to.equal(undefined)
      expect(pinAuthor('[other]\nalpha = 1 # yard: x\n', 'alpha')).to.equal(undefined)
    })

    it('removeYardPin deletes the pins yard wrote and keeps hand-written ones', async () => {
      const file = path.join(tempDir(), 'yard.local.toml')
      writeFileSync(file, LOCAL)
      await writePin(file, 'alpha', 1, 'clash with feat')
      expect(await removeYardPin(file, 'feat')).to.equal('kept')
      expect(await removeYardPin(file, 'alpha')).to.equal('removed')
      expect(await removeYardPin(file, 'ghost')).to.equal('absent')
      expect(readFileSync(file, 'utf8')).to.equal(LOCAL)
    })
  })

  describe('writePin', () => {
    it('writes, changes and deletes a pin, with comments intact, atomically', async () => {
      const file = path.join(tempDir(), 'yard.local.toml')
      writeFileSync(file, LOCAL)
      expect(await writePin(file, 'alpha', 1)).to.deep.equal({previous: undefined, text: LOCAL})
      expect(await writePin(file, 'alpha', 2)).to.have.property('previous', 1n)
      expect(readFileSync(file, 'utf8')).to.include(
        '# keep feat where my bookmarks expect it\nfeat = 12   # do not touch\nalpha = 2\n',
      )
      expect(await writePin(file, 'alpha', undefined)).to.have.property('previous', 2n)
      expect(readFileSync(file, 'utf8')).to.equal(LOCAL)
      expect(readdirSync(path.dirname(file))).to.deep.equal(['yard.local.toml'])
    })

    it('creates the file when it is missing, and changes nothing when the pin is already so; restorePinFile undoes', async () => {
      const file = path.join(tempDir(), 'yard.local.toml')
      const created = await writePin(file, 'alpha', 3)
      expect(created).to.deep.equal({previous: undefined, text: undefined})
      expect(readFileSync(file, 'utf8')).to.equal('[worktree-offsets]\nalpha = 3\n')
      await writePin(file, 'alpha', 3)
      await writePin(file, 'beta', undefined)
      expect(readFileSync(file, 'utf8')).to.equal('[worktree-offsets]\nalpha = 3\n')
      await restorePinFile(file, created.text)
      expect(existsSync(file)).to.equal(false)
    })

    it('refuses (exit 1) a layout its text edit cannot handle, leaving the file as it was', async () => {
      const file = path.join(tempDir(), 'yard.local.toml')
      const dotted = '# pins as dotted keys\nworktree-offsets.feat = 12\n'
      writeFileSync(file, dotted)
      const error = (await writePin(file, 'alpha', 1).catch((error_: unknown) => error_)) as {
        code: number
        message: string
        fix: string
      }
      expect(error).to.include({code: 1})
      expect(error.message).to.include('without changing anything else')
      expect(error.fix).to.include('[worktree-offsets] header')
      expect(readFileSync(file, 'utf8')).to.equal(dotted)
    })

    it('refuses (exit 1) a file that is not valid TOML, naming line and column', async () => {
      const file = path.join(tempDir(), 'yard.local.toml')
      writeFileSync(file, '[worktree-offsets]\nfeat = = 1\n')
      const error = (await writePin(file, 'alpha', 1).catch((error_: unknown) => error_)) as {
        code: number
        message: string
      }
      expect(error).to.include({code: 1})
      expect(error.message).to.match(/yard\.local\.toml:2:\d+ is not valid TOML/)
    })
  })
})
