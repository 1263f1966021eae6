/**
 * The compose-stack backend (DESIGN.md §4.2): each checkout's stack is one compose project that
 * yard renders itself (stack-plan.ts): resolved, isolated for the checkout, labelled and written
 * to the state directory. The provider runs `up` only, with `-f <rendered> -p <project>` and
 * the env of §3.5; ps, logs, down and nuke go to the engine, filtered by
 * `com.docker.compose.project=<project>` and checked against `yard.dev/owner`.
 */
import {existsSync, promises as fs} from 'node:fs'
import path from 'node:path'

import type {ComposeProvider} from '../../sdk/compose-provider.js'
import type {
  ImplicitPort,
  ProjectContainers,
  StackBackend,
  StackContainer,
  StackLogsOptions,
  StackPlan,
  StackSpec,
  StackUpResult,
} from '../../sdk/stack.js'
import type {BackendContext, Target} from '../../sdk/target.js'

import {InputError, OperationError} from '../../sdk/errors.js'
import {withLock} from '../../sdk/lock.js'
import {busyPorts} from '../../sdk/port-probe.js'
import {ComposeBox} from './box.js'
import {Engine, type EngineContainer} from './engine.js'
import {refusalError} from './isolation-report.js'
import {
  COMPOSE_PROJECT_LABEL,
  COMPOSE_SERVICE_LABEL,
  CONFIG_LABEL,
  OWNER_LABEL,
  PROJECT_LABEL,
  ROLE_LABEL,
} from './labels.js'
import {busyPortError, foreignOwnerError, Ownership} from './ownership.js'
import {composeProvider, forgetComposeProvider} from './provider.js'
import {recentLogLines} from './recent-logs.js'
import {renderedPath, writeRendered} from './render.js'
import {describeContainers, isRunning, partWayError} from './up-failure.js'

/**
 * What `up` probes with a real bind: the `[ports]` host ports and every TCP implicit port (each
 * port of a range). UDP ports are left to the engine (a TCP bind says nothing about them).
 */
export function probePorts(target: Target, implicit: readonly ImplicitPort[]): Record<string, number> {
  const ports: Record<string, number> = {...target.ports}
  for (const port of implicit.filter((item) => item.protocol === 'tcp')) {
    for (let {host} = port; host <= (port.hostEnd ?? port.host); host++)
      ports[`${port.source}${port.hostEnd === undefined ? '' : `+${host - port.host}`}`] = host
  }

  return ports
}

/** `yard ps` rows of containers, by service then name. */
function serviceRows(containers: readonly EngineContainer[]): StackContainer[] {
  return containers
    .map((container) => ({
      service: container.labels[COMPOSE_SERVICE_LABEL] ?? '',
      container: container.name,
      state: container.state,
      ports: container.ports,
      ...(!(container.exitCode === undefined) && {exitCode: container.exitCode}),
    }))
    .sort((a, b) => a.service.localeCompare(b.service) || a.container.localeCompare(b.container))
}

/** A lock older than this (ms) is an `up` that died: image builds included, no up takes longer. */
const UP_BUDGET_MS = 60 * 60 * 1000
/** How long (ms) an `up` waits for another `up` of the same project before it refuses. */
const UP_WAIT_MS = 10 * 60 * 1000

export class ComposeStack implements StackBackend {
  readonly kind = 'stack'
  readonly id = 'compose-stack'
  readonly box: ComposeBox
  private readonly engine: Engine
  private provider?: Promise<ComposeProvider>

  constructor(private readonly context: BackendContext) {
    this.engine = new Engine('podman', context.runner)
    this.box = new ComposeBox(this.engine, context)
  }

  private projectFilter(target: Target): string[] {
    return [`${COMPOSE_PROJECT_LABEL}=${target.project}`]
  }

  /**
   * The project's containers, volumes and networks, split into this owner's and others'.
   * `volumes: false` skips listing volumes (for verbs that never touch them: down, ps).
   */
  private async ownership(target: Target, options: {volumes: boolean} = {volumes: true}): Promise<Ownership> {
    const [containers, volumes, networks] = await Promise.all([
      this.engine.containers(this.projectFilter(target)),
      options.volumes ? this.engine.volumes(this.projectFilter(target)) : [],
      this.engine.networks(this.projectFilter(target)),
    ])
    return new Ownership(target, containers, volumes, networks)
  }

