/**
 * The container engine, talked to directly (DESIGN.md §4.2): ps, down, nuke and network cleanup
 * do not go through the compose provider, so they work with every provider and after a
 * checkout's directory is gone. Queries filter by label (an exact match), never by name (a
 * substring match). `podman` and `docker` share the `inspect` shapes read here.
 */
import type {ProcessRunner} from '../../core/process.js'

export type EngineCommand = 'podman' | 'docker'

export interface EngineContainer {
  id: string
  name: string
  /** `running`, `exited`, `created`, … */
  state: string
  labels: Record<string, string>
  /** Published ports of a running container. */
  ports: Array<{host: number; container: number}>
}

export interface EngineResource {
  name: string
  labels: Record<string, string>
}

type Json = Record<string, unknown>

const asRecord = (value: unknown): Record<string, string> => (value !== null && typeof value === 'object' ? (value as Record<string, string>) : {})

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
      if (Number.isInteger(host) && !ports.some((port) => port.host === host && port.container === container)) ports.push({host, container})
    }
  }
  return ports
}

/** One engine CLI (`podman` or `docker`) through the process runner. */
export class Engine {
  constructor(readonly command: EngineCommand, private readonly runner: ProcessRunner) {}

  /** Every container (running or not) carrying all the labels given (`key=value`). */
  async containers(labels: readonly string[]): Promise<EngineContainer[]> {
    const filters = labels.flatMap((label) => ['--filter', `label=${label}`])
    const ids = (await this.runner.run(this.command, ['ps', '--all', '--quiet', '--no-trunc', ...filters])).stdout.split('\n').map((line) => line.trim()).filter(Boolean)
    return this.inspectContainers(ids)
  }

  /** Every running container that publishes a host port (to tell who holds a busy port). */
  async publishing(): Promise<EngineContainer[]> {
    const ids = (await this.runner.run(this.command, ['ps', '--quiet', '--no-trunc'])).stdout.split('\n').map((line) => line.trim()).filter(Boolean)
    return (await this.inspectContainers(ids)).filter((container) => container.ports.length > 0)
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
      }
    })
  }

  /** Volumes carrying all the labels given. */
  async volumes(labels: readonly string[]): Promise<EngineResource[]> {
    const filters = labels.flatMap((label) => ['--filter', `label=${label}`])
    const names = (await this.runner.run(this.command, ['volume', 'ls', '--quiet', ...filters])).stdout.split('\n').map((line) => line.trim()).filter(Boolean)
    if (names.length === 0) return []
    const result = await this.runner.run(this.command, ['volume', 'inspect', ...names])
    return parseJsonArray(result.stdout).map((entry) => ({name: String(entry.Name ?? entry.name), labels: asRecord(entry.Labels ?? entry.labels)}))
  }

  /** Networks carrying all the labels given. */
  async networks(labels: readonly string[]): Promise<EngineResource[]> {
    const filters = labels.flatMap((label) => ['--filter', `label=${label}`])
    const names = (await this.runner.run(this.command, ['network', 'ls', '--quiet', ...filters])).stdout.split('\n').map((line) => line.trim()).filter(Boolean)
    if (names.length === 0) return []
    const result = await this.runner.run(this.command, ['network', 'inspect', ...names])
    return parseJsonArray(result.stdout).map((entry) => ({name: String(entry.Name ?? entry.name), labels: asRecord(entry.Labels ?? entry.labels)}))
  }

  async volumeExists(name: string): Promise<boolean> {
    return (await this.runner.run(this.command, ['volume', 'inspect', name], {allowFailure: true})).exitCode === 0
  }

  async networkExists(name: string): Promise<boolean> {
    return (await this.runner.run(this.command, ['network', 'inspect', name], {allowFailure: true})).exitCode === 0
  }

  async createVolume(name: string, labels: Record<string, string>): Promise<void> {
    await this.runner.run(this.command, ['volume', 'create', ...labelArgs(labels), name])
  }

  async createNetwork(name: string, labels: Record<string, string>): Promise<void> {
    await this.runner.run(this.command, ['network', 'create', ...labelArgs(labels), name])
  }

  /** Stops (SIGTERM, then SIGKILL after `graceSeconds`) and removes containers by id. */
  async removeContainers(ids: readonly string[], graceSeconds = 10): Promise<void> {
    if (ids.length === 0) return
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
