/**
 * Compose variable interpolation (compose specification, "Interpolation"): `$$` is a literal
 * `$`; `$VAR` and `${VAR}`; `${VAR:-default}` / `${VAR-default}` (unset or empty / unset);
 * `${VAR:?error}` / `${VAR?error}`; `${VAR:+alternative}` / `${VAR+alternative}`. Defaults may
 * nest further expressions. A `$` not followed by a name or `{` stays as written; a `${` that is
 * not a valid expression is an error, as in compose-go's `template` package.
 */
import {InputError} from '../../../sdk/errors.js'
import {type Env, isMapping, keyPath} from './types.js'

/** A `${VAR:?message}` whose variable is missing. */
export class MissingVariableError extends Error {
  constructor(
    readonly variable: string,
    readonly detail: string,
  ) {
    super(`required variable ${variable} is missing a value${detail ? `: ${detail}` : ''}`)
  }
}

/** A `${…}` that is not `${NAME}` or `${NAME<op>word}`, or nests defaults too deeply. */
export class InvalidTemplateError extends Error {
  constructor(
    readonly template: string,
    reason = 'a literal $ is written $$',
  ) {
    super(`invalid interpolation format "${template.length > 80 ? `${template.slice(0, 80)}…` : template}" (${reason})`)
  }
}

/** How deep `${A:-${B:-…}}` may nest: real files nest two or three; deeper would exhaust the stack. */
export const MAX_INTERPOLATION_NESTING = 32

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/

/** Called with the name of every variable that is unset and has no default. */
export type UnsetListener = (name: string) => void

/**
 * Interpolates one string with `env`.
 * @throws MissingVariableError for `${VAR:?…}` / `${VAR?…}` when VAR is unset (or empty, with `:`).
 * @throws InvalidTemplateError for a malformed `${…}`.
 */
export function interpolate(text: string, env: Env, onUnset?: UnsetListener, depth = 0): string {
  if (!text.includes('$')) return text
  if (depth > MAX_INTERPOLATION_NESTING)
    throw new InvalidTemplateError(text, `nested more than ${MAX_INTERPOLATION_NESTING} levels deep`)
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
      if (end === -1) throw new InvalidTemplateError(text)
      out += expand(text.slice(index + 2, end), env, text, onUnset, depth)
      index = end + 1
      continue
    }

    const name = NAME.exec(text.slice(index + 1))?.[0]
    if (name === undefined) {
      out += '$'
      index++
      continue
    }

    out += lookup(name, env, onUnset)
    index += 1 + name.length
  }

  return out
}

function lookup(name: string, env: Env, onUnset?: UnsetListener): string {
  const value = env[name]
  if (value === undefined) onUnset?.(name)
  return value ?? ''
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

function expand(body: string, env: Env, template: string, onUnset: UnsetListener | undefined, depth: number): string {
  const name = NAME.exec(body)?.[0]
  if (name === undefined) throw new InvalidTemplateError(template)
  const rest = body.slice(name.length)
  if (rest === '') return lookup(name, env, onUnset)
  const match = /^(:?)([-?+])([\s\S]*)$/.exec(rest)
  if (!match) throw new InvalidTemplateError(template)
  const value = env[name]
  const [, colon, operator, word] = match
  const missing = colon === ':' ? value === undefined || value === '' : value === undefined
  if (operator === '-') return missing ? interpolate(word, env, onUnset, depth + 1) : value!
  if (operator === '+') return missing ? '' : interpolate(word, env, onUnset, depth + 1)
  if (missing) throw new MissingVariableError(name, interpolate(word, env, onUnset, depth + 1))
  return value!
}

/** Interpolates every string in a parsed YAML value (keys stay as written), deeply. */
export function interpolateDeep(value: unknown, env: Env): unknown {
  if (typeof value === 'string') return interpolate(value, env)
  if (Array.isArray(value)) return value.map((item) => interpolateDeep(item, env))
  if (isMapping(value)) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, interpolateDeep(item, env)]))
  }

  return value
}

type Cast = (value: string) => unknown

const toInt: Cast = (value) => (/^[-+]?\d+$/.test(value.trim()) ? Number.parseInt(value, 10) : fail('an integer'))
const toFloat: Cast = (value) =>
  value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : fail('a number')
const toBoolean: Cast = (value) => {
  const lower = value.toLowerCase()
  if (['on', 'true', 'y', 'yes'].includes(lower)) return true
  if (['false', 'n', 'no', 'off'].includes(lower)) return false
  return fail('a boolean')
}

