/**
 * yard's containers.conf (DESIGN.md §8): the settings podman needs on hosts without
 * `CAP_SYS_RESOURCE` and with mixed cgroup versions, written by `yard doctor --fix` to
 * `<state dir>/containers.conf` and passed as `CONTAINERS_CONF` to every podman yard runs
 * (context.ts `childEnv`). Table placement follows containers.conf(5): `default_ulimits` is in
 * `[containers]`; `runtime`, `cgroup_manager` and `events_logger` are in `[engine]`.
 */
import {existsSync, promises as fs} from 'node:fs'
import path from 'node:path'
import {parse, stringify} from 'smol-toml'

import {OperationError} from '../../sdk/errors.js'
import {containersConfPath} from '../kernel/state.js'

/** The settings yard needs, by table (containers.conf(5)). */
export const REQUIRED_SETTINGS = {
  containers: {default_ulimits: ['nofile=1024:1024', 'nproc=4096:4096']},
  engine: {runtime: 'runc', cgroup_manager: 'cgroupfs', events_logger: 'file'},
} as const

const HEADER = `# containers.conf written by \`yard doctor --fix\` (yard's README.md: \`yard doctor\`).
# yard passes this file to every podman it runs as CONTAINERS_CONF, unless CONTAINERS_CONF is
# already set. podman then reads only this file, not /etc/containers/containers.conf
# (containers.conf(5)). Edit freely: \`yard doctor --fix\` keeps a file that has these settings.
`

/** The exact file `yard doctor --fix` writes when there is none. */
export const CONTAINERS_CONF_TEXT = `${HEADER}
[containers]
# Without CAP_SYS_RESOURCE the runtime cannot raise rlimits: ask for limits within the host's.
default_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]

[engine]
# runc copes with mixed cgroup v1/v2 hosts; systemd may be absent: no systemd cgroups, no journald.
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
`

/** Which containers.conf podman gets from yard, and from where (context.ts `childEnv`). */
export interface ContainersConfInEffect {
  /** `env`: the user's CONTAINERS_CONF; `yard`: yard's file; `none`: podman's own defaults. */
  source: 'env' | 'yard' | 'none'
  path?: string
}

export function containersConfInEffect(env: NodeJS.ProcessEnv): ContainersConfInEffect {
  if (env.CONTAINERS_CONF) return {source: 'env', path: env.CONTAINERS_CONF}
  const own = containersConfPath(env)
  return existsSync(own) ? {source: 'yard', path: own} : {source: 'none'}
}

export type ContainersConfState = 'missing' | 'current' | 'complete' | 'incomplete' | 'unparseable'

/**
 * How a containers.conf compares with yard's: `current` (yard's exact text), `complete` (differs
 * but has every required setting), `incomplete` (lacks some: listed in `missing` as
 * `table.key`), `unparseable`, or `missing`.
 */
export async function inspectContainersConf(
  file: string,
): Promise<{state: ContainersConfState; missing: string[]; text?: string}> {
  let text: string
  try {
    text = await fs.readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {state: 'missing', missing: []}
    throw error
  }

  if (text === CONTAINERS_CONF_TEXT) return {state: 'current', missing: [], text}
  let parsed: Record<string, unknown>
  try {
    parsed = parse(text)
  } catch {
    return {state: 'unparseable', missing: [], text}
  }

  const missing = missingSettings(parsed)
  return {state: missing.length === 0 ? 'complete' : 'incomplete', missing, text}
}

function table(parsed: Record<string, unknown>, name: string): Record<string, unknown> {
  const value = parsed[name]
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {}
}

function missingSettings(parsed: Record<string, unknown>): string[] {
  const missing: string[] = []
  const ulimits = table(parsed, 'containers').default_ulimits
  for (const wanted of REQUIRED_SETTINGS.containers.default_ulimits) {
    if (!Array.isArray(ulimits) || !ulimits.includes(wanted)) missing.push(`containers.default_ulimits ${wanted}`)
  }

  const engine = table(parsed, 'engine')
  for (const [key, wanted] of Object.entries(REQUIRED_SETTINGS.engine)) {
    if (engine[key] !== wanted) missing.push(`engine.${key}`)
  }

  return missing
}

