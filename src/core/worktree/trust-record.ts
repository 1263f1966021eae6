import {OperationError} from '../../sdk/errors.js'
/**
 * Trust of a worktree (docs/worktrees.md, "Untrusted worktrees"): `[worktrees.NAME] trust =
 * "untrusted"` in the main checkout's `yard.local.toml`, personal like the offset pins and edited
 * the same way: as text, so comments and every other table survive, re-parsed and compared with
 * what was meant before the file is replaced (atomically). Trusted is the default and is written
 * as the record's absence. Callers hold the project's offsets lock around an edit.
 */
import {parseTomlTables, readTomlForEdit, writeTomlEdit} from '../kernel/toml-edit.js'

export const TRUST_LEVELS = ['trusted', 'untrusted'] as const
export type Trust = (typeof TRUST_LEVELS)[number]

type Table = Record<string, unknown>

const ANY_HEADER = /^\s*\[/
const TRUST_LINE = /^\s*(?:trust|"trust"|'trust')\s*=/

function headerLine(name: string): RegExp {
  return new RegExp(
    String.raw`^\s*\[\s*(?:worktrees|"worktrees"|'worktrees')\s*\.\s*(?:${name}|"${name}"|'${name}')\s*\]\s*(?:#.*)?$`,
  )
}

/**
 * The text with `name`'s trust record set to untrusted (`untrusted` true) or taken away (false).
 * An existing `trust` line is replaced in place; a table left with nothing but blank and comment
 * lines goes with its header; a missing table is appended at the end. Pure: no fs. `name` must be
 * a valid name (DESIGN.md §3.1), so it is a bare TOML key.
 */
export function editTrustText(text: string, name: string, untrusted: boolean): string {
  const eol = text.includes('\r\n') ? '\r\n' : '\n'
  const lines = text === '' ? [] : text.split(/\r?\n/)
  const trailingNewline = lines.length > 0 && lines.at(-1) === ''
  if (trailingNewline) lines.pop()
  const header = lines.findIndex((line) => headerLine(name).test(line))
  if (header === -1) {
    if (!untrusted) return text
    const body = lines.length === 0 ? [] : [...lines, '']
    return [...body, `[worktrees.${name}]`, 'trust = "untrusted"'].join(eol) + eol
  }

  let end = lines.length
  for (let index = header + 1; index < lines.length; index++) {
    if (ANY_HEADER.test(lines[index])) {
      end = index
      break
    }
  }

  const at = lines.findIndex((line, index) => index > header && index < end && TRUST_LINE.test(line))
  if (untrusted) {
    if (at === -1) lines.splice(header + 1, 0, 'trust = "untrusted"')
    else lines[at] = lines[at].replace(/^(\s*).*$/, '$1trust = "untrusted"')
  } else if (at !== -1) {
    lines.splice(at, 1)
    end -= 1
    const rest = lines.slice(header + 1, end)
    if (rest.every((line) => line.trim() === '')) lines.splice(header, end - header)
  }

  while (lines.length > 0 && lines.at(-1)!.trim() === '') lines.pop()
  return lines.length === 0 ? '' : lines.join(eol) + eol
}

/** Tables without keys dropped, recursively: `[worktrees.x]` emptied is no change to the rest. */
function withoutEmptyTables(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || value instanceof Date) return value
  const kept: Table = {}
  for (const [key, item] of Object.entries(value as Table)) {
    const cleaned = withoutEmptyTables(item)
    if (
      typeof cleaned === 'object' &&
      cleaned !== null &&
      !Array.isArray(cleaned) &&
      !(cleaned instanceof Date) &&
      Object.keys(cleaned).length === 0
    )
      continue
    kept[key] = cleaned
  }

  return kept
}

const canonical = (value: unknown) =>
  JSON.stringify(withoutEmptyTables(value), (_key, item) => (typeof item === 'bigint' ? `${item}n` : item))

/** The trust a parsed yard.local.toml records for `name` (absent or anything else: trusted). */
function recorded(table: Table, name: string): Trust {
  const worktrees = table.worktrees as Table | undefined
  const entry = worktrees?.[name] as Table | undefined
  return typeof entry === 'object' && entry !== null && entry.trust === 'untrusted' ? 'untrusted' : 'trusted'
}

/** What `writeTrust` replaced: the previous trust and the file's previous text (undefined: no file). */
export interface TrustWrite {
  previous: Trust
  text: string | undefined
}

/**
 * Records `name` as untrusted, or takes the record away (`trust` `trusted`), in `file`. Writes
 * only when the re-parsed result differs from the original in exactly that record. No change,
 * no write.
 * @throws OperationError (exit 1) when the file cannot be read, parsed or written, or when the
 *   edit would change anything else (an inline or dotted `worktrees` layout), naming the file.
 */
export async function writeTrust(file: string, name: string, trust: Trust): Promise<TrustWrite> {
  const {original, text, before} = await readTomlForEdit(file, `record the trust of ${name}`)
  const previous = recorded(before, name)
  if (previous === trust) return {previous, text: original}
  const edited = editTrustText(text, name, trust === 'untrusted')
  const worktrees = {...(before.worktrees as Table | undefined)}
  const entry = {...(worktrees[name] as Table | undefined)}
  if (trust === 'untrusted') entry.trust = 'untrusted'
  else delete entry.trust
  const expected = {...before, worktrees: {...worktrees, [name]: entry}}
  let after: unknown
  try {
    after = parseTomlTables(edited)
  } catch {
    after = undefined
  }

  if (after === undefined || canonical(after) !== canonical(expected)) {
    throw new OperationError(
      `could not record worktree ${name} as ${trust} in ${file} without changing anything else`,
      {
        why: "yard edits a [worktrees.NAME] table as text and checks the result; this file's layout (an inline or dotted worktrees key?) defeats that",
        fix: `write the record as a table of its own in ${file} (\`[worktrees.${name}]\` on a line, then \`trust = "untrusted"\`), or delete it for trusted, then run the command again`,
      },
    )
  }

  await writeTomlEdit(file, edited)
  return {previous, text: original}
}
