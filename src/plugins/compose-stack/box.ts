/**
 * The box (DESIGN.md §4.2): container `<project>-box` from `[box] image`, on `<project>_default`
 * and every other network of the project (joined at `box up`, and by `up` when it makes more),
 * the main checkout and the worktrees root mounted at their own paths (or what `BoxSpec.readOnly`
 * and `mounts` name for `[box] mounts = "worktree"`), working dir = the
 * checkout, env of §3.5 plus `YARD_IN_BOX=1`, command `sleep infinity` (with an init process,
 * so it stops at once).
 */
import {existsSync, promises as fs, readFileSync} from 'node:fs'
import path from 'node:path'

import type {RunResult} from '../../sdk/process.js'
import type {BoxCapability, BoxSpec, StackContainer} from '../../sdk/stack.js'
import type {BackendContext, Target} from '../../sdk/target.js'
import type {Engine, EngineContainer} from './engine.js'

import {confirmedExecFailure, engineProbe, isEngineExecFailure} from '../../sdk/engine-exec.js'
import {ExitCode, InputError, OperationError, RefusedError, YardError} from '../../sdk/errors.js'
import {labelArgs} from './engine.js'
import {COMPOSE_PROJECT_LABEL, OWNER_LABEL, resourceLabels, ROLE_LABEL, yardLabels} from './labels.js'

/** The box's container name. */
export const boxName = (target: Target) => `${target.project}-box`
/** The network the box is created on, the stack's default network. */
export const boxNetwork = (target: Target) => `${target.project}_default`

export class ComposeBox implements BoxCapability {
  constructor(
    private readonly engine: Engine,
    private readonly context: BackendContext,
  ) {}

  /** The target's box when it exists and this owner made it. @throws RefusedError (exit 3) for another owner's. */
  async owned(target: Target): Promise<EngineContainer | undefined> {
    return this.ownedOf(target, await this.engine.container(boxName(target)))
  }

  /**
   * `owned`, from a listing of containers the caller already has (`up` lists them all at once).
   * @throws RefusedError (exit 3) for another owner's box.
   */
  ownedIn(target: Target, containers: readonly EngineContainer[]): EngineContainer | undefined {
    return this.ownedOf(
      target,
      containers.find((container) => container.name === boxName(target)),
    )
  }

  private ownedOf(target: Target, box: EngineContainer | undefined): EngineContainer | undefined {
    if (box && box.labels[OWNER_LABEL] !== target.owner) {
      throw new RefusedError(
        `container ${box.name} belongs to another checkout (owner ${box.labels[OWNER_LABEL] ?? 'none: made outside yard'})`,
        {
          why: `this checkout (${target.mainPath}) is owner ${target.owner}; project names clash when two clones share a directory name`,
          fix: `set a distinct [project] prefix in ${target.mainPath}/yard.toml (or YARD_PREFIX)`,
        },
      )
    }

    return box
  }

