/**
 * Who owns what a project name labels (DESIGN.md §3.1 "Ownership"), and the refusals of `up`:
 * a project name used by another owner, and busy host ports (DESIGN.md §4.2).
 */
import type {Target} from '../../sdk/target.js'
import type {EngineContainer, EngineResource} from './engine.js'

import {RefusedError} from '../../sdk/errors.js'
import {CHECKOUT_LABEL, COMPOSE_PROJECT_LABEL, COMPOSE_WORKING_DIR_LABEL, OWNER_LABEL, PROJECT_LABEL} from './labels.js'

/**
 * An anonymous volume the provider made for the project (`volumes: ["/app/node_modules"]`):
 * podman-compose 1.0.3 names it `<project>_<service>_<sha256 of the target>` and labels it with
 * the compose project only (no labels of the file reach it), so it is recognised by the project
 * label and that name; it belongs to whoever owns the project's containers.
 */
export function isAnonymousVolume(target: Target, volume: EngineResource): boolean {
  return (
    volume.labels[OWNER_LABEL] === undefined &&
    volume.labels[COMPOSE_PROJECT_LABEL] === target.project &&
    volume.name.startsWith(`${target.project}_`) &&
    /_[0-9a-f]{64}$/.test(volume.name)
  )
}

/** A project's containers, volumes and networks, split by the `yard.dev/owner` label. */
export class Ownership {
  readonly containers: EngineContainer[]
  readonly volumes: EngineResource[]
  readonly networks: EngineResource[]
  private readonly others: Array<{kind: string; name: string; labels: Record<string, string>}> = []

  constructor(
    readonly target: Target,
    containers: EngineContainer[],
    volumes: EngineResource[],
    networks: EngineResource[],
  ) {
    const mine = (labels: Record<string, string>) => labels[OWNER_LABEL] === target.owner
    this.containers = containers.filter((container) => mine(container.labels))
    this.volumes = volumes.filter((volume) => mine(volume.labels) || isAnonymousVolume(target, volume))
    this.networks = networks.filter((network) => mine(network.labels))
    for (const [kind, list] of [
      ['container', containers],
      ['volume', volumes.filter((volume) => !isAnonymousVolume(target, volume))],
      ['network', networks],
    ] as const) {
      for (const item of list) if (!mine(item.labels)) this.others.push({kind, name: item.name, labels: item.labels})
    }
  }

  /** "container app_web_1", … of other owners (or of none: made outside yard). */
  foreign(): string[] {
    return this.others.map((item) => `${item.kind} ${item.name}`)
  }

  /** The other owner's checkout directory, when a container says it. */
  foreignCheckout(): string | undefined {
    return this.others
      .map((item) => item.labels[CHECKOUT_LABEL] ?? item.labels[COMPOSE_WORKING_DIR_LABEL])
      .find(Boolean)
  }

  /** The other owner's hash, when labelled. */
  foreignOwner(): string | undefined {
    return this.others.map((item) => item.labels[OWNER_LABEL]).find(Boolean)
  }
}

/** Exit 3: the project name is taken by another checkout (DESIGN.md §3.1). */
export function foreignOwnerError(target: Target, ownership: Ownership): RefusedError {
  const owner = ownership.foreignOwner()
  const where = ownership.foreignCheckout()
  const who = owner
    ? `another checkout (owner ${owner}${where ? `, ${where}` : ''})`
    : `something created outside yard${where ? ` in ${where}` : ''}`
  return new RefusedError(
    `compose project ${target.project} is already used by ${who}; this checkout (${target.mainPath}) is owner ${target.owner}`,
    {
      why: `${ownership.foreign().slice(0, 4).join(', ')} carry that project name; project names are <prefix>-<name>, and the prefix defaults to the main checkout's directory name, so two clones in directories of the same name clash`,
      fix: `set a distinct prefix in ${target.mainPath}/yard.toml: [project] prefix = "${suggestPrefix(target.prefix)}" (or YARD_PREFIX); nothing was started or changed`,
    },
  )
}

function suggestPrefix(prefix: string): string {
  return `${prefix.slice(0, 20)}-2`
}

/**
 * Exit 3: host ports of the target are taken. Names each port and its `[ports]` key, and the
 * yard checkout whose container publishes it when there is one.
 */
export function busyPortError(
  target: Target,
  busy: Array<{key: string; port: number}>,
  publishing: EngineContainer[],
): RefusedError {
  const describe = ({key, port}: {key: string; port: number}) => {
    const holder = publishing.find((container) => container.ports.some((published) => published.host === port))
    const project = holder?.labels[PROJECT_LABEL]
    const dir = holder?.labels[CHECKOUT_LABEL] ?? holder?.labels[COMPOSE_WORKING_DIR_LABEL]
    const by =
      holder === undefined
        ? 'by another process'
        : project
          ? `by yard checkout ${project}${dir ? ` (${dir})` : ''}, container ${holder.name}`
          : `by container ${holder.name}`
    return `port ${port} (${key}) is in use ${by}`
  }

  return new RefusedError(`cannot start ${target.project}: ${busy.map(describe).join('; ')}`, {
    why: `${target.name === 'main' ? 'main' : `worktree ${target.name}`} publishes its [ports] at base + offset ${target.offset}; nothing was started`,
    fix: 'stop what holds the port (`yard down --worktree NAME` for a yard checkout), or pin this worktree to a free offset in yard.local.toml [worktree-offsets]',
  })
}