  private async detectProvider(preference: string): Promise<ComposeProvider> {
    this.provider ??= composeProvider(this.context.runner, this.context.stateDir, preference)
    return this.provider
  }

  /** Runs the provider with the target's env (WORKTREE unset for main, DESIGN.md §3.5). */
  private async runProvider(
    provider: ComposeProvider,
    target: Target,
    spec: StackSpec,
    files: string[],
    args: string[],
    onTerminal?: (line: string) => boolean,
  ) {
    const fileArgs = files.flatMap((file) => ['-f', file])
    const env: Record<string, string | undefined> = {...spec.env}
    if (target.isMain) env.WORKTREE = undefined
    return this.context.runner.run(
      provider.command[0],
      [...provider.command.slice(1), '-p', target.project, ...fileArgs, ...args],
      {
        env,
        cwd: path.dirname(files[0]),
        allowFailure: true,
        // On the terminal, stdout goes through `onTerminal`, which keeps the lines to show.
        stdio: onTerminal ? 'inherit' : 'pipe',
        stdoutFilter: onTerminal,
      },
    )
  }

  /**
   * DESIGN.md §4.2: the rendered file, the isolation report and the implicit ports; starts and
   * creates nothing (`yard up --dry-run`, `yard ports`, `yard env`, `yard doctor`).
   * @throws InputError (exit 2) from the resolver.
   */
  async plan(target: Target, spec: StackSpec): Promise<StackPlan | undefined> {
    const planned = await (await stackPlan()).planStack(target, spec, this.context.env)
    return (
      planned && {
        project: planned.project,
        files: planned.files,
        compose: planned.compose,
        rendered: planned.text,
        report: planned.report,
        ports: planned.ports,
      }
    )
  }

  /**
   * DESIGN.md §4.2 `up`: renders the stack, refuses (exit 3) what cannot be isolated before any
   * engine call, then a project of another owner and busy host ports (`[ports]` and implicit
   * ones; those this project's own running containers publish are skipped); says what stays
   * shared; runs the provider on the rendered file; leaves a running project as it is. A stopped
   * container made from another definition than the current one (CONFIG_LABEL) is removed first,
   * so the provider makes it afresh; the provider starts the other stopped ones as they are.
   * Engine calls: one round of listings (every container, the project's volumes and networks, at
   * once), the provider, one listing after it.
   * @throws RefusedError (exit 3); OperationError (exit 1) when the provider fails or a service
   *   does not run (naming the services it left running and stopped, which `yard down` removes).
   */
  async up(target: Target, spec: StackSpec): Promise<StackUpResult | void> {
    // One `up` of a project at a time: two would race the provider for its volumes and networks.
    const lock = path.join(path.dirname(renderedPath(this.context.stateDir, target.project)), 'up.lock')
    // A state directory that takes no lock takes no rendered file either: writeRendered says why,
    // before anything starts.
    const lockable = await fs.mkdir(path.dirname(lock), {recursive: true}).then(
      () => true,
      () => false,
    )
    if (!lockable) return this.upAlone(target, spec)
    return withLock(
      lock,
      {budgetMs: UP_BUDGET_MS, waitMs: UP_WAIT_MS, purpose: `yard up of ${target.project}`, warn: this.context.warn},
      async () => this.upAlone(target, spec),
    )
  }

