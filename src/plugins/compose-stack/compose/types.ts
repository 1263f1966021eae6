/**
 * Shapes shared by the compose resolver (compose specification, "The Compose application
 * model"): the plain-object model a compose file parses to, the resolver's input and result.
 */

/** A YAML mapping as plain data. */
export type Mapping = Record<string, unknown>

/** A variable lookup: the shell environment, `.env` values or yard's own variables. */
export type Env = Readonly<Record<string, string | undefined>>

/** One service of the resolved model; every attribute the specification allows may appear. */
export interface ComposeServiceDocument extends Mapping {
  image?: string
  build?: string | Mapping
  /** Always a mapping after resolution (list form converted, `env_file` folded in). */
  environment?: Record<string, string>
  /** Always a mapping after resolution (list form converted). */
  labels?: Record<string, string>
  ports?: unknown[]
  volumes?: unknown[]
  profiles?: string[]
  container_name?: string
  network_mode?: string
  networks?: string[] | Record<string, Mapping | null>
  depends_on?: string[] | Record<string, Mapping>
}

/**
 * The resolved compose model: merged, interpolated, `x-*` extension fields removed, services of
 * inactive profiles removed, relative paths absolute. Values are the ones the container gets: a
 * `$` in a string is a literal `$` (see `escapeInterpolation` before handing it to a provider).
 */
export interface ComposeModelDocument extends Mapping {
  name?: string
  services: Record<string, ComposeServiceDocument>
  networks?: Record<string, Mapping | null>
  volumes?: Record<string, Mapping | null>
  secrets?: Record<string, Mapping | null>
  configs?: Record<string, Mapping | null>
}

/**
 * Something the resolver noticed that does not stop it. Kinds: `yard-variable-in-env-file` (an
 * env file sets one of yard's variables; yard's value is used), `unset-variable` (interpolated
 * as an empty string), `include-conflict` (an included resource redefined by the includer; the
 * two are merged), `multiple-compose-files` (several default file names exist; the first is used),
 * `unknown-key` (a top-level key the specification does not define; ignored). Each is said once.
 */
export interface ResolveWarning {
  kind: string
  file?: string
  key?: string
  message: string
}

export interface ResolveInput {
  /** The targeted checkout (absolute); default project directory. */
  checkoutPath: string
  /** `[stack] files` (relative to the checkout) when set. */
  configuredFiles?: string[]
  /** Where `[stack] files` came from, for errors (e.g. `yard.toml`). */
  configuredOrigin?: string
  /** `[stack] profiles`, enabled in addition to `COMPOSE_PROFILES`. */
  profiles?: string[]
  /** The shell environment. */
  env: Env
  /** yard's own variables (`[ports]` keys, WORKTREE, COMPOSE_PROJECT_NAME, YARD_*): they always win. */
  yardEnv: Env
  /** An untrusted worktree: every file read must lie inside this directory (read.ts withConfinement). */
  confine?: string
}

export interface ResolvedProject {
  /** Absolute: the directory of the first compose file. */
  projectDirectory: string
  /** Absolute: every compose file read (top-level files, overrides, includes, extends files), in read order. */
  files: string[]
  model: ComposeModelDocument
  /**
   * The images the project's services build (`image:` beside `build:`), those of services a
   * disabled profile left out included: a service that runs one of them runs the checkout's
   * build, whichever profile builds it (`--profile build build`, then `--profile demo up`).
   */
  builtImages: string[]
  /** The environment used for interpolation (after precedence). */
  interpolationEnv: Record<string, string>
  warnings: ResolveWarning[]
}

/** True for a YAML mapping (a plain object, not a sequence or null). */
export function isMapping(value: unknown): value is Mapping {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** A deep copy of parsed YAML data (mappings, sequences, scalars). */
export function deepClone<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item) => deepClone(item)) as T
  if (isMapping(value)) {
    const copy: Mapping = {}
    for (const [key, item] of Object.entries(value)) copy[key] = deepClone(item)
    return copy as T
  }

  return value
}

/** A dotted key path for messages: `services.web.ports`. */
export function keyPath(path: ReadonlyArray<string | number>): string {
  return path.map(String).join('.')
}
