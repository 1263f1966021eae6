/**
 * The box (DESIGN.md §4.2): container `<project>-box` from `[box] image`, on `<project>_default`
 * and every other network of the project (joined at `box up`, and by `up` when it makes more),
 * the main checkout and the worktrees root mounted at their own paths (or what `BoxSpec.readOnly`
 * and `mounts` name for `[box] mounts = "worktree"`), working dir = the
 * checkout, env of §3.5 plus `YARD_IN_BOX=1`, command `sleep infinity` (with an init process,
 * so it stops at once).
 */
import {existsSync} from 'node:fs'

import type {BackendContext, BoxCapability, BoxSpec, StackContainer, Target} from '../../core/backend.js'
import {InputError, OperationError, RefusedError} from '../../core/errors.js'
import type {Engine, EngineContainer} from './engine.js'
import {labelArgs} from './engine.js'
import {COMPOSE_PROJECT_LABEL, OWNER_LABEL, resourceLabels, ROLE_LABEL, yardLabels} from './labels.js'

/** The box's container name. */
export const boxName = (target: Target) => `${target.project}-box`
/** The network the box is created on, the stack's default network. */
export const boxNetwork = (target: Target) => `${target.project}_default`

export class ComposeBox implements BoxCapability {
  constructor(private readonly engine: Engine, private readonly context: BackendContext) {}

  /** The target's box when it exists and this owner made it. @throws RefusedError (exit 3) for another owner's. */
  async owned(target: Target): Promise<EngineContainer | undefined> {
    return this.ownedOf(target, await this.engine.container(boxName(target)))
  }

  /**
   * `owned`, from a listing of containers the caller already has (`up` lists them all at once).
   * @throws RefusedError (exit 3) for another owner's box.
   */
  ownedIn(target: Target, containers: readonly EngineContainer[]): EngineContainer | undefined {
    return this.ownedOf(target, containers.find((container) => container.name === boxName(target)))
  }

  private ownedOf(target: Target, box: EngineContainer | undefined): EngineContainer | undefined {
    if (box && box.labels[OWNER_LABEL] !== target.owner) {
      throw new RefusedError(`container ${box.name} belongs to another checkout (owner ${box.labels[OWNER_LABEL] ?? 'none: made outside yard'})`, {
        why: `this checkout (${target.mainPath}) is owner ${target.owner}; project names clash when two clones share a directory name`,
        fix: `set a distinct [project] prefix in ${target.mainPath}/yard.toml (or YARD_PREFIX)`,
      })
    }
    return box
  }

  /**
   * Starts the box (creating it and its network when missing). Resolves false when it was running.
   * @throws InputError (exit 2) for a mount path containing `:`; OperationError (exit 1) when the engine fails.
   */
  async up(target: Target, spec: BoxSpec): Promise<boolean> {
    const box = await this.owned(target)
    if (box?.state === 'running') return false
    if (box) {
      await this.engine.startContainers([box.id])
      return true
    }
    const network = boxNetwork(target)
    if (!(await this.engine.networkExists(network))) await this.engine.createNetwork(network, resourceLabels(target))
    // The project's own networks that exist (external ones carry no project label).
    const others = (await this.engine.networks([`${COMPOSE_PROJECT_LABEL}=${target.project}`, `${OWNER_LABEL}=${target.owner}`])).map((item) => item.name).filter((name) => name !== network)
    const mounts = [...new Set(spec.mounts)].filter((mount) => existsSync(mount))
    const readOnly = [...new Set(spec.readOnly ?? [])].filter((mount) => existsSync(mount) && !mounts.includes(mount))
    for (const mount of [...mounts, ...readOnly]) {
      if (mount.includes(':')) throw new InputError(`cannot mount ${mount} into the box: the path contains ":"`, {fix: 'move the checkout (or the worktrees root) to a path without ":"'})
    }
    const env = Object.entries({...spec.env, YARD_IN_BOX: '1'}).flatMap(([key, value]) => ['--env', `${key}=${value}`])
    await this.context.runner.run(this.engine.command, [
      'run', '--detach', '--init', '--name', boxName(target),
      ...labelArgs({...yardLabels(target), [ROLE_LABEL]: 'box'}),
      ...[network, ...others].flatMap((name) => ['--network', name]),
      '--security-opt', 'label=disable',
      // podman mounts by destination depth, so a writable path below a read-only one stays writable.
      ...readOnly.flatMap((mount) => ['--volume', `${mount}:${mount}:ro`]),
      ...mounts.flatMap((mount) => ['--volume', `${mount}:${mount}`]),
      '--workdir', target.checkoutPath,
      ...env,
      // podman run's options end at the image; `--` says so, so no image is ever read as a flag.
      '--', spec.image, 'sleep', 'infinity',
    ])
    return true
  }

  /**
   * Connects the running box `box` (from `owned`) to the project's networks it is not on yet
   * (`up` made them after the box started); a box that is absent or stopped joins them when it is
   * created or started.
   */
  async connect(box: EngineContainer, networks: readonly string[]): Promise<void> {
    const joined = new Set(await this.engine.containerNetworks(box.id))
    for (const network of networks.filter((name) => !joined.has(name))) await this.engine.connectNetwork(network, box.id)
  }

  /**
   * Removes the box, and `<project>_default` when no stack container uses it; works from the Target alone.
   * @returns what went (empty when there was no box)
   */
  async down(target: Target): Promise<string[]> {
    const box = await this.owned(target)
    if (!box) return []
    await this.engine.removeContainers([box.id], 2)
    const gone = [`container ${box.name}`]
    const stack = await this.engine.containers([`${COMPOSE_PROJECT_LABEL}=${target.project}`])
    const network = (await this.engine.networks([`${COMPOSE_PROJECT_LABEL}=${target.project}`])).find((item) => item.name === boxNetwork(target))
    if (stack.length === 0 && network?.labels[OWNER_LABEL] === target.owner && (await this.engine.removeNetwork(network.name))) gone.push(`network ${network.name}`)
    return gone
  }

  async ps(target: Target): Promise<StackContainer[]> {
    const box = await this.owned(target)
    return box ? [{service: 'box', container: box.name, state: box.state, ports: box.ports}] : []
  }

  /**
   * `podman exec` in the box, in the checkout's directory, on this terminal. Resolves with the
   * command's exit code (125/126/127 are the engine's, as `podman exec` gives them).
   * @throws OperationError (exit 1) when the box is not running, with the `yard box up` hint.
   */
  async exec(target: Target, argv: string[], options: {tty: boolean}): Promise<number> {
    const box = await this.owned(target)
    if (box?.state !== 'running') {
      const flag = target.isMain ? '' : ` --worktree ${target.name}`
      throw new OperationError(`the box of ${target.name} is ${box ? box.state : 'not created'}`, {
        why: `yard exec runs commands in the container ${boxName(target)}`,
        fix: `run \`yard box up${flag}\` first`,
      })
    }
    const result = await this.context.runner.run(this.engine.command, ['exec', '--interactive', ...(options.tty ? ['--tty'] : []), '--workdir', target.checkoutPath, box.name, ...argv], {
      stdio: 'inherit',
      allowFailure: true,
    })
    return result.exitCode
  }
}
