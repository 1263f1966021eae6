/**
 * Reading a file yard kept for itself (the config cache, the owner, the build id, an add's journal)
 * without trusting what sits at its path: a FIFO or a device planted there must not hang or flood
 * a command.
 */
import {closeSync, constants, fstatSync, openSync, readFileSync} from 'node:fs'

/** What reading a kept file gave: its text, or why there is none (`absent`, or a few words). */
export type KeptRead = {text: string} | {problem: 'absent' | string}

/**
 * The text of `file` when it is a regular file of at most `maxBytes` bytes; else `absent` (ENOENT)
 * or the problem in a few words (`it is not a regular file` — a directory, a FIFO, a device —,
 * `it is larger than N bytes`, `it cannot be read (CODE)`). It is opened without blocking, so a
 * FIFO planted in its place never hangs a command. Never throws.
 */
export function readRegularFile(file: string, maxBytes: number): KeptRead {
  let descriptor: number | undefined
  try {
    descriptor = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK)
    const stat = fstatSync(descriptor)
    if (!stat.isFile()) return {problem: 'it is not a regular file'}
    if (stat.size > maxBytes) return {problem: `it is larger than ${maxBytes} bytes`}
    return {text: readFileSync(descriptor, 'utf8')}
  } catch (error) {
    const {code} = error as NodeJS.ErrnoException
    return {problem: code === 'ENOENT' ? 'absent' : `it cannot be read (${code ?? String(error)})`}
  } finally {
    if (descriptor !== undefined) closeSync(descriptor)
  }
}

/** readRegularFile's text, else undefined (absent, or no regular file within `maxBytes`). Never throws. */
export function readKeptFile(file: string, maxBytes: number): string | undefined {
  const read = readRegularFile(file, maxBytes)
  return 'text' in read ? read.text : undefined
}
