/**
 * Reading a file yard kept for itself (the config cache, the owner, the build id) without trusting
 * what sits at its path: a FIFO or a device planted there must not hang or flood a command.
 */
import {closeSync, constants, fstatSync, openSync, readFileSync} from 'node:fs'

/**
 * The text of `file` when it is a regular file of at most `maxBytes` bytes, else undefined (absent,
 * unreadable, a directory, a FIFO or a device — opened without blocking, so a FIFO planted in its
 * place never hangs a command —, or too large). Never throws.
 */
export function readKeptFile(file: string, maxBytes: number): string | undefined {
  let descriptor: number | undefined
  try {
    descriptor = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK)
    const stat = fstatSync(descriptor)
    if (!stat.isFile() || stat.size > maxBytes) return undefined
    return readFileSync(descriptor, 'utf8')
  } catch {
    return undefined
  } finally {
    if (descriptor !== undefined) closeSync(descriptor)
  }
}
