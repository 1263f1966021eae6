/**
 * Quoting for the shell commands yard prints (fixes, restore hints, `yard env`, `--verbose`
 * echoes): printed, never run. Every value interpolated into a command a person may paste goes
 * through here, so a branch like `fix;touch${IFS}/tmp/x` pastes as one word (POSIX sh, "Quoting":
 * inside single quotes every character is literal; a `'` is written as `'\''`).
 */

/** `'value'`, always quoted (POSIX single quotes), for `export KEY='…'`. */
export function singleQuote(value: string): string {
  return `'${value.replaceAll("'", String.raw`'\''`)}'`
}

/** Words that need no quotes: letters, digits and `@%+=:,./_-` (never a leading `-` issue: printed only). */
const PLAIN_WORD = /^[\w@%+=:,./-]+$/

/** One word for a printed command: as it is when plain, else single-quoted (the empty word is `''`). */
export function shellQuote(word: string): string {
  return PLAIN_WORD.test(word) ? word : singleQuote(word)
}

/** A printed command from argv: each word through `shellQuote`. */
export function shellCommand(argv: readonly string[]): string {
  return argv.map((word) => shellQuote(word)).join(' ')
}
