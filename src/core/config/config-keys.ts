/**
 * The names and fixed values of `yard.toml` and `yard.local.toml` (DESIGN.md §3.2) that loading a
 * config needs without its schema: the tables, the choices of enumerated keys, the environment
 * overrides, and the words of its messages. config-schema.ts builds the zod schema from them;
 * a config whose files are unchanged since yard last validated them is loaded without zod
 * (config-cache.ts), so nothing here imports it.
 */
import {OFFSET_SLOTS} from '../identity/identity.js'

export const CONFIG_FILE = 'yard.toml'
export const LOCAL_CONFIG_FILE = 'yard.local.toml'

/** Project-wide tables: read from the main checkout only (DESIGN.md §3.2), in the order they merge. */
export const PROJECT_TABLES = ['project', 'worktrees', 'machine', 'cache', 'cluster'] as const
/** Per-checkout tables: from the targeted checkout's yard.toml when it has the table (DESIGN.md §3.2). */
export const CHECKOUT_TABLES = ['ports', 'stack', 'box'] as const

/** Highest `[ports]` base: base + 89 must stay a valid port. */
export const MAX_PORT_BASE = 65_535 - OFFSET_SLOTS
/** `[ports]` keys are environment variable names. */
export const PORT_KEY_PATTERN = /^[A-Z_][A-Z0-9_]*$/

/** A TOML value in words, for messages: `the integer 5`, `the string "x"`, `an array`. */
export function describeValue(value: unknown): string {
  if (typeof value === 'bigint') return `the integer ${value}`
  if (typeof value === 'number') return `the float ${value}`
  if (typeof value === 'string') return `the string ${JSON.stringify(value)}`
  if (typeof value === 'boolean') return `the boolean ${value}`
  if (Array.isArray(value)) return 'an array'
  return value === null ? 'null' : typeof value === 'object' ? 'a table' : typeof value
}

/**
 * Names a `[ports]` key may not take: the variables yard itself exports to stacks and boxes
 * (DESIGN.md §3.5), anything starting with `YARD_`, and shell variables whose loss breaks a shell.
 */
export const RESERVED_PORT_KEYS: readonly string[] = [
  'MAIN_REPO',
  'WORKTREE',
  'WT_OFFSET',
  'COMPOSE_PROJECT_NAME',
  'PODMAN_PROJECT',
  'CONTAINERS_CONF',
  'CONTAINER_HOST',
  'DOCKER_HOST',
  'PATH',
  'HOME',
  'USER',
  'SHELL',
  'PWD',
  'OLDPWD',
  'IFS',
  'TERM',
  'LANG',
  'HOSTNAME',
  'TMPDIR',
  'LD_PRELOAD',
  'LD_LIBRARY_PATH',
  'NODE_OPTIONS',
]

/** podman's machine names: a letter or digit, then letters, digits, `_`, `.` and `-` (podman machine init). */
export const MACHINE_NAME_PATTERN = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/

export const STACK_PROVIDERS = ['auto', 'podman compose', 'podman-compose', 'docker compose', 'docker-compose'] as const
/** `[stack] external`: what a worktree does with `external: true` volumes and networks (DESIGN.md §4.2). */
export const STACK_EXTERNAL = ['refuse', 'per-checkout', 'shared'] as const
export const CLUSTER_RUNTIMES = ['podman', 'kubernetes'] as const
/**
 * `[box] mounts`: the main checkout and the worktrees root (all), or the checkout and the git parts
 * it commits with (worktree).
 */
export const BOX_MOUNTS = ['all', 'worktree'] as const

/** Environment overrides (DESIGN.md Appendix B): variable → `table.key`. */
export const ENV_OVERRIDES: Readonly<Record<string, string>> = {
  YARD_PREFIX: 'project.prefix',
  YARD_WORKTREES_ROOT: 'worktrees.root',
  YARD_WORKTREE_BASE: 'worktrees.base',
  YARD_TRANSCRIPTS_ARCHIVE: 'worktrees.transcripts-archive',
  YARD_MACHINE_BACKEND: 'machine.backend',
  YARD_STACK_PROVIDER: 'stack.provider',
  YARD_CACHE_ROOT: 'cache.root',
  YARD_KUBE_CONTEXT: 'cluster.context',
  YARD_NAMESPACE: 'cluster.namespace',
}

/** Edit distance, for "did you mean". */
export function editDistance(a: string, b: string): number {
  const row = Array.from({length: b.length + 1}, (_, index) => index)
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0]
    row[0] = i
    for (let j = 1; j <= b.length; j++) {
      const current = row[j]
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1))
      previous = current
    }
  }

  return row[b.length]
}

/**
 * The closest of `candidates` to `word`, when close enough to be a typo: at most 2 edits and
 * fewer than half the word's length (so `x` suggests nothing); never `word` itself.
 */
export function didYouMean(word: string, candidates: string[]): string | undefined {
  let best: string | undefined
  let bestDistance = Infinity
  for (const candidate of candidates) {
    if (candidate === word) continue
    const distance = editDistance(word.toLowerCase(), candidate)
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance]
  }

  return best !== undefined && bestDistance <= 2 && bestDistance * 2 < word.length ? best : undefined
}
