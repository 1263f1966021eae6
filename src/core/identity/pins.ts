/**
 * Offset pins (DESIGN.md §3.4): the `[worktree-offsets]` table of the main checkout's
 * `yard.local.toml`, edited as text so that comments, blank lines and every other table survive.
 * Each edit is re-parsed and compared with what was meant before it replaces the file
 * (atomically). Callers hold the project's offsets lock around an edit (offset-allocator.ts
 * `withOffsetsLock`, which also decides and undoes the pins).
 * A pin yard writes carries a trailing `# yard: <why>` comment (`YARD_PIN_MARK`); removals delete
 * only those, so a pin a person wrote (a port an OAuth callback allowlist knows) outlives the
 * worktree.
 */
import {promises as fs} from 'node:fs'
import path from 'node:path'

import type {YardContext} from '../kernel/context.js'
import type {Workspace} from '../workspace/workspace.js'

import {InputError, OperationError} from '../../sdk/errors.js'
import {LOCAL_CONFIG_FILE} from '../config/config.js'
import {atomicWrite} from '../kernel/atomic-write.js'
import {parseTomlTables, readTomlForEdit, writeTomlEdit} from '../kernel/toml-edit.js'

export const PINS_TABLE = 'worktree-offsets'

type Table = Record<string, unknown>

