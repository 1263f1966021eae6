/**
 * Compose variable interpolation (compose spec, "Interpolation"): `$$` is a literal `$`;
 * `$VAR` and `${VAR}`; `${VAR:-default}` / `${VAR-default}` (unset or empty / unset);
 * `${VAR:?error}` / `${VAR?error}`; `${VAR:+alternative}` / `${VAR+alternative}`. Defaults may
 * nest further expressions. Used to read compose files as each checkout's provider would.
 */

/** A `${VAR:?message}` whose variable is missing. */
export class MissingVariableError extends Error {
  constructor(readonly variable: string, readonly detail: string) {
    super(`required variable ${variable} is missing${detail ? `: ${detail}` : ''}`)
  }
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/

/**
 * Interpolates one string with `env`.
 * @throws MissingVariableError for `${VAR:?…}` / `${VAR?…}` when VAR is unset (or empty, with `:`).
 */
export function interpolate(text: string, env: Readonly<Record<string, string | undefined>>): string {
  let out = ''
  let index = 0
  while (index < text.length) {
    const char = text[index]
    if (char !== '$') {
      out += char
      index++
      continue
    }
    const next = text[index + 1]
    if (next === '$') {
      out += '$'
      index += 2
      continue
    }
    if (next === '{') {
      const end = closingBrace(text, index + 2)
      if (end === -1) {
        out += text.slice(index)
        break
      }
      out += expand(text.slice(index + 2, end), env)
      index = end + 1
      continue
    }
    const name = NAME.exec(text.slice(index + 1))?.[0]
    if (name === undefined) {
      out += '$'
      index++
      continue
    }
    out += env[name] ?? ''
    index += 1 + name.length
  }
  return out
}

function closingBrace(text: string, from: number): number {
  let depth = 1
  for (let index = from; index < text.length; index++) {
    if (text[index] === '$' && text[index + 1] === '{') {
      depth++
      index++
    } else if (text[index] === '}' && --depth === 0) {
      return index
    }
  }
  return -1
}

function expand(body: string, env: Readonly<Record<string, string | undefined>>): string {
  const name = NAME.exec(body)?.[0] ?? ''
  const rest = body.slice(name.length)
  const value = env[name]
  const match = /^(:?)([-?+])([\s\S]*)$/.exec(rest)
  if (!match) return value ?? ''
  const [, colon, operator, word] = match
  const missing = colon === ':' ? value === undefined || value === '' : value === undefined
  if (operator === '-') return missing ? interpolate(word, env) : value!
  if (operator === '+') return missing ? '' : interpolate(word, env)
  if (missing) throw new MissingVariableError(name, interpolate(word, env))
  return value!
}

/** Interpolates every string in a parsed YAML value (keys stay as written), deeply. */
export function interpolateDeep(value: unknown, env: Readonly<Record<string, string | undefined>>): unknown {
  if (typeof value === 'string') return interpolate(value, env)
  if (Array.isArray(value)) return value.map((item) => interpolateDeep(item, env))
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, interpolateDeep(item, env)]))
  }
  return value
}