  private async upAlone(target: Target, spec: StackSpec): Promise<StackUpResult | void> {
    const planned = await (await stackPlan()).planStack(target, spec, this.context.env)
    if (!planned) return
    const refused = refusalError(target.project, planned.report)
    if (refused) throw refused
    for (const entry of planned.report.filter((item) => item.kind === 'shared' || item.kind === 'warning'))
      this.context.warn(`warning: ${entry.service ? `${entry.service}: ` : ''}${entry.detail}: ${entry.action}`)
    const result = (containers: EngineContainer[]): StackUpResult => ({
      project: planned.project,
      files: planned.files,
      compose: planned.compose,
      report: planned.report,
      ports: planned.ports,
      services: serviceRows(containers),
    })
    // Detection runs while the engine is asked; a failure counts only when the provider is needed.
    const detection = this.detectProvider(spec.provider)
    detection.catch(() => undefined)
    // Every container at once (the box, and who holds a busy port, are in it), with the project's volumes and networks.
    const [all, volumes, networks] = await Promise.all([
      this.engine.containers([]),
      this.engine.volumes(this.projectFilter(target)),
      this.engine.networks(this.projectFilter(target)),
    ])
    const ownership = new Ownership(
      target,
      all.filter((container) => container.labels[COMPOSE_PROJECT_LABEL] === target.project),
      volumes,
      networks,
    )
    if (ownership.foreign().length > 0) throw foreignOwnerError(target, ownership)
    const box = this.box.ownedIn(target, all)
    const own = ownership.containers
    const busy = await busyPorts(
      probePorts(target, planned.ports),
      new Set(own.flatMap((container) => container.ports.map((port) => port.host))),
    )
    if (busy.length > 0)
      throw busyPortError(
        target,
        busy,
        all.filter((container) => isRunning(container) && container.ports.length > 0),
      )
    const service = (container: EngineContainer) => container.labels[COMPOSE_SERVICE_LABEL] ?? ''
    const current = (container: EngineContainer) =>
      container.labels[CONFIG_LABEL] === planned.configs[service(container)]
    const running = (containers: EngineContainer[]) => new Set(containers.filter(isRunning).map(service))
    // A container made from another definition (an edited compose file, a moved port) is made
    // afresh, as docker compose does: the provider alone would keep it, and its old ports.
    const stale = own.filter((container) => !current(container))
    if (stale.length === 0 && planned.services.every((name) => running(own).has(name))) return result(own)
    if (stale.length > 0) {
      this.context.warn(
        `note: recreating ${describeContainers(stale)} of ${target.project}: made from another compose file than the current one (volumes are kept)`,
      )
      await this.engine.removeContainers(
        stale.map((container) => container.id),
        10,
      )
    }

    const again = own.filter((container) => !isRunning(container) && current(container))
    if (again.length > 0)
      this.context.warn(
        `note: starting ${describeContainers(again)} of ${target.project} again, as made by an earlier \`yard up\``,
      )

    const provider = await detection
    // The rendered file first: a state directory that cannot be written must leave nothing behind.
    const file = await writeRendered(this.context.stateDir, target, planned.text)
    const outcome = await this.runProvider(provider, target, spec, [file], ['up', '-d'])
    if (outcome.exitCode === 127) await forgetComposeProvider(this.context.stateDir)

    const after = new Ownership(target, await this.engine.containers(this.projectFilter(target)), [], []).containers
    const missing = planned.services.filter((name) => !running(after).has(name))
    if (outcome.exitCode !== 0 || missing.length > 0)
      throw partWayError(target, provider.id, outcome, missing, after, await this.exitedServices(after, missing))
    if (box?.state === 'running') await this.box.connect(box, planned.networks)
    return result(after)
  }

  /**
   * For the services of `missing` whose container ran and stopped: `web exited with code 3`, then
   * its last log lines (the engine's `logs --tail`), so a failed `up` says why a service is down.
   */
  private async exitedServices(containers: readonly EngineContainer[], missing: readonly string[]): Promise<string> {
    const exited = containers.filter(
      (container) =>
        container.exitCode !== undefined && missing.includes(container.labels[COMPOSE_SERVICE_LABEL] ?? ''),
    )
    const parts = await Promise.all(
      exited.map(async (container) => {
        const service = container.labels[COMPOSE_SERVICE_LABEL]
        const lines = await recentLogLines(
          this.context.runner,
          this.engine.command,
          [{service, container: container.name, state: container.state, ports: []}],
          5,
        )
        return [
          `${service} exited with code ${container.exitCode}${lines.length > 0 ? '; its last lines:' : ' and logged nothing'}`,
          ...lines.map((line) => `  ${line}`),
        ].join('\n')
      }),
    )
    return parts.join('\n')
  }