const HEADER = /^\s*\[\s*(?:worktree-offsets|"worktree-offsets"|'worktree-offsets')\s*\]\s*(?:#.*)?$/
const ANY_HEADER = /^\s*\[/

/** The start of the trailing comment that marks a pin yard wrote: `alpha = 1 # yard: clash with feat`. */
export const YARD_PIN_MARK = '# yard:'

function keyLine(name: string): RegExp {
  return new RegExp(String.raw`^\s*(?:${name}|"${name}"|'${name}')\s*=`)
}

/**
 * The text with `name`'s pin set to `offset` (`offset` undefined: the pin's line removed).
 * An existing line keeps its indentation and trailing comment; a new line goes after the
 * table's last pin (in a table without pins, after its last comment line); a missing table is
 * appended at the end.
 * With `note`, the line's trailing comment becomes `# yard: <note>` (the mark of a pin yard wrote).
 * Pure: no fs. `name` must be a valid name (DESIGN.md §3.1), so it is a bare TOML key.
 */
export function editPinText(text: string, name: string, offset: number | undefined, note?: string): string {
  const entry = `${name} = ${offset}${note === undefined ? '' : ` ${YARD_PIN_MARK} ${note.replaceAll(/[\r\n]+/g, ' ')}`}`
  const eol = text.includes('\r\n') ? '\r\n' : '\n'
  const lines = text === '' ? [] : text.split(/\r?\n/)
  // A final newline leaves one empty element behind; keep it out of the table's range.
  const trailingNewline = lines.length > 0 && lines.at(-1) === ''
  if (trailingNewline) lines.pop()
  const header = lines.findIndex((line) => HEADER.test(line))
  if (header === -1) {
    if (offset === undefined) return text
    const body = lines.length === 0 ? [] : [...lines, '']
    return [...body, `[${PINS_TABLE}]`, entry].join(eol) + eol
  }

  let end = lines.length
  for (let index = header + 1; index < lines.length; index++) {
    if (ANY_HEADER.test(lines[index])) {
      end = index
      break
    }
  }

  const pattern = keyLine(name)
  const at = lines.findIndex((line, index) => index > header && index < end && pattern.test(line))
  if (at !== -1) {
    if (offset === undefined) lines.splice(at, 1)
    else if (note === undefined) {
      lines[at] = lines[at].replace(/^(\s*)[^=]*=\s*[^#]*?(\s*(?:#.*)?)$/, `$1${name} = ${offset}$2`)
    } else {
      lines[at] = lines[at].replace(/^(\s*).*$/, `$1${entry}`)
    }
  } else if (offset !== undefined) {
    // After the last pin; in a table without pins, after its last comment ("# pins go below").
    let lastPin = -1
    let lastText = header
    for (let index = header + 1; index < end; index++) {
      if (/^\s*[^\s#]/.test(lines[index])) lastPin = index
      if (lines[index].trim() !== '') lastText = index
    }

    lines.splice((lastPin === -1 ? lastText : lastPin) + 1, 0, entry)
  }

  return lines.join(eol) + (trailingNewline || lines.length > 0 ? eol : '')
}

/**
 * Checks, before anything is created, that `writePin` could set `name`'s pin in `file` (absent is
 * fine): the same text edit and re-parse, with nothing written.
 * @throws InputError (exit 2) for a layout the text edit cannot handle (pins as dotted keys
 *   `worktree-offsets.feat = 3`, an inline table), naming the file and the layout that works.
 */
export async function checkPinFile(file: string, name: string): Promise<void> {
  const text = await fs.readFile(file, 'utf8').catch(() => undefined)
  if (text === undefined) return
  let before: Table
  try {
    before = parseTomlTables(text)
  } catch {
    return // Config loading reports a syntax error with file, line and column.
  }

  const pins = (before[PINS_TABLE] as Table | undefined) ?? {}
  const offset = typeof pins[name] === 'bigint' && pins[name] === 1n ? 2 : 1
  if (!editKeepsTheRest(before, editPinText(text, name, offset), name, offset)) {
    throw new InputError(`${file} writes [${PINS_TABLE}] in a layout yard cannot edit`, {
      why: `yard may need to pin ${name}'s offset there, and edits the [${PINS_TABLE}] table as text; pins as dotted keys (\`${PINS_TABLE}.${name} = 3\`) or an inline table defeat that`,
      fix: `write the pins as \`name = offset\` lines under a [${PINS_TABLE}] header in ${file}, then run the command again`,
    })
  }
}

/** Whether `edited` holds `before` with exactly `name`'s pin set to `offset` (undefined: deleted). */
function editKeepsTheRest(before: Table, edited: string, name: string, offset: number | undefined): boolean {
  const pins = {...(before[PINS_TABLE] as Table | undefined)}
  if (offset === undefined) delete pins[name]
  else pins[name] = BigInt(offset)
  const expected = {...before, [PINS_TABLE]: pins}
  let after: Table
  try {
    after = parseTomlTables(edited)
  } catch {
    return false
  }

  const keep = (table: Table) =>
    Object.fromEntries(
      Object.entries(table).filter(([key, value]) => !(key === PINS_TABLE && Object.keys(value as Table).length === 0)),
    )
  return canonical(keep(after)) === canonical(keep(expected))
}

const canonical = (value: unknown) =>
  JSON.stringify(value, (_key, item) => (typeof item === 'bigint' ? `${item}n` : item))

/** What `writePin` replaced: the pin's previous value and the file's previous text (undefined: no file). */
export interface PinWrite {
  previous: unknown
  text: string | undefined
}

/**
 * Sets (`offset` a number) or deletes (`offset` undefined) the pin of `name` in `file`.
 * Re-parses the edited text and writes it only when `[worktree-offsets]` holds exactly the
 * intended change and every other value is unchanged. No change, no write.
 * @returns the pin's previous value (undefined when there was none) and the file's previous text
 *   (undefined when there was no file), for `restorePinFile`.
 * @throws OperationError (exit 1) when the file cannot be read, parsed or written, or when the
 *   edit would change anything else (an unusual layout such as a dotted `worktree-offsets.x`
 *   key), naming the file and what to do.
 */
export async function writePin(
  file: string,
  name: string,
  offset: number | undefined,
  note?: string,
): Promise<PinWrite> {
  const {original, text, before} = await readTomlForEdit(file, `update the offset pin of ${name}`)
  const pins = {...(before[PINS_TABLE] as Table | undefined)}
  const previous = pins[name]
  if (offset === undefined ? previous === undefined : typeof previous === 'bigint' && previous === BigInt(offset))
    return {previous, text: original}
  const edited = editPinText(text, name, offset, note)
  if (!editKeepsTheRest(before, edited, name, offset)) {
    throw new OperationError(
      `could not ${offset === undefined ? 'delete' : 'write'} the offset pin of ${name} in ${file} without changing anything else`,
      {
        why: `yard edits the [${PINS_TABLE}] table as text and checks the result; this file's layout (a dotted or inline ${PINS_TABLE} key?) defeats that`,
        fix: `write the pins as \`name = offset\` lines under a [${PINS_TABLE}] header in ${file}, then run the command again${offset === undefined ? '' : ` (or add \`${name} = ${offset}\` yourself)`}`,
      },
    )
  }

  await writeTomlEdit(file, edited)
  return {previous, text: original}
}

/**
 * Whose `name`'s pin in `text` is: `yard` (its line carries `YARD_PIN_MARK`), `hand`, or undefined
 * (no pin line). Pure.
 */
export function pinAuthor(text: string, name: string): 'yard' | 'hand' | undefined {
  const lines = text.split(/\r?\n/)
  const header = lines.findIndex((line) => HEADER.test(line))
  if (header === -1) return undefined
  const pattern = keyLine(name)
  for (let index = header + 1; index < lines.length && !ANY_HEADER.test(lines[index]); index++) {
    if (pattern.test(lines[index])) return /#\s*yard:/.test(lines[index]) ? 'yard' : 'hand'
  }

  return undefined
}

/**
 * Deletes `name`'s pin from `file` when yard wrote it (`pinAuthor` is `yard`); a hand-written pin
 * stays. Callers hold the offsets lock.
 * @returns `removed`, `kept` (hand-written: the caller says so) or `absent`.
 * @throws OperationError (exit 1) as `writePin`.
 */
export async function removeYardPin(file: string, name: string): Promise<'removed' | 'kept' | 'absent'> {
  const text = await fs.readFile(file, 'utf8').catch(() => '')
  const author = pinAuthor(text, name)
  if (author !== 'yard') return author === 'hand' ? 'kept' : 'absent'
  await writePin(file, name, undefined)
  return 'removed'
}

/** Puts back the text `writePin` replaced (undefined: the file did not exist, so it goes). */
export async function restorePinFile(file: string, text: string | undefined): Promise<void> {
  await (text === undefined ? fs.rm(file, {force: true}) : atomicWrite(file, text))
}

/**
 * Makes sure git ignores the main checkout's yard.local.toml (personal pins) after yard wrote it:
 * when `git check-ignore` says it is not ignored, it is added to the local exclude file
 * `<git common dir>/info/exclude` (never committed), with a note. A failure only warns.
 */
export async function excludePinFile(context: YardContext, workspace: Workspace): Promise<void> {
  const ignored = await context.runner.git(['check-ignore', '-q', '--', LOCAL_CONFIG_FILE], {
    cwd: workspace.mainPath,
    allowFailure: true,
  })
  if (ignored.exitCode !== 1) return
  const exclude = path.join(workspace.commonDir, 'info', 'exclude')
  try {
    const text = await fs.readFile(exclude, 'utf8').catch(() => '')
    await fs.mkdir(path.dirname(exclude), {recursive: true})
    await fs.appendFile(exclude, `${text === '' || text.endsWith('\n') ? '' : '\n'}/${LOCAL_CONFIG_FILE}\n`)
    context.warn(
      `note: added /${LOCAL_CONFIG_FILE} to ${exclude} so that git ignores your personal pins (\`yard init\` adds it to .gitignore instead)`,
    )
  } catch (error) {
    context.warn(
      `warning: git does not ignore ${path.join(workspace.mainPath, LOCAL_CONFIG_FILE)} and yard could not add it to ${exclude}: ${(error as Error).message}; add it to .gitignore yourself`,
    )
  }
}