  /**
   * Starts the box (creating it and its network when missing). Resolves false when it was running.
   * @throws InputError (exit 2) for a mount path containing `:`; OperationError (exit 1) when the engine fails.
   */
  async up(target: Target, spec: BoxSpec): Promise<boolean> {
    const box = await this.owned(target)
    if (box?.state === 'running') {
      await this.recordId(target, box.id)
      return false
    }

    // A box that never ran (an earlier start failed) holds nothing: it is made anew, with today's
    // spec and engine settings, rather than started as it was made.
    if (box?.state === 'created') await this.engine.removeContainers([box.id], 0)
    else if (box) {
      await this.engine.startContainers([box.id])
      await this.confirmRunning(target, box.id, 'its image', async () => undefined)
      await this.recordId(target, box.id)
      return true
    }

    const network = boxNetwork(target)
    const madeNetwork = !(await this.engine.networkExists(network))
    if (madeNetwork) await this.engine.createNetwork(network, resourceLabels(target))
    // The project's own networks that exist (external ones carry no project label).
    const others = (
      await this.engine.networks([`${COMPOSE_PROJECT_LABEL}=${target.project}`, `${OWNER_LABEL}=${target.owner}`])
    )
      .map((item) => item.name)
      .filter((name) => name !== network)
    const mounts = [...new Set(spec.mounts)].filter((mount) => existsSync(mount))
    const readOnly = [...new Set(spec.readOnly)].filter((mount) => existsSync(mount) && !mounts.includes(mount))
    for (const mount of [...mounts, ...readOnly]) {
      if (mount.includes(':'))
        throw new InputError(`cannot mount ${mount} into the box: the path contains ":"`, {
          fix: 'move the checkout (or the worktrees root) to a path without ":"',
        })
    }

    const env = Object.entries({...spec.env, YARD_IN_BOX: '1'}).flatMap(([key, value]) => ['--env', `${key}=${value}`])
    const created = await this.context.runner
      .run(this.engine.command, [
        'run',
        '--detach',
        '--init',
        '--name',
        boxName(target),
        ...labelArgs({...yardLabels(target), [ROLE_LABEL]: 'box'}),
        ...[network, ...others].flatMap((name) => ['--network', name]),
        '--security-opt',
        'label=disable',
        // podman mounts by destination depth, so a writable path below a read-only one stays writable.
        ...readOnly.flatMap((mount) => ['--volume', `${mount}:${mount}:ro`]),
        ...mounts.flatMap((mount) => ['--volume', `${mount}:${mount}`]),
        '--workdir',
        target.checkoutPath,
        ...env,
        // podman run's options end at the image; `--` says so, so no image is ever read as a flag.
        '--',
        spec.image,
        'sleep',
        'infinity',
      ])
      .catch(async (error: unknown) => {
        // `podman run` that fails to start leaves the container created: nothing half-made stays.
        const left = await this.owned(target).catch(() => undefined)
        if (left) await this.engine.removeContainers([left.id], 0).catch(() => undefined)
        if (madeNetwork) await this.engine.removeNetwork(network).catch(() => undefined)
        throw error
      })
    const id = created.stdout.trim()
    await this.confirmRunning(target, id, spec.image, async () => {
      await this.engine.removeContainers([id], 0).catch(() => undefined)
      if (madeNetwork) await this.engine.removeNetwork(network).catch(() => undefined)
    })
    await this.recordId(target, id)
    return true
  }

  /**
   * A box whose command ended at once (an image without `sleep`, an entrypoint that exits) is no
   * box: `undo` removes what this `up` made, and the error says what the container printed.
   * @throws OperationError (exit 1) when the container is not running right after its start.
   */
  private async confirmRunning(target: Target, id: string, image: string, undo: () => Promise<void>): Promise<void> {
    const started = await this.engine.container(boxName(target))
    if (started === undefined || started.state === 'running') return
    const logs = await this.context.runner.run(this.engine.command, ['logs', '--tail', '3', id], {allowFailure: true})
    const said = `${logs.stdout}\n${logs.stderr}`.trim().split('\n').filter(Boolean).at(-1)
    await undo()
    throw new OperationError(
      `the box of ${target.name} stopped as soon as it started (${started.state}${started.exitCode === undefined ? '' : `, exit ${started.exitCode}`})`,
      {
        why: `the box runs \`sleep infinity\` in ${image} under podman's init${said ? `; it printed: ${said}` : ''}`,
        fix: `set [box] image to an image with sh and sleep (yard's default image has both), then \`yard box down --worktree ${target.name}\` and \`yard box up --worktree ${target.name}\``,
      },
    )
  }

  /**
   * Connects the running box `box` (from `owned`) to the project's networks it is not on yet
   * (`up` made them after the box started); a box that is absent or stopped joins them when it is
   * created or started.
   */
  async connect(box: EngineContainer, networks: readonly string[]): Promise<void> {
    const joined = new Set(await this.engine.containerNetworks(box.id))
    for (const network of networks.filter((name) => !joined.has(name)))
      await this.engine.connectNetwork(network, box.id)
  }

