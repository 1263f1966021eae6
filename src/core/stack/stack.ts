/**
 * Stack use cases (DESIGN.md §4.2): resolve the targeted checkout, create the configured machine
 * and stack backends through the registry, and hand them the Target and the checkout's stack
 * config. Commands call these; backends never see config or flags.
 */
import {existsSync, readFileSync} from 'node:fs'
import path from 'node:path'

import type {MachineBackend, MachineSpec} from '../../sdk/machine.js'
import type {
  StackBackend,
  StackContainer,
  StackLogsOptions,
  StackPlan,
  StackSpec,
  StackUpResult,
} from '../../sdk/stack.js'
import type {Target} from '../../sdk/target.js'
import type {YardContext} from '../kernel/context.js'
import type {Backends} from '../registry/backends.js'

import {InputError, RefusedError} from '../../sdk/errors.js'
import {configCachePath, loadConfig, type ProjectConfig} from '../config/config.js'
import {stackEnv} from '../config/env.js'
import {describeMissingEnvFile, missingEnvFiles} from '../config/missing-env-files.js'
import {bindsOutside, describeOutsideBind} from '../machine/binds.js'
import {ensureMachine} from '../machine/ensure.js'
import {checkWorktreeMachine, createMachine} from '../machine/machine.js'
import {makeRoomFor, type SharedStop} from '../machine/shared.js'
import {resolveTarget, targetIdentity, type Workspace} from '../workspace/workspace.js'
import {composeFiles} from './compose-files.js'
import {envFilesOutside, hostReach} from './untrusted-reach.js'

export interface StackSession {
  workspace: Workspace
  target: Target
  /** The targeted checkout's effective config (`[stack]`, `[box]`, `[ports]` of DESIGN.md §3.2). */
  config: ProjectConfig
  machine: MachineBackend
  machineSpec: MachineSpec
  stack: StackBackend
  /** The machine's engine socket variables (DESIGN.md §3.5); empty when it is not running. */
  socketEnv: Record<string, string>
  /** False when the machine is not running: there is no engine, so read and teardown verbs have nothing to do. */
  running: boolean
  /** The shared machine `--stop-shared` stopped for an untrusted worktree's own, and what went down with it. */
  stoppedShared?: SharedStop
}

/**
 * Resolves the target (DESIGN.md §3.3) and creates the machine and stack backends that config
 * selects. Creates and starts the machine only with `ensure` (`up`, `box up`); read and teardown
 * verbs never do (DESIGN.md §4.2). `requireCheckout` (`up`, `box up`, `logs`) refuses a worktree
 * whose directory does not exist before anything is created; other verbs work on it (a note).
 * An untrusted worktree gets its own machine (`machineSpec`); with `ensure`, the one-VM rule
 * (`makeRoomFor`: `stopShared` stops the shared machine, `command` is the verb the refusal names).
 * @throws InputError (exit 2) for a bad target, config or backend id, or (with
 *   `requireCheckout`) a missing worktree; with `ensure`, what ensureMachine throws.
 */
export async function openStack(
  context: YardContext,
  backends: Backends,
  flag?: string,
  options: {
    ensure?: boolean
    requireCheckout?: boolean
    stopShared?: boolean
    command?: string
    workspace?: Workspace
  } = {},
): Promise<StackSession> {
  // The checkout's own config comes with the target (its yard.toml read once).
  const {workspace, target, config} = await resolveTarget(context, flag, {
    requireCheckout: options.requireCheckout,
    workspace: options.workspace,
  })
  // An untrusted worktree runs on a machine of its own (docs/worktrees.md, "Untrusted worktrees").
  const {machine, spec: machineSpec} = await createMachine(context, backends, workspace, target.name)
  let stoppedShared: SharedStop | undefined
  if (options.ensure) {
    checkWorktreeMachine(machine, machineSpec)
    stoppedShared = await makeRoomFor(context, backends, workspace, machine, machineSpec, {
      stopShared: options.stopShared ?? false,
      command: `${options.command ?? 'yard up'} --worktree ${target.name}`,
    })
  }

  const socketEnv = options.ensure
    ? await ensureMachine(context, machine, machineSpec)
    : await machine.socketEnv(machineSpec)
  const stack = await backends.stack(context, config.stack.backend, {socketEnv: socketEnv ?? {}})
  return {
    workspace,
    target,
    config,
    machine,
    machineSpec,
    stack,
    socketEnv: socketEnv ?? {},
    running: socketEnv !== null,
    ...(stoppedShared && {stoppedShared}),
  }
}

/**
 * The stack spec of the session's checkout: its compose files (absolute, against the targeted
 * checkout), provider, env and main's env; undefined when the checkout is box-only.
 * @throws InputError (exit 2) when a file named in `[stack] files` is missing.
 */
export function stackSpec(session: StackSession, context: YardContext): StackSpec | undefined {
  return specFor(session.workspace, session.target, session.config, context, session.socketEnv)
}