/** `text` with yard's settings set; other tables, keys and ulimit types are kept. */
function mergeSettings(text: string): string {
  const parsed = parse(text) as Record<string, unknown>
  const containers = table(parsed, 'containers')
  const wantedTypes = new Set(REQUIRED_SETTINGS.containers.default_ulimits.map((entry) => entry.split('=', 1)[0]))
  const kept = (Array.isArray(containers.default_ulimits) ? containers.default_ulimits : []).filter(
    (entry) => typeof entry !== 'string' || !wantedTypes.has(entry.split('=', 1)[0]),
  )
  parsed.containers = {...containers, default_ulimits: [...kept, ...REQUIRED_SETTINGS.containers.default_ulimits]}
  parsed.engine = {...table(parsed, 'engine'), ...REQUIRED_SETTINGS.engine}
  return `${HEADER}# Merged into the previous file; comments of that file are in its backup.\n\n${stringify(parsed)}\n`
}

export interface ContainersConfWrite {
  path: string
  /**
   * `written`: there was none; `unchanged`: already yard's text; `kept`: a different file that
   * has every setting, left alone; `updated`: the settings were merged into the user's file
   * (or replaced it when it did not parse), the previous file kept at `backup`.
   */
  action: 'written' | 'unchanged' | 'kept' | 'updated'
  backup?: string
  /** Settings the previous file lacked (`updated` only). */
  missing?: string[]
}

async function atomicWrite(file: string, text: string): Promise<void> {
  const temp = `${file}.tmp-${process.pid}-${Math.random().toString(16).slice(2)}`
  try {
    await fs.writeFile(temp, text, {flag: 'wx', mode: 0o644})
    await fs.rename(temp, file)
  } catch (error) {
    await fs.rm(temp, {force: true}).catch(() => undefined)
    throw error
  }
}

const stamp = (now: Date) =>
  now
    .toISOString()
    .replaceAll(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')

/**
 * Writes yard's containers.conf to `containersConfPath(env)` atomically (temp file + rename).
 * Never clobbers silently: a user's differing file that has the settings is kept; one that lacks
 * them gets them merged in, with the previous file copied to `<path>.bak-<UTC stamp>` first.
 * @throws OperationError (exit 1) when the state directory cannot be written, with the fix.
 */
export async function writeContainersConf(env: NodeJS.ProcessEnv, now = new Date()): Promise<ContainersConfWrite> {
  const file = containersConfPath(env)
  try {
    await fs.mkdir(path.dirname(file), {recursive: true})
    const found = await inspectContainersConf(file)
    if (found.state === 'missing') {
      await atomicWrite(file, CONTAINERS_CONF_TEXT)
      return {path: file, action: 'written'}
    }

    if (found.state === 'current') return {path: file, action: 'unchanged'}
    if (found.state === 'complete') return {path: file, action: 'kept'}
    const backup = `${file}.bak-${stamp(now)}`
    await fs.copyFile(file, backup)
    await atomicWrite(file, found.state === 'unparseable' ? CONTAINERS_CONF_TEXT : mergeSettings(found.text!))
    return {path: file, action: 'updated', backup, missing: found.missing}
  } catch (error) {
    if (error instanceof OperationError) throw error
    throw new OperationError(`cannot write ${file}: ${(error as Error).message}`, {
      why: 'yard keeps its containers.conf in its state directory, which must be writable',
      fix: 'set YARD_STATE_DIR to a writable directory (or fix the permissions), then run `yard doctor --fix` again',
      cause: error,
    })
  }
}

/** One sentence for the user about what `writeContainersConf` did. */
export function describeWrite(result: ContainersConfWrite): string {
  switch (result.action) {
    case 'written': {
      return `wrote ${result.path}`
    }

    case 'unchanged': {
      return `${result.path} is already yard's containers.conf`
    }

    case 'kept': {
      return `kept your ${result.path}: it differs from yard's but has every setting yard needs`
    }

    case 'updated': {
      return `updated ${result.path} with ${result.missing?.length ? result.missing.join(', ') : "yard's settings (it did not parse)"}; your previous file is at ${result.backup}`
    }
  }
}
