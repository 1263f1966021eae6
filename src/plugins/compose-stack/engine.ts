import type {ProcessRunner} from '../../sdk/process.js'

/**
 * The container engine, talked to directly (DESIGN.md §4.2): ps, down, nuke and network cleanup
 * do not go through the compose provider, so they work with every provider and after a
 * checkout's directory is gone. Queries filter by label (an exact match), never by name (a
 * substring match). `podman` and `docker` share the `inspect` shapes read here.
 */
import {OperationError} from '../../sdk/errors.js'

export type EngineCommand = 'podman' | 'docker'

export interface EngineContainer {
  id: string
  name: string
  /** `running`, `exited`, `created`, … */
  state: string
  labels: Record<string, string>
  /** Published ports of a running container. */
  ports: Array<{host: number; container: number}>
  /** The exit code of a container that ran and stopped (state `exited`). */
  exitCode?: number
}

/** `exitCode` for an exited container, else nothing: a code of a running one says nothing. */
function exitedWith(state: string, code: unknown): {exitCode?: number} {
  return state === 'exited' && Number.isInteger(Number(code)) ? {exitCode: Number(code)} : {}
}

export interface EngineResource {
  name: string
  labels: Record<string, string>
}

type Json = Record<string, unknown>

const asRecord = (value: unknown): Record<string, string> =>
  value !== null && typeof value === 'object' ? (value as Record<string, string>) : {}

function parseJsonArray(text: string): Json[] {
  const trimmed = text.trim()
  if (trimmed === '') return []
  const parsed = JSON.parse(trimmed) as unknown
  return Array.isArray(parsed) ? (parsed as Json[]) : []
}

function containerPorts(settings: unknown): Array<{host: number; container: number}> {
  const ports: Array<{host: number; container: number}> = []
  for (const [spec, bindings] of Object.entries(asRecord((settings as Json | undefined)?.Ports))) {
    const container = Number.parseInt(spec, 10)
    if (!Array.isArray(bindings)) continue
    for (const binding of bindings as Json[]) {
      const host = Number.parseInt(String(binding.HostPort ?? ''), 10)
      if (Number.isInteger(host) && ports.every((port) => !(port.host === host && port.container === container)))
        ports.push({host, container})
    }
  }

  return ports
}

/** A row of `podman ps --format json` (podman 4): ports as `{host_port, container_port, range}`. */
function fromPodmanList(entry: Json): EngineContainer {
  const ports: Array<{host: number; container: number}> = []
  const running = entry.State === 'running'
  for (const port of (Array.isArray(entry.Ports) ? entry.Ports : []) as Json[]) {
    const range = Number(port.range ?? 1) || 1
    for (let index = 0; running && index < range; index++)
      ports.push({host: Number(port.host_port) + index, container: Number(port.container_port) + index})
  }

  const names = Array.isArray(entry.Names) ? entry.Names.map(String) : []
  const state = String(entry.State ?? 'unknown')
  return {
    id: String(entry.Id ?? ''),
    name: names[0] ?? '',
    state,
    labels: asRecord(entry.Labels),
    ports,
    ...exitedWith(state, entry.ExitCode),
  }
}

/** One engine CLI (`podman` or `docker`) through the process runner. */
export class Engine {
  constructor(
    readonly command: EngineCommand,
    private readonly runner: ProcessRunner,
  ) {}

