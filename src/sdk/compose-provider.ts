import type {ProcessRunner} from './process.js'

/**
 * Which compose provider answers on this machine (DESIGN.md §4.2, `[stack] provider`): the first
 * that actually answers of `podman compose`, `podman-compose`, `docker compose`, `docker-compose`.
 * A `docker` client without a daemon, or without the compose plugin, does not count. Used by
 * `yard doctor` and by the compose-stack backend for `provider = "auto"`.
 */
import {OperationError} from './errors.js'

/** The providers, in `auto` order. */
export const COMPOSE_PROVIDERS = ['podman compose', 'podman-compose', 'docker compose', 'docker-compose'] as const
export type ComposeProviderId = (typeof COMPOSE_PROVIDERS)[number]

export interface ComposeProvider {
  id: ComposeProviderId
  /** The argv prefix to run it: `['podman', 'compose']`, `['podman-compose']`… */
  command: readonly string[]
  /** The engine that ps, down, nuke and network cleanup talk to directly (DESIGN.md §4.2). */
  engine: 'podman' | 'docker'
  /** The provider's version as it reports it (`1.0.3`), when it says. */
  version?: string
}

/** What one provider's probe found. */
export interface ComposeProbe {
  id: ComposeProviderId
  ok: boolean
  version?: string
  /** Why it does not count (not installed, no daemon, …); absent when ok. */
  reason?: string
}

export interface ComposeDetection {
  /** The first provider, in order, that answered; undefined when none did. */
  provider?: ComposeProvider
  /** Every provider probed, in order. */
  probes: ComposeProbe[]
}

export interface DetectOptions {
  /** `auto` (default) probes all four; a provider id probes only that one. */
  preference?: 'auto' | ComposeProviderId
  /** Budget per probe command, in ms (default 10 s): a docker client aimed at a dead host can hang. */
  timeoutMs?: number
}

const SHAPES: Record<ComposeProviderId, {command: readonly string[]; engine: 'podman' | 'docker'}> = {
  'podman compose': {command: ['podman', 'compose'], engine: 'podman'},
  'podman-compose': {command: ['podman-compose'], engine: 'podman'},
  'docker compose': {command: ['docker', 'compose'], engine: 'docker'},
  'docker-compose': {command: ['docker-compose'], engine: 'docker'},
}

/** The argv prefix and engine of a provider, without probing it. */
export function composeProviderShape(id: ComposeProviderId): {command: readonly string[]; engine: 'podman' | 'docker'} {
  return SHAPES[id]
}

/** `1.0.3` from "podman-composer version  1.0.3", `2.29.1` from "Docker Compose version v2.29.1". */
export function parseVersion(text: string): string | undefined {
  return /\bv?(\d+\.\d+(?:\.\d+)?)/.exec(text)?.[1]
}

/** The version on the line that names compose ("podman-composer version  1.0.3"), else the first. */
function providerVersion(output: string): string | undefined {
  const lines = output
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
  return parseVersion(lines.find((line) => /compose.*version/i.test(line)) ?? lines[0] ?? '')
}

function firstLine(text: string): string {
  return (
    text
      .trim()
      .split('\n')
      .find((line) => line.trim() !== '')
      ?.trim() ?? ''
  )
}

/**
 * Probes one provider: `<command> version` must exit 0, and for the docker providers the docker
 * engine must answer too (`docker version --format {{.Server.Version}}`; without a docker CLI,
 * `docker-compose ls --quiet`). Never throws.
 */
export async function probeComposeProvider(
  runner: ProcessRunner,
  id: ComposeProviderId,
  timeoutMs = 10_000,
): Promise<ComposeProbe> {
  const {command, engine} = SHAPES[id]
  const budget = {allowFailure: true, timeoutMs, budget: 'compose probe'} as const
  const answer = await runner.run(command[0], [...command.slice(1), 'version'], budget)
  if (answer.exitCode === 127 && answer.stderr === '') return {id, ok: false, reason: `${command[0]} is not installed`}
  if (answer.timedOut) return {id, ok: false, reason: `\`${id} version\` did not answer within ${timeoutMs} ms`}
  if (answer.exitCode !== 0) {
    return {
      id,
      ok: false,
      reason: `\`${id} version\` failed (exit ${answer.exitCode}): ${firstLine(answer.stderr) || firstLine(answer.stdout)}`,
    }
  }

  const version = providerVersion(`${answer.stdout}\n${answer.stderr}`)
  if (engine === 'podman') return {id, ok: true, version}

  const server = await runner.run('docker', ['version', '--format', '{{.Server.Version}}'], budget)
  if (server.exitCode === 0 && server.stdout.trim() !== '') return {id, ok: true, version}
  if (server.exitCode === 127 && id === 'docker-compose') {
    const listed = await runner.run('docker-compose', ['ls', '--quiet'], budget)
    if (listed.exitCode === 0) return {id, ok: true, version}
    return {
      id,
      ok: false,
      version,
      reason: `no docker engine answers: ${firstLine(listed.stderr) || `exit ${listed.exitCode}`}`,
    }
  }

  return {
    id,
    ok: false,
    version,
    reason: `no docker engine answers: ${firstLine(server.stderr) || `exit ${server.exitCode}`}`,
  }
}

/**
 * Finds the compose provider to use (DESIGN.md §4.2). With `auto`, all four are probed at once
 * and the first in order that answered wins; a named preference probes only that one.
 * Never throws: `provider` is undefined when none answers, and `probes` say why.
 */
export async function detectComposeProvider(
  runner: ProcessRunner,
  options: DetectOptions = {},
): Promise<ComposeDetection> {
  const preference = options.preference ?? 'auto'
  const ids = preference === 'auto' ? [...COMPOSE_PROVIDERS] : [preference]
  const probes = await Promise.all(ids.map(async (id) => probeComposeProvider(runner, id, options.timeoutMs)))
  const found = probes.find((probe) => probe.ok)
  return {provider: found ? {id: found.id, ...SHAPES[found.id], version: found.version} : undefined, probes}
}

/** One line per probe: "podman compose: unrecognized command; docker-compose: not installed". */
export function describeProbes(probes: readonly ComposeProbe[]): string {
  return probes
    .map((probe) => `${probe.id}: ${probe.ok ? `answers${probe.version ? ` (${probe.version})` : ''}` : probe.reason}`)
    .join('; ')
}

/**
 * Like `detectComposeProvider`, for callers that cannot go on without one (`yard up`).
 * @throws OperationError (exit 1) naming what each provider said, with the install command.
 */
export async function requireComposeProvider(
  runner: ProcessRunner,
  options: DetectOptions = {},
): Promise<ComposeProvider> {
  const detection = await detectComposeProvider(runner, options)
  if (detection.provider) return detection.provider
  const preference = options.preference ?? 'auto'
  throw new OperationError(
    preference === 'auto' ? 'no compose provider answers' : `the compose provider "${preference}" does not answer`,
    {
      why: describeProbes(detection.probes),
      fix:
        preference === 'auto'
          ? 'install one (Debian/Ubuntu: `sudo apt-get install podman-compose`), then run `yard doctor`'
          : 'install it, or set [stack] provider = "auto" (or YARD_STACK_PROVIDER=auto), then run `yard doctor`',
    },
  )
}