function specFor(
  workspace: Workspace,
  target: Target,
  config: ProjectConfig,
  context: YardContext,
  socketEnv: Record<string, string>,
): StackSpec | undefined {
  const files = composeFiles(target.checkoutPath, config.stack.files, config.origins['stack.files'])
  if (files.length === 0 && !namesComposeFile(target.checkoutPath, context.env)) return undefined
  const main = target.isMain
    ? target
    : targetIdentity(workspace, {...context, warn() {}}, 'main', true, {useEnvOffset: false})
  return {
    files,
    provider: config.stack.provider,
    env: stackEnv(target, context, socketEnv),
    mainEnv: stackEnv(main, context, socketEnv),
    configuredFiles: config.stack.files,
    configuredOrigin: config.origins['stack.files'],
    profiles: config.stack.profiles,
    external: config.stack.external,
    allowShared: config.stack['allow-shared'],
    ...(!target.isMain && config.trust[target.name] === 'untrusted' && {confine: target.checkoutPath}),
  }
}

/** `COMPOSE_FILE` in the environment or the checkout's `.env` names the compose files (DESIGN.md §4.2). */
function namesComposeFile(checkoutPath: string, env: NodeJS.ProcessEnv): boolean {
  if (env.COMPOSE_FILE) return true
  try {
    return /^\s*(export\s+)?COMPOSE_FILE\s*=\s*\S/m.test(readFileSync(path.join(checkoutPath, '.env'), 'utf8'))
  } catch {
    return false
  }
}

/**
 * What the target's stack would run (the backend's `plan`), without a machine or an engine: for
 * `yard ports`, `yard env` and `yard doctor`. Undefined for a box-only checkout, a worktree
 * whose directory is gone, or a backend without `plan`.
 * @throws InputError (exit 2) for config or compose files that cannot be read.
 */
export async function stackPlanOf(
  context: YardContext,
  backends: Backends,
  workspace: Workspace,
  target: Target,
): Promise<StackPlan | undefined> {
  if (!existsSync(target.checkoutPath)) return undefined
  const config = target.isMain
    ? workspace.config
    : await loadConfig({
        mainPath: workspace.mainPath,
        cache: configCachePath(context.env, workspace.commonDir),
        checkout: {path: target.checkoutPath, name: target.name},
        env: context.env,
      })
  const spec = specFor(workspace, target, config, context, {})
  if (!spec) return undefined
  const stack = await backends.stack(context, config.stack.backend)
  return stack.plan?.(target, spec)
}

/** What a stack verb did: `boxOnly` when the checkout has no compose file (nothing was touched). */
export interface StackOutcome {
  target: Target
  boxOnly: boolean
  /** What went, for teardown verbs ("container app-feat_web_1", …). */
  gone: string[]
  /** `up`: the rendered stack, its report and what runs (when the backend renders its stack). */
  plan?: StackPlan | StackUpResult
  /** `up --stop-shared` of an untrusted worktree: the shared machine stopped first, and the stacks that went down. */
  stoppedShared?: SharedStop
}

/**
 * `yard up [--dry-run]` (DESIGN.md §4.2). A box-only checkout is reported, not an error. With
 * `dryRun`, the backend's plan only: nothing is created or started, the machine included.
 * @throws RefusedError (exit 3) for what cannot be isolated, a busy port or a project name of
 *   another owner; InputError (exit 2) for a dry run of a backend without `plan`; OperationError (exit 1).
 */
export async function stackUp(
  context: YardContext,
  backends: Backends,
  flag?: string,
  options: {dryRun?: boolean; stopShared?: boolean} = {},
): Promise<StackOutcome> {
  const session = await openStack(context, backends, flag, {
    ensure: !options.dryRun,
    requireCheckout: true,
    stopShared: options.stopShared,
  })
  const spec = stackSpec(session, context)
  // Also for a dry run: a missing .env changes the ports and values the plan shows.
  if (spec)
    for (const file of await missingEnvFiles(context.runner, session.target))
      context.warn(describeMissingEnvFile(file, session.target))
  if (options.dryRun) {
    if (!spec) return {target: session.target, boxOnly: true, gone: []}
    if (!session.stack.plan)
      throw new InputError(`stack backend ${session.stack.id} cannot show what it would run`, {
        fix: 'run yard up without --dry-run, or use a backend with dry runs (compose-stack)',
      })
    // An untrusted worktree's refusals are part of what `up` would do.
    if (session.machineSpec.worktree !== undefined) await refuseReach(session, spec, context)
    const plan = await session.stack.plan(session.target, spec)
    return {target: session.target, boxOnly: plan === undefined, gone: [], plan}
  }

  // Only a machine with its own engine socket (a VM) has a filesystem of its own (DESIGN.md §4.3).
  const {mounts, name} = session.machineSpec
  if (spec && session.socketEnv.CONTAINER_HOST)
    for (const bind of await bindsOutside(spec.files, spec.env, mounts))
      context.warn(describeOutsideBind(bind, name, mounts))
  if (spec && session.machineSpec.worktree !== undefined) await refuseReach(session, spec, context)
  const plan = spec ? await session.stack.up(session.target, spec) : undefined
  const stoppedShared = session.stoppedShared ? {stoppedShared: session.stoppedShared} : {}
  return {target: session.target, boxOnly: spec === undefined, gone: [], plan: plan || undefined, ...stoppedShared}
}

