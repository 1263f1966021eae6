/**
 * A yes/no question on a terminal (DESIGN.md Appendix B): `y` or `yes` confirms; anything else,
 * or end of input, declines; Ctrl-C cancels. Streams are passed in, so tests drive it with their
 * own.
 */
import {createInterface} from 'node:readline'

import {ExitCode, YardError} from '../sdk/errors.js'

export interface PromptStreams {
  input: NodeJS.ReadableStream & {isTTY?: boolean}
  output: NodeJS.WritableStream
}

/** The error of a prompt cancelled with Ctrl-C: exit 130. */
export function cancelled(): YardError {
  return new YardError(ExitCode.cancelled, 'cancelled', {why: 'Ctrl-C at the prompt; nothing was changed'})
}

/**
 * Asks `question` (followed by ` [y/N] `) and resolves true for yes.
 * @throws YardError (exit 130) when cancelled with Ctrl-C.
 */
export async function confirm(question: string, streams: PromptStreams): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const prompt = createInterface({
      input: streams.input,
      output: streams.output,
      terminal: streams.input.isTTY === true,
    })
    let settled = false
    const settle = (outcome: () => void) => {
      if (settled) return
      settled = true
      prompt.close()
      outcome()
    }

    // On a terminal readline reads Ctrl-C as a key and emits SIGINT here instead of killing us.
    prompt.on('SIGINT', () => {
      streams.output.write('\n')
      settle(() => reject(cancelled()))
    })
    prompt.on('close', () => settle(() => resolve(false)))
    prompt.question(`${question} [y/N] `, (answer) => settle(() => resolve(/^\s*y(es)?\s*$/i.test(answer))))
  })
}