  /**
   * Removes the box, and `<project>_default` when no stack container uses it; works from the Target alone.
   * @returns what went (empty when there was no box)
   */
  async down(target: Target): Promise<string[]> {
    const box = await this.owned(target)
    if (!box) return []
    await this.engine.removeContainers([box.id], 2)
    await fs.rm(this.idFile(target), {force: true})
    const gone = [`container ${box.name}`]
    const stack = await this.engine.containers([`${COMPOSE_PROJECT_LABEL}=${target.project}`])
    const network = (await this.engine.networks([`${COMPOSE_PROJECT_LABEL}=${target.project}`])).find(
      (item) => item.name === boxNetwork(target),
    )
    if (
      stack.length === 0 &&
      network?.labels[OWNER_LABEL] === target.owner &&
      (await this.engine.removeNetwork(network.name))
    )
      gone.push(`network ${network.name}`)
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
    // The fast path: one `podman exec` of the container whose owner was checked when its id was
    // recorded (an id names that one container; a box made anew has another). Gone or stopped,
    // it falls through to the inspect below, which says which, in yard's words.
    const recorded = this.engine.command === 'podman' ? this.recordedId(target) : undefined
    if (recorded !== undefined) {
      const result = await this.runExec(recorded, target, argv, options)
      const failure = await confirmedExecFailure(
        result,
        engineProbe(this.context.runner, this.engine.command, recorded),
      )
      if (failure === undefined) return this.passThrough(result)
      if (failure === 'no-directory') throw noDirectory(target, boxName(target))
    }

    const box = await this.owned(target)
    if (box?.state !== 'running') {
      const flag = target.isMain ? '' : ` --worktree ${target.name}`
      throw new OperationError(`the box of ${target.name} is ${box ? box.state : 'not created'}`, {
        why: `yard exec runs commands in the container ${boxName(target)}`,
        fix: `run \`yard box up${flag}\` first`,
      })
    }

    await this.recordId(target, box.id)
    const result = await this.runExec(box.id, target, argv, options)
    const failure = await confirmedExecFailure(result, engineProbe(this.context.runner, this.engine.command, box.id))
    if (failure === 'no-directory') throw noDirectory(target, box.name)
    // The command's own lines, or stopped or removed in between: the words as podman exec gives them.
    return this.passThrough(result)
  }

  /** An exec's held lines (the command's own, or the engine's as it said them) on stderr; its exit code. */
  private passThrough(result: RunResult): number {
    if (result.stderr !== '') process.stderr.write(result.stderr)
    return result.exitCode
  }

  /** `podman exec` on this terminal; the engine's own failures are held back (sdk/engine-exec.ts). */
  private async runExec(
    container: string,
    target: Target,
    argv: string[],
    options: {tty: boolean},
  ): Promise<RunResult> {
    return this.context.runner.run(
      this.engine.command,
      [
        'exec',
        '--interactive',
        ...(options.tty ? ['--tty'] : []),
        '--workdir',
        target.checkoutPath,
        container,
        ...argv,
      ],
      {
        stdio: 'inherit',
        allowFailure: true,
        stderrHold: isEngineExecFailure,
      },
    )
  }

  /** `<state dir>/boxes/<project>.<owner>.id`: the id of the box this owner made (checked when written). */
  private idFile(target: Target): string {
    return path.join(this.context.stateDir, 'boxes', `${target.project}.${target.owner}.id`)
  }

  private recordedId(target: Target): string | undefined {
    try {
      const id = readFileSync(this.idFile(target), 'utf8').trim()
      return /^[0-9a-f]{64}$/.test(id) ? id : undefined
    } catch {
      return undefined
    }
  }

  /** Best effort: without the record, exec inspects first. */
  private async recordId(target: Target, id: string): Promise<void> {
    if (!/^[0-9a-f]{64}$/.test(id) || this.recordedId(target) === id) return
    const file = this.idFile(target)
    await fs
      .mkdir(path.dirname(file), {recursive: true})
      .then(async () => fs.writeFile(file, id + '\n'))
      .catch(() => undefined)
  }
}

function noDirectory(target: Target, container: string): YardError {
  return new YardError(ExitCode.execFailed, `the box ${container} has no ${target.checkoutPath}`, {
    why: "yard exec runs in the checkout's directory, which the box mounts at its own path; the box was made before that directory existed or with other mounts",
    fix: `recreate the box: \`yard box down${target.isMain ? '' : ` --worktree ${target.name}`}\` then \`yard box up${target.isMain ? '' : ` --worktree ${target.name}`}\``,
  })
}