  /** Every container (running or not) carrying all the labels given (`key=value`). */
  async containers(labels: readonly string[]): Promise<EngineContainer[]> {
    const filters = labels.flatMap((label) => ['--filter', `label=${label}`])
    // podman lists everything read here in one call; docker's list is text, so docker gets ids, then inspect.
    if (this.command === 'podman')
      return parseJsonArray(
        (await this.runner.run('podman', ['ps', '--all', '--format', 'json', ...filters])).stdout,
      ).map(fromPodmanList)
    const ids = (await this.runner.run(this.command, ['ps', '--all', '--quiet', '--no-trunc', ...filters])).stdout
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean)
    return this.inspectContainers(ids)
  }

  /** The container of that exact name, or undefined. */
  async container(name: string): Promise<EngineContainer | undefined> {
    const found = await this.inspectContainers([name], true)
    return found.find((container) => container.name === name)
  }

  private async inspectContainers(ids: readonly string[], allowMissing = false): Promise<EngineContainer[]> {
    if (ids.length === 0) return []
    const result = await this.runner.run(this.command, ['container', 'inspect', ...ids], {allowFailure: allowMissing})
    if (result.exitCode !== 0) return []
    return parseJsonArray(result.stdout).map((entry) => {
      const config = (entry.Config ?? {}) as Json
      const state = (entry.State ?? {}) as Json
      return {
        id: String(entry.Id ?? ''),
        name: String(entry.Name ?? '').replace(/^\//, ''),
        state: String(state.Status ?? 'unknown'),
        labels: asRecord(config.Labels),
        ports: state.Status === 'running' ? containerPorts(entry.NetworkSettings) : [],
        ...exitedWith(String(state.Status), state.ExitCode),
      }
    })
  }

  /** Volumes carrying all the labels given. */
  async volumes(labels: readonly string[]): Promise<EngineResource[]> {
    return this.resources('volume', labels)
  }

  /** Networks carrying all the labels given. */
  async networks(labels: readonly string[]): Promise<EngineResource[]> {
    return this.resources('network', labels)
  }

  private async resources(kind: 'volume' | 'network', labels: readonly string[]): Promise<EngineResource[]> {
    const filters = labels.flatMap((label) => ['--filter', `label=${label}`])
    const read = (entry: Json) => ({
      name: String(entry.Name ?? entry.name),
      labels: asRecord(entry.Labels ?? entry.labels),
    })
    if (this.command === 'podman')
      return parseJsonArray((await this.runner.run('podman', [kind, 'ls', '--format', 'json', ...filters])).stdout).map(
        read,
      )
    const names = (await this.runner.run(this.command, [kind, 'ls', '--quiet', ...filters])).stdout
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean)
    if (names.length === 0) return []
    return parseJsonArray((await this.runner.run(this.command, [kind, 'inspect', ...names])).stdout).map(read)
  }

  async volumeExists(name: string): Promise<boolean> {
    return (await this.runner.run(this.command, ['volume', 'inspect', name], {allowFailure: true})).exitCode === 0
  }

  async networkExists(name: string): Promise<boolean> {
    return (await this.runner.run(this.command, ['network', 'inspect', name], {allowFailure: true})).exitCode === 0
  }

  /** The networks a container is on, by name. */
  async containerNetworks(id: string): Promise<string[]> {
    const result = await this.runner.run(
      this.command,
      ['container', 'inspect', '--format', '{{json .NetworkSettings.Networks}}', id],
      {allowFailure: true},
    )
    if (result.exitCode !== 0) return []
    try {
      return Object.keys(JSON.parse(result.stdout.trim()) as Record<string, unknown>)
    } catch {
      return []
    }
  }

  /** Connects a container to a network (`network connect`); resolves false when the engine says no. */
  async connectNetwork(network: string, container: string): Promise<boolean> {
    return (
      (await this.runner.run(this.command, ['network', 'connect', network, container], {allowFailure: true}))
        .exitCode === 0
    )
  }

  async createNetwork(name: string, labels: Record<string, string>): Promise<void> {
    await this.runner.run(this.command, ['network', 'create', ...labelArgs(labels), name])
  }

  /**
   * Creates the volume or network `name` with `labels` unless it exists; one engine call when it
   * does not (the create), two when a create fails (then the inspect tells "exists" from a real
   * failure). An existing one is left as it is, labels included.
   * @throws OperationError (exit 1) when the create fails and the resource does not exist.
   */
  async ensureResource(kind: 'volume' | 'network', name: string, labels: Record<string, string>): Promise<void> {
    const created = await this.runner.run(this.command, [kind, 'create', ...labelArgs(labels), name], {
      allowFailure: true,
    })
    if (created.exitCode === 0) return
    const exists = kind === 'volume' ? await this.volumeExists(name) : await this.networkExists(name)
    if (exists) return
    throw new OperationError(`${this.command} ${kind} create ${name} failed with exit code ${created.exitCode}`, {
      why: created.stderr.trim().split('\n').slice(-3).join('\n') || `${this.command} said nothing`,
      fix: `check the engine with \`${this.command} info\` and \`yard doctor\``,
    })
  }

  /** Stops (SIGTERM, then SIGKILL after `graceSeconds`) and removes containers by id. */
  async removeContainers(ids: readonly string[], graceSeconds = 10): Promise<void> {
    if (ids.length === 0) return
    if (this.command === 'podman') {
      await this.runner.run('podman', ['rm', '--force', '--time', String(graceSeconds), ...ids])
      return
    }

    await this.runner.run(this.command, ['stop', '--time', String(graceSeconds), ...ids], {allowFailure: true})
    await this.runner.run(this.command, ['rm', '--force', ...ids])
  }

  /** Starts stopped containers by id. */
  async startContainers(ids: readonly string[]): Promise<void> {
    if (ids.length > 0) await this.runner.run(this.command, ['start', ...ids])
  }

  async removeVolumes(names: readonly string[]): Promise<void> {
    if (names.length > 0) await this.runner.run(this.command, ['volume', 'rm', ...names])
  }

  /** Removes one network; resolves false (and removes nothing) when a container still uses it. */
  async removeNetwork(name: string): Promise<boolean> {
    return (await this.runner.run(this.command, ['network', 'rm', name], {allowFailure: true})).exitCode === 0
  }
}

/** `--label key=value` arguments. */
export function labelArgs(labels: Record<string, string>): string[] {
  return Object.entries(labels).flatMap(([key, value]) => ['--label', `${key}=${value}`])
}
