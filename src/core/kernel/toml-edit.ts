/**
 * Checked text edits of yard's own TOML files (yard.local.toml's offset pins and trust records):
 * read the text and its tables, edit the text, re-parse and compare, then write atomically. The
 * edit itself is the caller's; this module reads and writes.
 */
import {promises as fs} from 'node:fs'
import {parse, TomlError} from 'smol-toml'

import {OperationError} from '../../sdk/errors.js'
import {atomicWrite} from './atomic-write.js'

export type TomlTable = Record<string, unknown>

/** A TOML text's tables, integers as bigint (so `3` and `3.0` stay apart). @throws TomlError. */
export function parseTomlTables(text: string): TomlTable {
  return parse(text, {integersAsBigInt: true})
}

/**
 * `file` read for an edit: its text (`''` when the file does not exist), the original text
 * (undefined then, for a restore that deletes the file) and its tables.
 * @throws OperationError (exit 1) when the file cannot be read, or is not valid TOML (naming the
 *   line and column); `doing` says what yard was about to do (`update the offset pin of feat`).
 */
export async function readTomlForEdit(
  file: string,
  doing: string,
): Promise<{original: string | undefined; text: string; before: TomlTable}> {
  const original = await fs.readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined
    throw new OperationError(`cannot read ${file}: ${error.message}`, {fix: 'check the file and its directory'})
  })
  const text = original ?? ''
  try {
    return {original, text, before: parseTomlTables(text)}
  } catch (error) {
    const where = error instanceof TomlError ? `:${error.line}:${error.column}` : ''
    throw new OperationError(`cannot ${doing}: ${file}${where} is not valid TOML`, {
      why: (error as Error).message.split('\n', 1)[0],
      fix: `correct ${file}, then run the command again`,
    })
  }
}

/** Writes an edited text in place of `file`, atomically (atomic-write.ts). @throws OperationError (exit 1). */
export async function writeTomlEdit(file: string, text: string): Promise<void> {
  try {
    await atomicWrite(file, text)
  } catch (error) {
    throw new OperationError(`cannot write ${file}: ${(error as Error).message}`, {
      fix: 'check the file and its directory',
      cause: error,
    })
  }
}