function fail(expected: string): never {
  throw new TypeError(`expected ${expected}`)
}

/**
 * Attributes whose interpolated strings become numbers or booleans (compose-go
 * `loader/interpolate.go`, interpolateTypeCastMapping); `*` is any key or index.
 */
const CASTS: Array<[string[], Cast]> = [
  ...(
    [
      'cpu_count',
      'cpu_period',
      'cpu_quota',
      'cpu_rt_period',
      'cpu_rt_runtime',
      'cpu_shares',
      'oom_score_adj',
      'pids_limit',
      'scale',
    ] as const
  ).map((key): [string[], Cast] => [['services', '*', key], toInt]),
  [['services', '*', 'cpu_percent'], toFloat],
  [['services', '*', 'cpus'], toFloat],
  ...(['init', 'oom_kill_disable', 'privileged', 'read_only', 'stdin_open', 'tty'] as const).map(
    (key): [string[], Cast] => [['services', '*', key], toBoolean],
  ),
  [['services', '*', 'depends_on', '*', 'required'], toBoolean],
  [['services', '*', 'depends_on', '*', 'restart'], toBoolean],
  [['services', '*', 'deploy', 'replicas'], toInt],
  [['services', '*', 'healthcheck', 'retries'], toInt],
  [['services', '*', 'healthcheck', 'disable'], toBoolean],
  [['services', '*', 'ports', '*', 'target'], toInt],
  [['services', '*', 'ulimits', '*'], toInt],
  [['services', '*', 'ulimits', '*', 'hard'], toInt],
  [['services', '*', 'ulimits', '*', 'soft'], toInt],
  [['services', '*', 'volumes', '*', 'read_only'], toBoolean],
  [['services', '*', 'volumes', '*', 'volume', 'nocopy'], toBoolean],
  ...(['external', 'internal', 'attachable', 'enable_ipv4', 'enable_ipv6'] as const).map((key): [string[], Cast] => [
    ['networks', '*', key],
    toBoolean,
  ]),
  [['volumes', '*', 'external'], toBoolean],
  [['secrets', '*', 'external'], toBoolean],
  [['configs', '*', 'external'], toBoolean],
]

function castFor(path: readonly string[]): Cast | undefined {
  for (const [pattern, cast] of CASTS) {
    if (pattern.length === path.length && pattern.every((part, index) => part === '*' || part === path[index]))
      return cast
  }

  return undefined
}

/**
 * Interpolates a compose file's parsed model in place: every string value (keys stay as
 * written, as in compose-go), then the strings of typed attributes cast to numbers/booleans.
 * `onUnset` gets the key path and variable name of every unset variable without a default.
 * @throws InputError naming `file` and the key path for a missing required variable, a malformed
 *   `${…}` or a value that cannot be cast.
 */
export function interpolateModel(
  value: unknown,
  env: Env,
  file: string,
  onUnset?: (path: string, name: string) => void,
  path: string[] = [],
): unknown {
  if (typeof value === 'string') {
    let result: string
    try {
      result = interpolate(value, env, onUnset ? (name) => onUnset(keyPath(path), name) : undefined)
    } catch (error) {
      if (error instanceof MissingVariableError || error instanceof InvalidTemplateError) {
        throw new InputError(`${file}: ${keyPath(path)}: ${error.message}`, {
          why: 'Compose interpolates ${…} in every value of the file',
          fix:
            error instanceof MissingVariableError
              ? `set ${error.variable} in the environment or in the project's .env`
              : 'write a literal $ as $$',
        })
      }

      throw error
    }

    const cast = castFor(path)
    if (!cast) return result
    try {
      return cast(result)
    } catch (error) {
      throw new InputError(`${file}: ${keyPath(path)}: "${result}" is not valid (${(error as Error).message})`, {
        fix: `correct ${keyPath(path)} in ${file}`,
      })
    }
  }

  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      value[index] = interpolateModel(value[index], env, file, onUnset, [...path, String(index)])
    }

    return value
  }

  if (isMapping(value)) {
    for (const key of Object.keys(value)) value[key] = interpolateModel(value[key], env, file, onUnset, [...path, key])
    return value
  }

  return value
}

/** Doubles every `$` of the model's strings, so a provider's own interpolation gives them back as written. */
export function escapeInterpolation<T>(value: T): T {
  if (typeof value === 'string') return value.replaceAll('$', '$$$$') as T
  if (Array.isArray(value)) return value.map((item) => escapeInterpolation(item)) as T
  if (isMapping(value)) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, escapeInterpolation(item)])) as T
  }

  return value
}
