import {expect} from 'chai'
import {PassThrough} from 'node:stream'

import {confirm} from '../../src/tui/confirm.js'

/** A fake terminal: input that says it is a TTY, output collected. */
function terminal() {
  const input = Object.assign(new PassThrough(), {isTTY: true})
  const output = new PassThrough()
  let shown = ''
  output.on('data', (chunk) => (shown += chunk))
  return {input, output, shown: () => shown}
}

describe('confirm (DESIGN.md Appendix B)', () => {
  for (const [typed, expected] of [
    ['y\r', true],
    ['YES\r', true],
    ['n\r', false],
    ['\r', false],
    ['maybe\r', false],
  ] as const) {
    it(`answers ${expected} for ${JSON.stringify(typed)}`, async () => {
      const tty = terminal()
      const answer = confirm('Remove worktree feat?', tty)
      tty.input.write(typed)
      expect(await answer).to.equal(expected)
      expect(tty.shown()).to.include('Remove worktree feat? [y/N] ')
    })
  }

  it('declines at end of input', async () => {
    const tty = terminal()
    const answer = confirm('Remove?', tty)
    tty.input.end()
    expect(await answer).to.equal(false)
  })

  it('cancels with exit code 130 on Ctrl-C', async () => {
    const tty = terminal()
    const answer = confirm('Remove?', tty)
    tty.input.write('\u0003')
    const error = (await answer.catch((error_: unknown) => error_)) as {code: number; message: string}
    expect(error).to.include({code: 130, message: 'cancelled'})
  })
})
