/**
 * The dashboard's keys on a real terminal at 80×24 and 120×35 (docs/dashboard.md "Keys"):
 * `runDashboard` in a tmux pane (test/support/dashboard-pane.tsx) over rows in memory, so the
 * screen, its wrapping and its hand-overs (`e`, `l`) are the real ones. The core behind `x`,
 * `b` and `l` is covered by test/tui/dashboard-tmux.test.ts on real podman.
 */
import {expect} from 'chai'
import path from 'node:path'
import {pathToFileURL} from 'node:url'

import {LONG_PLAN} from '../support/dashboard-memory.js'
import {cleanupTemp, tempDir} from '../support/repo.js'
import {openPane, type TmuxPane} from '../support/tmux.js'
import {projectRoot} from '../support/yard.js'

const harness = path.join(projectRoot, 'test', 'support', 'dashboard-pane.tsx')
const tsx = pathToFileURL(path.join(projectRoot, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href
const quote = (word: string) => `'${word.replaceAll("'", String.raw`'\''`)}'`
const selected = (text: string) =>
  text
    .split('\n')
    .find((line) => line.startsWith('›'))
    ?.split(/\s+/, 2)[1]
const rowNames = (text: string) =>
  text
    .split('\n')
    .filter((line) => /^[› ] (main|w\d+|sbx|extra)\s/.test(line))
    .map((line) => line.split(/\s+/, 2)[1])

for (const [width, height] of [
  [80, 24],
  [120, 35],
] as const) {
  describe(`dashboard keys in a ${width}×${height} tmux pane`, function () {
    this.timeout(120_000)
    let pane: TmuxPane
    let broken: string | undefined
    // Each step goes on from the screen the one before left.
    beforeEach(() => {
      if (broken) throw new Error(`not run: the step before failed (${broken})`)
    })

    afterEach(function () {
      if (this.currentTest?.state === 'failed') broken ??= this.currentTest.title
    })

    const wait = async (test: (text: string) => boolean, budgetMs = 15_000) => {
      const deadline = Date.now() + budgetMs
      let text = pane.screen()
      while (!test(text) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        text = pane.screen()
      }

      if (!test(text)) throw new Error(`the pane never showed what was waited for:\n${text}`)
      return text
    }

    const fits = (text: string) => {
      for (const line of text.split('\n')) expect(line.length, line).to.be.at.most(width)
    }

    before(() => {
      // Not a yard project: `e` and `l` fail in core after their banner, which is what is looked at.
      const cwd = tempDir('yardtest-dk')
      pane = openPane(`yardtest-dk-${process.pid}-${width}`, {width, height, command: 'sh'})
      pane.send(
        `cd ${quote(cwd)} && export CI=true PS1='$ '; clear; ${quote(process.execPath)} --import ${quote(tsx)} ${quote(harness)} --fade-ms 2000; echo "exit=$?"`,
        'Enter',
      )
    })

    after(() => {
      pane?.kill()
      cleanupTemp()
    })

    it('shows the rows in natural order, main first', async () => {
      const text = await wait((shown) => rowNames(shown).length === 4, 90_000)
      expect(rowNames(text)).to.deep.equal(['main', 'w1', 'w2', 'w10'])
      fits(text)
    })

    it('? shows the help and Esc closes it', async () => {
      pane.send('?')
      await wait((text) => text.includes('remove (asks first)'))
      pane.send('Escape')
      await wait((text) => !text.includes('remove (asks first)'))
    })

    it('x shows the whole plan and its y/N; the answer n declines, and the outcome fades', async () => {
      pane.send('j', 'j')
      await wait((text) => selected(text) === 'w2')
      pane.send('x')
      const text = await wait((shown) => shown.includes('y/N'))
      fits(text)
      const bottom = text.trimEnd().split('\n')
      expect(bottom.at(-1)).to.match(/remove w2\? y\/N$/)
      expect(
        text
          .split('\n')
          .map((line) => line.trim())
          .join(' '),
      ).to.include(LONG_PLAN.slice(-50))
      pane.send('n')
      await wait((shown) => shown.includes('remove w2: declined, nothing was changed'))
      await wait((shown) => !shown.includes('declined'), 10_000)
    })

    it('a long refusal opens whole above the status line, which ends with the fix', async () => {
      pane.send('j')
      await wait((text) => selected(text) === 'w10')
      pane.send('x')
      const text = await wait((shown) => shown.includes('message:'))
      fits(text)
      expect(text.trimEnd().split('\n').at(-1)).to.match(/--force$/)
      expect(text).to.include('remove w10 refused: w10 has unsaved work')
    })

    it('e prints which box and that exit returns before handing over; Enter comes back', async () => {
      pane.send('e')
      const text = await wait((shown) => shown.includes('(press Enter to go back to the dashboard)'))
      expect(text).to.include('yard: a shell in the box of w10; type exit to return to the dashboard')
      pane.send('Enter')
      await wait((shown) => selected(shown) === 'w10')
    })

    it('l says how to come back, then follows the logs (here: fails in core); Enter comes back', async () => {
      pane.send('l')
      // The normal screen still holds what e left: the logs' banner and a prompt after it.
      const banner = 'yard: following the logs of w10; Ctrl-C returns to the dashboard'
      await wait(
        (shown) =>
          shown.includes(banner) &&
          shown.slice(shown.indexOf(banner)).includes('(press Enter to go back to the dashboard)'),
      )
      pane.send('Enter')
      await wait((shown) => selected(shown) === 'w10')
    })

    it('in cluster mode u says why it does not apply, x removes the sandbox after y, and the empty screen says n makes one', async () => {
      pane.send('Tab')
      await wait((text) => selected(text) === 'sbx')
      pane.send('u')
      await wait((text) => text.includes('u: a sandbox has no stack to start'))
      pane.send('x')
      const asked = await wait((text) => /remove sbx\? y\/N$/m.test(text))
      fits(asked)
      pane.send('y')
      await wait((text) => text.includes('no sandboxes: n makes one') && text.includes('removed sandbox sbx'))
    })

    it('n makes a sandbox and the selection moves onto it; q quits with 0', async () => {
      pane.send('n')
      pane.send('-l', 'extra')
      await wait((text) => text.includes('✓ Enter creates sandbox extra'))
      pane.send('Enter')
      await wait((text) => selected(text) === 'extra')
      pane.send('q')
      await wait((text) => /^exit=0/m.test(text))
    })
  })
}
