/**
 * What the worktree use cases need from backends, as a small interface so that core never
 * depends on oclif and tests can hand in their own: the project's sandboxes (for offset
 * collisions, DESIGN.md §3.4), the stack teardown of a removed worktree (box down, stack nuke,
 * DESIGN.md §4.1) and a running machine for a new one (§4.3). `worktreeBackends` answers them
 * from the backends that config selects.
 */
import type {Target} from '../../sdk/target.js'
import type {YardContext} from '../kernel/context.js'
import type {Backends} from '../registry/backends.js'
import type {Workspace} from '../workspace/workspace.js'

import {configCachePath, loadConfig} from '../config/config.js'
import {ensureMachineQuietly} from '../machine/ensure.js'
import {isUntrusted, machineSpec} from '../machine/machine.js'
import {clusterSettings} from '../sandbox/cluster-settings.js'

/** How long the sandboxes of one runtime may take to answer before they are left out (DESIGN.md §3.4). */
export const SANDBOX_LIST_TIMEOUT_MS = 2000

export interface StackTeardown {
  /** The stack backend's id (`[stack] backend`). */
  backend: string
  /**
   * Box down, then stack nuke, of one target; works from the Target alone (the checkout may be
   * gone). Returns what went, or with `dryRun` what would go.
   * @throws whatever the backend throws (a YardError passes through the command's catch).
   */
  teardown(target: Target, options: {dryRun: boolean}): Promise<string[]>
}

export interface WorktreeBackends {
  /**
   * Every sandbox of the project, as name and offset (its `yard.dev/offset` label). Runtimes that
   * do not answer within `SANDBOX_LIST_TIMEOUT_MS` are left out with a note; never rejects.
   */
  sandboxes(workspace: Workspace): Promise<Array<{name: string; offset: number}>>
  /**
   * The teardown of the stack backend the target's config selects (`[stack] backend`, a
   * per-checkout table), or why there is none (then teardown is skipped with a note).
   */
  stackTeardown(workspace: Workspace, target: Target): Promise<StackTeardown | {skipped: string}>
  /**
   * Makes sure the project's machine exists and runs, after a worktree was added (DESIGN.md
   * §4.3); a machine that cannot come up is a warning, never a failure. Never rejects.
   */
  machineReady(workspace: Workspace): Promise<void>
  /**
   * The untrusted worktree `name`'s own machine when it exists (docs/worktrees.md, "Untrusted
   * worktrees"), to be removed with the worktree; undefined for a trusted worktree, a backend
   * without VMs, or a machine that is absent. Never creates or starts anything.
   */
  worktreeMachine?(workspace: Workspace, name: string): Promise<WorktreeMachine | undefined>
}

/** An untrusted worktree's own machine, as `worktree remove` finds it. */
export interface WorktreeMachine {
  name: string
  state: string
  /** Removes it with its disk: every container, image and volume inside. */
  remove(): Promise<void>
}

/**
 * Answers from the command's backends (core/registry/backends.ts; the registry loads on first use).
 *
 * Sandboxes: the `[cluster] backend` when a plugin registers it (the built-in k8s-sandbox by
 * default), its `list()` on `[cluster] runtime` asked with the 2 s budget, so `worktree add` pins
 * around sandbox offsets; an unreachable cluster is left out with a note.
 */
export function worktreeBackends(backends: Backends, context: YardContext): WorktreeBackends {
  return {
    async sandboxes(workspace) {
      const id = workspace.config.cluster.backend
      if (!(await backends.has('sandbox', id))) return []
      let timer: NodeJS.Timeout | undefined
      const budget = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`it did not answer within ${SANDBOX_LIST_TIMEOUT_MS / 1000} s`)),
          SANDBOX_LIST_TIMEOUT_MS,
        )
      })
      try {
        const backend = await Promise.race([
          backends.sandbox(context, id, {cluster: clusterSettings(workspace)}),
          budget,
        ])
        const runtime = backend.runtimes.includes(workspace.config.cluster.runtime)
          ? workspace.config.cluster.runtime
          : undefined
        const sandboxes = await Promise.race([
          backend.list(workspace.prefix, {timeoutMs: SANDBOX_LIST_TIMEOUT_MS, runtime}),
          budget,
        ])
        return sandboxes.map((sandbox) => ({name: sandbox.name, offset: sandbox.offset}))
      } catch (error) {
        context.warn(
          `note: sandboxes of the ${id} backend (runtime ${workspace.config.cluster.runtime}) are left out of the offset check: ${(error as Error).message}`,
        )
        return []
      } finally {
        clearTimeout(timer)
      }
    },

    async machineReady(workspace) {
      await ensureMachineQuietly(context, backends, workspace)
    },

    async worktreeMachine(workspace, name) {
      if (!isUntrusted(workspace, name)) return undefined
      const machineId = workspace.config.machine.backend
      if (!(await backends.has('machine', machineId))) return undefined
      const machine = await backends.machine(context, machineId)
      if (machine.id === 'native') return undefined
      const spec = machineSpec(workspace, name)
      const status = await machine.status(spec)
      if (status.state === 'absent') return undefined
      return {name: spec.name, state: status.state, remove: async () => machine.rm(spec)}
    },

    async stackTeardown(workspace, target) {
      const {backend: id} = (
        await loadConfig({
          mainPath: workspace.mainPath,
          cache: configCachePath(context.env, workspace.commonDir),
          checkout: {path: target.checkoutPath, name: target.name},
          env: context.env,
        })
      ).stack
      if (!(await backends.has('stack', id))) {
        const known = await backends.ids('stack')
        return {
          skipped: `no stack backend "${id}" is registered${known.length > 0 ? ` (registered: ${known.join(', ')})` : ''}`,
        }
      }

      // The machine backend provides the engine socket; teardown never creates or starts a machine.
      const machineId = workspace.config.machine.backend
      const spec = machineSpec(workspace, target.name)
      const socketEnv = (await backends.has('machine', machineId))
        ? await (await backends.machine(context, machineId)).socketEnv(spec)
        : {}
      if (socketEnv === null)
        return {skipped: `machine ${spec.name} is not running, so nothing of ${target.project} runs`}
      const stack = await backends.stack(context, id, {socketEnv})
      return {
        backend: id,
        async teardown(target, {dryRun}) {
          if (dryRun) {
            const items = await stack.nuke(target, {dryRun: true})
            // A backend's nuke may include the box already (compose-stack does): list it once.
            const box = stack.box ? (await stack.box.ps(target)).map((container) => container.container) : []
            return [
              ...box
                .filter((name) => items.every((item) => !item.includes(name)))
                .map((name) => `container ${name} (box)`),
              ...items,
            ]
          }

          const box = stack.box ? await stack.box.down(target) : []
          return [...box, ...(await stack.nuke(target, {dryRun: false}))]
        },
      }
    },
  }
}
