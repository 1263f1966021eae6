/**
 * What each compose file must be before yard merges it (compose-go validates every file
 * against the compose specification's JSON schema, `schema/compose-spec.json`, once it is
 * interpolated): top-level keys of the specification (an unknown one — a typo like `service:` —
 * is a warning, with the likely key), service names of the schema's characters, and the types
 * of the attributes yard reads (`profiles`, `container_name`, `image`, `ports`, `volumes`,
 * `networks`, `network_mode`, `env_file`, `extends`, `depends_on`, `build`, `environment`,
 * `labels`), each `ports` entry parsed as the engine would (`readPublished`). Other attributes
 * are the provider's to check.
 */
import {z} from 'zod'

import {InputError} from '../../../sdk/errors.js'
import {readPublished} from '../published-ports.js'
import {isMapping, keyPath, type Mapping, type ResolveWarning} from './types.js'

/** The specification's top-level keys (schema `properties`); `x-*` are extension fields. */
export const TOP_LEVEL_KEYS = [
  'version',
  'name',
  'include',
  'services',
  'networks',
  'volumes',
  'secrets',
  'configs',
  'models',
] as const

/**
 * A service name: the schema's characters (`^[a-zA-Z0-9._-]+$`), starting with a letter or
 * digit, since the name becomes a host name on the project's networks and part of container names.
 */
export const SERVICE_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/
/** The engine's container names (docker `^/?[a-zA-Z0-9][a-zA-Z0-9_.-]+$`; the schema's pattern). */
const CONTAINER_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]+$/

const text = z.string()
const strings = z.array(z.string())
/** Interpolated booleans stay strings (`required: "${OPTIONAL:-false}"`); the schema allows both. */
const flag = z.union([z.boolean(), z.string()])
const keyValues = z.union([
  z.array(z.union([z.string(), z.number(), z.boolean()])),
  z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
])

/** Each attribute yard reads: its schema (compose-spec.json) and how to say it. */
const ATTRIBUTES: Record<string, {schema: z.ZodType; is: string}> = {
  profiles: {schema: strings, is: 'a list of profile names, e.g. `profiles: [debug]`'},
  container_name: {
    schema: text.regex(CONTAINER_NAME),
    is: 'a string of letters, digits, `_`, `.` and `-` (two or more, starting with a letter or digit)',
  },
  image: {schema: text, is: 'a string, e.g. `image: postgres:16`'},
  ports: {schema: z.array(z.unknown()), is: 'a list of port entries, e.g. `ports: ["8080:80"]`'},
  volumes: {
    schema: z.array(z.union([text, z.looseObject({type: text})])),
    is: 'a list of `SOURCE:TARGET[:MODE]` strings or mappings with `type`',
  },
  networks: {
    schema: z.union([strings, z.record(z.string(), z.union([z.null(), z.looseObject({})]))]),
    is: 'a list of network names or a mapping of network names to their settings',
  },
  network_mode: {schema: text, is: 'a string (`host`, `none`, `bridge`, `service:NAME`, `container:NAME`)'},
  env_file: {
    schema: z.union([
      text,
      z.array(z.union([text, z.strictObject({path: text, required: flag.optional(), format: text.optional()})])),
    ]),
    is: 'a path or a list of paths or `{path, required}` mappings',
  },
  extends: {
    schema: z.union([text, z.strictObject({service: text, file: text.optional()})]),
    is: 'a service name or `{service, file}`',
  },
  depends_on: {
    schema: z.union([
      strings,
      z.record(
        z.string(),
        z.looseObject({
          condition: z.enum(['service_started', 'service_healthy', 'service_completed_successfully']).optional(),
          restart: flag.optional(),
          required: flag.optional(),
        }),
      ),
    ]),
    is: 'a list of service names or a mapping of service names to `{condition, required}`',
  },
  build: {
    schema: z.union([text, z.looseObject({context: text.optional(), dockerfile: text.optional()})]),
    is: 'a build context path or a mapping with `context`',
  },
  environment: {schema: keyValues, is: 'a list of `KEY=VALUE` strings or a mapping of names to values'},
  labels: {schema: keyValues, is: 'a list of `KEY=VALUE` strings or a mapping of names to values'},
}

/**
 * Checks one interpolated document of `file` (compose-go loadYamlFile: validated per file).
 * @param warn receives an unknown top-level key (the session says each once)
 * @throws InputError (exit 2) naming the file and key path: an invalid service name, an
 *   attribute of the wrong type, a `ports` entry that is not one (with the reason).
 */
