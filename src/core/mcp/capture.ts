/**
 * Where `yard mcp` puts what a child that asks for the terminal writes (process.ts,
 * TerminalCapture): stdout carries the protocol, so `exec` and `logs` output is kept, bounded,
 * for the tool's result; anything else such a child writes goes to stderr.
 */
import type {TerminalCapture} from '../../sdk/process.js'

/** Passes such output on to stderr: the server's log, never its protocol channel. */
export const STDERR_CAPTURE: TerminalCapture = {
  write: (_stream, text) => process.stderr.write(text),
}

/** One stream's first `cap` bytes (UTF-8), and how many bytes came in all. */
class CappedText {
  private readonly chunks: Buffer[] = []
  private kept = 0
  bytes = 0

  constructor(private readonly cap: number) {}

  add(text: string): void {
    const buffer = Buffer.from(text, 'utf8')
    this.bytes += buffer.length
    const room = this.cap - this.kept
    if (room <= 0) return
    const part = buffer.length > room ? buffer.subarray(0, room) : buffer
    this.chunks.push(part)
    this.kept += part.length
  }

  /** The kept bytes as text; a character cut at the cap is dropped (the decoder's U+FFFD). */
  text(): string {
    return Buffer.concat(this.chunks)
      .toString('utf8')
      .replace(/\uFFFD$/, '')
  }

  get truncated(): boolean {
    return this.bytes > this.kept
  }
}

/** `exec`'s output: stdout and stderr each kept up to `capBytes`; the command killed after `timeoutMs`. */
export class ExecCapture implements TerminalCapture {
  private readonly out: CappedText
  private readonly err: CappedText
  timedOut = false

  constructor(
    readonly capBytes: number,
    readonly timeoutMs: number,
  ) {
    this.out = new CappedText(capBytes)
    this.err = new CappedText(capBytes)
  }

  write(stream: 'stdout' | 'stderr', text: string): void {
    ;(stream === 'stdout' ? this.out : this.err).add(text)
  }

  ended(outcome: {timedOut: boolean}): void {
    this.timedOut ||= outcome.timedOut
  }

  /** The result fields: the text kept, the bytes seen, and whether the cap cut either stream. */
  result(): {
    stdout: string
    stderr: string
    stdoutBytes: number
    stderrBytes: number
    truncated: boolean
    outputCapBytes: number
  } {
    return {
      stdout: this.out.text(),
      stderr: this.err.text(),
      stdoutBytes: this.out.bytes,
      stderrBytes: this.err.bytes,
      truncated: this.out.truncated || this.err.truncated,
      outputCapBytes: this.capBytes,
    }
  }
}

/** `logs`' output: the last `tail` lines of both streams as they came; `total` counts every line. */
export class TailCapture implements TerminalCapture {
  private readonly ring: string[] = []
  private partial = {stdout: '', stderr: ''}
  total = 0

  constructor(
    private readonly tail: number,
    readonly timeoutMs: number,
  ) {}

  write(stream: 'stdout' | 'stderr', text: string): void {
    const parts = (this.partial[stream] + text).split('\n')
    this.partial[stream] = parts.pop() ?? ''
    for (const line of parts) this.push(line)
  }

  private push(line: string): void {
    this.total++
    this.ring.push(line)
    if (this.ring.length > this.tail) this.ring.shift()
  }

  /** The last lines, oldest first (an unfinished last line included). */
  lines(): string[] {
    for (const stream of ['stdout', 'stderr'] as const) {
      if (this.partial[stream] !== '') this.push(this.partial[stream])
      this.partial[stream] = ''
    }

    return [...this.ring]
  }
}