  /** Removes the project's containers and networks of this owner; volumes stay (DESIGN.md §4.2). */
  async down(target: Target): Promise<string[]> {
    const ownership = await this.ownership(target, {volumes: false})
    this.noteForeign(ownership)
    return this.removeDown(ownership, false)
  }

  private async removeDown(ownership: Ownership, dryRun: boolean): Promise<string[]> {
    const gone: string[] = []
    const {containers} = ownership
    if (!dryRun) await this.engine.removeContainers(containers.map((container) => container.id))
    gone.push(...containers.map((container) => `container ${container.name}`))
    for (const network of ownership.networks) {
      if (dryRun || (await this.engine.removeNetwork(network.name))) gone.push(`network ${network.name}`)
      else this.context.warn(`kept network ${network.name}: a container still uses it (the box? \`yard box down\`)`)
    }

    return gone
  }

  private noteForeign(ownership: Ownership): void {
    const foreign = ownership.foreign()
    if (foreign.length > 0)
      this.context.warn(
        `note: left alone ${foreign.join(', ')}: labelled with project ${ownership.target.project} but not owned by this checkout`,
      )
  }

  /**
   * DESIGN.md §4.2 `nuke`: the box, then `down`, then the project's volumes of this owner — for a
   * worktree only those named `<project>_…` (exact prefix) — and yard's state directory of the
   * project (`stacks/<project>/`, the rendered file). Nothing else; `dryRun` removes nothing.
   */
  async nuke(target: Target, options: {dryRun: boolean}): Promise<string[]> {
    const box = await this.box.owned(target)
    if (box && !options.dryRun) await this.box.down(target)
    const ownership = await this.ownership(target)
    this.noteForeign(ownership)
    const gone = box ? [`container ${box.name}`] : []
    gone.push(...(await this.removeDown(ownership, options.dryRun)))
    const volumes = ownership.volumes
      .filter((volume) => target.isMain || volume.name.startsWith(`${target.project}_`))
      .map((volume) => volume.name)
    if (!options.dryRun) await this.engine.removeVolumes(volumes)
    // yard's own state for the project (its rendered compose file) goes with it.
    const state = path.dirname(renderedPath(this.context.stateDir, target.project))
    const hasState = existsSync(state)
    if (hasState && !options.dryRun) await fs.rm(state, {recursive: true, force: true})
    return [...gone, ...volumes.map((volume) => `volume ${volume}`), ...(hasState ? [`yard state ${state}`] : [])]
  }

  /** The project's containers of this owner (DESIGN.md Appendix A `yard ps`), by service. */
  async ps(target: Target): Promise<StackContainer[]> {
    return serviceRows(
      new Ownership(target, await this.engine.containers(this.projectFilter(target)), [], []).containers,
    )
  }

  /**
   * `ps` and `box.ps` of every project of `main.owner` from one engine call (the owner label is
   * on every stack container, through yard's override, and on every box), grouped by project.
   */
  async psAll(main: Target): Promise<Record<string, ProjectContainers>> {
    const projects: Record<string, ProjectContainers> = {}
    const entry = (project: string) => (projects[project] ??= {stack: [], box: []})
    for (const container of await this.engine.containers([`${OWNER_LABEL}=${main.owner}`])) {
      const row = {
        service: container.labels[COMPOSE_SERVICE_LABEL] ?? '',
        container: container.name,
        state: container.state,
        ports: container.ports,
        ...(!(container.exitCode === undefined) && {exitCode: container.exitCode}),
      }
      const project = container.labels[PROJECT_LABEL]
      if (container.labels[ROLE_LABEL] === 'box') {
        if (project && container.name === `${project}-box`) entry(project).box.push({...row, service: 'box'})
      } else if (container.labels[COMPOSE_PROJECT_LABEL]) {
        entry(container.labels[COMPOSE_PROJECT_LABEL]).stack.push(row)
      }
    }

    for (const project of Object.values(projects))
      project.stack.sort((a, b) => a.service.localeCompare(b.service) || a.container.localeCompare(b.container))
    return projects
  }

