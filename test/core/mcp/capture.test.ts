/**
 * A child that asks for the terminal when there is none to give (`yard mcp`, process.ts
 * TerminalCapture): no stdin, output handed to the capture, a time-out; and the bounded
 * captures of `exec` and `logs` (core/mcp/capture.ts).
 */
import {expect} from 'chai'

import {ExecCapture, TailCapture} from '../../../src/core/mcp/capture.js'
import {ProcessRunner} from '../../../src/sdk/process.js'

describe('terminal capture for yard mcp', () => {
  it('a child run with stdio inherit gets no stdin, and its filtered output goes to the capture, not the terminal', async () => {
    const seen: string[] = []
    const ended: boolean[] = []
    const runner = new ProcessRunner({
      capture: {write: (stream, text) => seen.push(`${stream}:${text}`), ended: ({timedOut}) => ended.push(timedOut)},
    }).withEnv({GREETING: 'hi'})
    const script =
      'let input = ""; process.stdin.on("data", (d) => (input += d)); process.stdin.on("end", () => { console.log(process.env.GREETING); console.log("chatter"); console.error("to stderr"); console.log("stdin:" + JSON.stringify(input)); process.exit(3) })'
    const result = await runner.run(process.execPath, ['-e', script], {
      stdio: 'inherit',
      allowFailure: true,
      stdoutFilter: (line) => line !== 'chatter',
    })
    expect(result.exitCode).to.equal(3)
    expect(
      seen
        .filter((chunk) => chunk.startsWith('stdout:'))
        .join('')
        .replaceAll('stdout:', ''),
    ).to.equal('hi\nstdin:""\n')
    expect(seen.filter((chunk) => chunk.startsWith('stderr:')).join('')).to.equal('stderr:to stderr\n')
    expect(ended).to.deep.equal([false])
  })

  it("kills such a child after the capture's time-out: exit 124, said to the capture", async () => {
    const capture = new ExecCapture(1024, 300)
    const started = Date.now()
    const result = await new ProcessRunner({capture}).run('sh', ['-c', 'echo before; sleep 20; echo after'], {
      stdio: 'inherit',
      allowFailure: true,
    })
    expect(Date.now() - started).to.be.below(5000)
    expect(result.exitCode).to.equal(124)
    expect(capture.timedOut).to.equal(true)
    expect(capture.result().stdout).to.equal('before\n')
  })

  it('runs without stdio inherit are not captured and keep their own budget', async () => {
    const seen: string[] = []
    const result = await new ProcessRunner({capture: {timeoutMs: 1, write: (_stream, text) => seen.push(text)}}).run(
      'sh',
      ['-c', 'sleep 0.2; echo piped'],
    )
    expect(result.stdout).to.equal('piped\n')
    expect(seen).to.deep.equal([])
  })

  it("exec's capture keeps each stream up to its cap and counts every byte", () => {
    const capture = new ExecCapture(8, 1000)
    capture.write('stdout', 'abcdef')
    capture.write('stdout', 'ghijkl')
    capture.write('stderr', 'é'.repeat(5))
    expect(capture.result()).to.deep.equal({
      stdout: 'abcdefgh',
      stderr: 'éééé',
      stdoutBytes: 12,
      stderrBytes: 10,
      truncated: true,
      outputCapBytes: 8,
    })
    const small = new ExecCapture(8, 1000)
    small.write('stdout', 'ok\n')
    expect(small.result()).to.include({stdout: 'ok\n', truncated: false})
  })

  it("logs' capture keeps the last lines of both streams, however they were split", () => {
    const capture = new TailCapture(3, 1000)
    capture.write('stdout', 'web | one\nweb | t')
    capture.write('stderr', 'db | err\n')
    capture.write('stdout', 'wo\nweb | three\nweb | four')
    expect(capture.lines()).to.deep.equal(['web | two', 'web | three', 'web | four'])
    expect(capture.total).to.equal(5)
  })
})