export function validateDocument(model: Mapping, file: string, warn: (warning: ResolveWarning) => void): void {
  for (const key of Object.keys(model)) {
    if (key.startsWith('x-') || (TOP_LEVEL_KEYS as readonly string[]).includes(key)) continue
    const close = closest(key, TOP_LEVEL_KEYS)
    warn({
      kind: 'unknown-key',
      file,
      key,
      message: `${file}: unknown top-level key \`${key}\`${close ? ` (did you mean \`${close}\`?)` : ''}; it is ignored (the compose specification allows ${TOP_LEVEL_KEYS.join(', ')} and x-* extension fields)`,
    })
  }

  const {services} = model
  if (!isMapping(services)) return
  for (const [name, service] of Object.entries(services)) {
    if (!SERVICE_NAME.test(name)) {
      throw new InputError(`${file}: services.${JSON.stringify(name)} is not a valid service name`, {
        why: 'a service name is letters, digits, `_`, `.` and `-`, starting with a letter or digit (compose specification schema); it becomes a host name and part of container names',
        fix: `rename the service in ${file}, e.g. to ${JSON.stringify(suggestName(name))}`,
      })
    }

    if (isMapping(service)) validateService(service, ['services', name], file)
  }
}

function validateService(service: Mapping, path: string[], file: string): void {
  for (const [key, {schema, is}] of Object.entries(ATTRIBUTES)) {
    const value = service[key]
    if (value === undefined) continue
    const result = schema.safeParse(value)
    if (!result.success) {
      const at = deepestPath(result.error.issues)
      const where = keyPath([...path, key, ...at.map(String)])
      throw new InputError(
        `${file}: ${keyPath([...path, key])} must be ${is}${at.length > 0 ? ` (at ${where})` : ''}, not ${describe(value)}`,
        {
          why: "the compose specification's schema gives the attribute this type; Compose refuses the file",
          fix: `correct ${keyPath([...path, key])} in ${file}`,
        },
      )
    }
  }

  if (!Array.isArray(service.ports)) return
  for (const [index, entry] of service.ports.entries()) {
    const port = readPublished(entry)
    if (typeof port !== 'string') continue
    throw new InputError(
      `${file}: ${keyPath([...path, 'ports', String(index)])}: ${JSON.stringify(entry)} is not a valid port entry: ${port}`,
      {
        why: 'compose specification, "ports": short syntax [HOST_IP:][HOST[-HOST]:]CONTAINER[-CONTAINER][/PROTOCOL] (an IPv6 HOST_IP in brackets), long syntax {target, published, host_ip, protocol, mode}',
        fix: `correct the entry in ${file}, e.g. "8080:80", "127.0.0.1:5432:5432", "[::1]:80:80" or "8000-8010:8000-8010"`,
      },
    )
  }
}

/** Where a value fails: into a union, the branch that got furthest (the form the value is written in). */
function deepestPath(issues: readonly z.core.$ZodIssue[]): PropertyKey[] {
  let best: PropertyKey[] = []
  for (const issue of issues) {
    const inner =
      issue.code === 'invalid_union'
        ? (issue.errors.map((branch) => deepestPath(branch)).sort((a, b) => b.length - a.length)[0] ?? [])
        : []
    const path = [...issue.path, ...inner]
    if (path.length > best.length) best = path
  }

  return best
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'a list'
  if (isMapping(value)) return 'a mapping'
  if (value === null) return 'empty (null)'
  return `${typeof value} ${JSON.stringify(value)}`
}

/** A valid name close to `name`: invalid characters as `-`, a leading non-alphanumeric dropped. */
function suggestName(name: string): string {
  const cleaned = name.replaceAll(/[^a-zA-Z0-9_.-]+/g, '-').replace(/^[^a-zA-Z0-9]+/, '')
  return cleaned === '' ? 'service' : cleaned
}

/** The candidate at edit distance ≤ 2 from `word` (`service` → `services`), if any. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: {candidate: string; distance: number} | undefined
  for (const candidate of candidates) {
    const distance = editDistance(word.toLowerCase(), candidate)
    if (distance <= 2 && (best === undefined || distance < best.distance)) best = {candidate, distance}
  }

  return best?.candidate
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3
  let previous = Array.from({length: b.length + 1}, (_, index) => index)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    previous = current
  }

  return previous[b.length]
}