/**
 * An untrusted worktree's stack may reach nothing beyond its worktree (docs/worktrees.md,
 * "Untrusted worktrees"): on any machine, no `env_file` yard would read on the host; on one
 * without a VM (native), nothing of `hostReach` in the rendered file either.
 * @throws RefusedError (exit 3) naming the first finding and how many more, before anything starts.
 */
async function refuseReach(session: StackSession, spec: StackSpec, context: YardContext): Promise<void> {
  const {target, machine} = session
  const findings = await envFilesOutside(spec.files, target.checkoutPath)
  const native = session.socketEnv.CONTAINER_HOST === undefined
  if (native) {
    // A confined read refused while rendering is one more finding when others are already known.
    const plan = await session.stack.plan?.(target, spec).catch((error: unknown) => {
      if (error instanceof RefusedError && findings.length > 0) return null
      throw error
    })
    if (plan) findings.push(...hostReach(plan.compose, target.checkoutPath))
    else if (plan === undefined)
      context.warn(
        `warning: the stack backend ${session.stack.id} cannot show what it would run, so yard cannot check what untrusted worktree ${target.name}'s stack reaches on the host`,
      )
  }

  const [first] = findings
  if (first === undefined) return
  throw new RefusedError(
    `worktree ${target.name} is untrusted, and its stack reaches beyond it: ${first}${findings.length > 1 ? ` (and ${findings.length - 1} more: ${findings.slice(1).join('; ')})` : ''}`,
    {
      why: native
        ? `the ${machine.id} machine has no VM, so binds, builds, volumes with driver options, host namespaces, devices and privileges reach the host itself; an untrusted worktree's stack may use paths inside ${target.checkoutPath} only`
        : `yard reads env_files on the host while rendering; an untrusted worktree's stack may read files inside ${target.checkoutPath} only`,
      fix: `drop that from the compose file, or, if you trust its code: yard worktree trust ${target.name} --trusted`,
    },
  )
}

/** `yard down`: containers and networks go, volumes stay; works when the checkout's directory is gone. */
export async function stackDown(context: YardContext, backends: Backends, flag?: string): Promise<StackOutcome> {
  const session = await openStack(context, backends, flag)
  if (!session.running) return machineNotRunning(session, context)
  return {target: session.target, boxOnly: false, gone: await session.stack.down(session.target)}
}

/** `yard nuke [--dry-run]` (DESIGN.md §4.2): down, then the project's volumes; never prompts. */
export async function stackNuke(
  context: YardContext,
  backends: Backends,
  options: {flag?: string; dryRun: boolean},
): Promise<StackOutcome> {
  const session = await openStack(context, backends, options.flag)
  if (!session.running) return machineNotRunning(session, context)
  return {
    target: session.target,
    boxOnly: false,
    gone: await session.stack.nuke(session.target, {dryRun: options.dryRun}),
  }
}

/** `yard ps` (DESIGN.md Appendix A). */
export async function stackPs(context: YardContext, backends: Backends, flag?: string): Promise<StackContainer[]> {
  const session = await openStack(context, backends, flag)
  if (!session.running) {
    machineNotRunning(session, context)
    return []
  }

  return session.stack.ps(session.target)
}

/** `yard logs [SERVICE…] [-f] [--tail N] [--since T] [-t]`: the stack backend's logs on stdout. */
export async function stackLogs(
  context: YardContext,
  backends: Backends,
  options: StackLogsOptions & {flag?: string},
): Promise<StackOutcome> {
  const session = await openStack(context, backends, options.flag, {requireCheckout: true})
  if (!session.running) return machineNotRunning(session, context)
  const spec = stackSpec(session, context)
  if (spec)
    await session.stack.logs(session.target, spec, {
      services: options.services,
      follow: options.follow,
      tail: options.tail,
      since: options.since,
      timestamps: options.timestamps,
    })
  return {target: session.target, boxOnly: spec === undefined, gone: []}
}

/** A teardown or read verb while the machine is not running: nothing runs, said as a note. */
export function machineNotRunning(session: StackSession, context: YardContext): StackOutcome {
  context.warn(
    `note: machine ${session.machineSpec.name} (${session.machine.id}) is not running, so nothing of ${session.target.project} runs; nothing was started`,
  )
  return {target: session.target, boxOnly: false, gone: []}
}

/** What `--stop-shared` did, in one line. */
export function describeSharedStop(stop: SharedStop): string {
  return `stopped the shared machine ${stop.machine} first; ${stop.stacks.length === 0 ? 'no stack or box of this project ran there' : `these stacks went down: ${stop.stacks.join(', ')}`}`
}

/** "main" or "worktree feat", for messages. */
export function describeTarget(target: Target): string {
  return target.isMain ? `main (${target.project})` : `worktree ${target.name} (${target.project})`
}
