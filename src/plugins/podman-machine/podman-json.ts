/**
 * What `podman machine` (podman 5) answers, read defensively: `machine list --format json`,
 * `machine inspect`, and the machine's on-disk config (`<ConfigDir>/<name>.json`), which holds
 * the mounts: inspect has no mounts, and a `--format` template for them fails on some providers
 * (libkrun, applehv).
 */
import {promises as fs} from 'node:fs'
import net from 'node:net'
import path from 'node:path'

/** One row of `podman machine list --format json`. */
export interface ListedMachine {
  name: string
  running: boolean
  starting: boolean
}

/** The fields of `podman machine inspect` yard uses. */
export interface InspectedMachine {
  name: string
  /** `running`, `stopped`, `starting`… as podman says. */
  state: string
  /** The API socket's path on the host, or null when podman gives none. */
  socketPath: string | null
  configDir: string | null
  cpus: number | null
  /** MiB. */
  memoryMiB: number | null
  /** GiB. */
  diskGiB: number | null
}

const record = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {}
const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null)
const count = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null)

/** Parses a JSON array; anything else is an empty list. */
function jsonArray(stdout: string): unknown[] {
  try {
    const parsed: unknown = JSON.parse(stdout.trim() === '' ? '[]' : stdout)
    return Array.isArray(parsed) ? parsed : []
  } catch {
    return []
  }
}

/** The machines of `podman machine list --format json` (podman 5: Name, Running, Starting, …). */
export function parseList(stdout: string): ListedMachine[] {
  return jsonArray(stdout)
    .map(record)
    .filter((row) => text(row.Name) !== null)
    .map((row) => ({name: text(row.Name)!, running: row.Running === true, starting: row.Starting === true}))
}

/** The first machine of `podman machine inspect NAME` (podman 5's InspectInfo), or undefined. */
export function parseInspect(stdout: string): InspectedMachine | undefined {
  const [first] = jsonArray(stdout).map(record)
  if (!first || text(first.Name) === null) return undefined
  const resources = record(first.Resources)
  return {
    name: text(first.Name)!,
    state: text(first.State) ?? 'unknown',
    socketPath: text(record(record(first.ConnectionInfo).PodmanSocket).Path),
    configDir: text(record(first.ConfigDir).Path),
    cpus: count(resources.CPUs),
    memoryMiB: count(resources.Memory),
    diskGiB: count(resources.DiskSize),
  }
}

/**
 * The mounts of a machine from its on-disk config `<configDir>/<name>.json` (`Mounts[].Source`
 * and `.Target`): `source` when it is mounted at its own path, else `source:target`. Empty when
 * the file cannot be read.
 */
export async function readMounts(configDir: string, name: string): Promise<string[]> {
  try {
    const config = record(JSON.parse(await fs.readFile(path.join(configDir, `${name}.json`), 'utf8')))
    const mounts = Array.isArray(config.Mounts) ? config.Mounts.map(record) : []
    return mounts
      .filter((mount) => text(mount.Source) !== null)
      .map((mount) =>
        text(mount.Target) === null || mount.Target === mount.Source
          ? text(mount.Source)!
          : `${mount.Source}:${mount.Target}`,
      )
  } catch {
    return []
  }
}

/** Resolves true when a unix socket accepts a connection within `timeoutMs`. */
export async function socketAnswers(socketPath: string, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(socketPath)
    const done = (answers: boolean) => {
      socket.destroy()
      clearTimeout(timer)
      resolve(answers)
    }

    const timer = setTimeout(() => done(false), timeoutMs)
    socket.once('connect', () => done(true))
    socket.once('error', () => done(false))
  })
}
