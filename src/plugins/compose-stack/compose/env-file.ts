/**
 * Compose's env file format (compose specification, "env_file" → "Env_file format"; the exact
 * behaviour is compose-go's `dotenv` parser): `KEY=VALUE` or `KEY: VALUE` lines, an optional
 * `export ` prefix, `#` comments (after a value only when preceded by a space), single-quoted
 * values taken literally, double-quoted values with escapes (`\n`, `\t`, `\"`, `\\`, `\$`) and
 * several lines, and `${VAR}` interpolation in unquoted and double-quoted values — looked up
 * first in the caller's environment, then in the keys the file set above. A bare `KEY` line
 * takes KEY from the caller's environment, when set there.
 */

import type {Env} from './types.js'

import {InputError} from '../../../sdk/errors.js'
import {interpolate, InvalidTemplateError, MissingVariableError} from './interpolate.js'
import {readProjectFile} from './read.js'

const KEY_CHAR = /[\p{L}\p{N}_.\-[\]]/u
const SPACE = /[\t\v\f\r \u0085\u00A0]/

/**
 * Parses env file text. `lookup` is the environment the values are interpolated with.
 * @throws InputError naming `file` and the line of a malformed key, an unterminated quote or a
 *   failed `${…}`.
 */
export function parseEnvFile(text: string, file: string, lookup: Env): Record<string, string> {
  const out: Record<string, string> = {}
  const env = new Proxy({}, {get: (_, name: string) => lookup[name] ?? out[name]}) as Env
  const source = text.replace(/^\uFEFF/, '')
  let index = 0
  let line = 1
  const fail = (message: string): never => {
    throw new InputError(`${file}:${line}: ${message}`, {
      why: 'Compose cannot read this env file',
      fix: `correct ${file}`,
    })
  }

  const expand = (value: string): string => {
    try {
      return interpolate(value, env)
    } catch (error) {
      if (error instanceof MissingVariableError || error instanceof InvalidTemplateError) fail(error.message)
      throw error
    }
  }

  while (index < source.length) {
    const char = source[index]
    if (char === '\n') line++
    if (/\s/.test(char)) {
      index++
      continue
    }

    if (char === '#') {
      const end = source.indexOf('\n', index)
      index = end === -1 ? source.length : end
      continue
    }

    const exported = /^export[\t ]+/.exec(source.slice(index, index + 40))
    if (exported) index += exported[0].length
    let end = index
    while (end < source.length && !'=:\n'.includes(source[end])) end++
    const key = source.slice(index, end).replace(/\s+$/, '')
    if (key.includes(' ')) fail('key cannot contain a space')
    for (const keyChar of key)
      if (!KEY_CHAR.test(keyChar) && !SPACE.test(keyChar))
        fail(`unexpected character "${keyChar}" in variable name "${key}"`)
    if (end >= source.length || source[end] === '\n') {
      const inherited = lookup[key]
      if (inherited !== undefined) out[key] = inherited
      index = end
      continue
    }

    index = end + 1
    while (index < source.length && SPACE.test(source[index])) index++
    const quote = source[index]
    if (quote === '"' || quote === "'") {
      const startLine = line
      let value = ''
      let escaped = false
      let closed = false
      for (index++; index < source.length; index++) {
        const valueChar = source[index]
        if (valueChar === '\n') line++
        if (valueChar !== quote || escaped) {
          if (!escaped && valueChar === '\\') {
            escaped = true
            continue
          }

          if (escaped && valueChar !== quote) value += '\\'
          escaped = false
          value += valueChar
          continue
        }

        closed = true
        index++
        break
      }

      if (!closed) {
        line = startLine
        fail('unterminated quoted value')
      }

      out[key] = quote === '"' ? expand(expandEscapes(value)) : value
      continue
    }

    let lineEnd = source.indexOf('\n', index)
    if (lineEnd === -1) lineEnd = source.length
    let value = source.slice(index, lineEnd)
    const comment = value.indexOf(' #')
    if (comment !== -1) value = value.slice(0, comment)
    out[key] = expand(value.replace(/\s+$/, ''))
    index = lineEnd
  }

  return out
}

const ESCAPES: Record<string, string> = {
  a: '\u0007',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '"': '"',
  '\\': '\\',
}

/** Double-quoted escapes; `\$` stays a literal `$` through interpolation (compose-go expandEscapes). */
function expandEscapes(value: string): string {
  return value.replaceAll(
    /\\(?:([abcfnrtv$"\\])|0([0-7]{0,3}))/g,
    (match, simple: string | undefined, octal: string | undefined) => {
      if (simple === '$') return '$$'
      if (simple !== undefined) return ESCAPES[simple] ?? match
      return String.fromCharCode(Number.parseInt(octal || '0', 8))
    },
  )
}

/**
 * Reads and parses one env file.
 * @throws InputError when it cannot be read or parsed.
 */
export function readEnvFile(file: string, lookup: Env): Record<string, string> {
  const text = readProjectFile(file, 'env file', `make ${file} a regular file, or remove it from the compose file`)
  return parseEnvFile(text, file, lookup)
}