  /** The last `lines` log lines of the project's containers (the engine's `logs --tail`), oldest first. */
  async recentLogs(target: Target, options: {lines: number}): Promise<string[]> {
    return recentLogLines(this.context.runner, this.engine.command, await this.ps(target), options.lines)
  }

  /**
   * The services' logs on stdout (DESIGN.md §4.2 `logs`), read from the engine per container as
   * compose does (`podman logs`, docker-logs(1)): each line, from either stream, led by its
   * service (`web | …`, labels padded to one width); one container after another, or all at
   * once with `follow`. Services are checked against the compose files first; services without a
   * container are a note (nothing runs: no logs, exit 0).
   * @throws InputError (exit 2) for a service the compose files do not define; OperationError
   *   (exit 1) when the engine's logs fail.
   */
  async logs(target: Target, spec: StackSpec, options: StackLogsOptions): Promise<void> {
    const planned = await (await stackPlan()).planStack(target, spec, this.context.env)
    const known = planned?.services ?? []
    const unknown = options.services.filter((service) => !known.includes(service))
    if (unknown.length > 0) {
      throw new InputError(`${target.project} has no service ${unknown.join(', ')}`, {
        why: `its compose files (${(planned?.files ?? spec.files).join(', ')}) define ${known.length > 0 ? known.join(', ') : 'no service'}`,
        fix:
          known.length > 0 ? `name one of ${known.join(', ')}, or none for all` : 'add the service to the compose file',
      })
    }

    const wanted = options.services.length > 0 ? [...new Set(options.services)] : known
    const containers = (await this.ps(target)).filter((container) => wanted.includes(container.service))
    const present = new Set(containers.map((container) => container.service))
    if (containers.length === 0) {
      this.context.warn(
        `note: nothing of ${target.project}${options.services.length > 0 ? ` (${wanted.join(', ')})` : ''} runs, so there are no logs; \`yard up${target.isMain ? '' : ` ${target.name}`}\` starts it`,
      )
      return
    }

    const absent = wanted.filter((service) => !present.has(service))
    if (absent.length > 0)
      this.context.warn(
        `note: ${absent.join(', ')} of ${target.project} ${absent.length === 1 ? 'has' : 'have'} no container: no logs for ${absent.length === 1 ? 'it' : 'them'}`,
      )
    const label = (container: StackContainer) =>
      containers.filter((other) => other.service === container.service).length > 1
        ? container.container
        : container.service
    const width = Math.max(...containers.map((container) => label(container).length))
    const args = [
      ...(options.follow ? ['--follow'] : []),
      ...(options.tail === undefined ? [] : ['--tail', String(options.tail)]),
      ...(options.since === undefined ? [] : ['--since', options.since]),
      ...(options.timestamps ? ['--timestamps'] : []),
    ]
    const show = async (container: StackContainer) => {
      const prefix = `${label(container).padEnd(width)} | `
      return this.context.runner.run(this.engine.command, ['logs', ...args, container.container], {
        stdio: 'inherit',
        allowFailure: true,
        outputLines: (line) => prefix + line,
      })
    }

    const results = []
    if (options.follow) results.push(...(await Promise.all(containers.map(show))))
    else for (const container of containers) results.push(await show(container))
    const failed = results.find((result) => result.exitCode !== 0 && result.exitCode !== 130)
    if (failed)
      throw new OperationError(`${this.engine.command} logs failed with exit code ${failed.exitCode}`, {
        why: failed.stderr.trim() || undefined,
        fix: `check that the stack is up: yard ps${target.isMain ? '' : ` ${target.name}`}`,
      })
  }
}

/**
 * The compose model (stack-plan.ts: the resolver, its zod validation and yaml), loaded by the verbs
 * that render the stack: `yard exec` into the box, `ps` and `down` never need it.
 */
async function stackPlan(): Promise<typeof import('./stack-plan.js')> {
  return import('./stack-plan.js')
}
