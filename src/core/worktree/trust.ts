/**
 * `yard worktree trust NAME --untrusted|--trusted` (docs/worktrees.md, "Untrusted worktrees"):
 * records a worktree's trust in the main checkout's yard.local.toml. A change never leaves
 * something running with the reach of the other trust: a stack or box of a worktree being
 * marked untrusted that still runs on the shared machine, or the own machine of one being
 * marked trusted, is refused (exit 3) with the command that clears it.
 */
import {existsSync, realpathSync} from 'node:fs'

import type {YardContext} from '../kernel/context.js'
import type {Backends} from '../registry/backends.js'

import {InputError, RefusedError} from '../../sdk/errors.js'
import {validateName} from '../identity/identity.js'
import {withOffsetsLock} from '../identity/offset-allocator.js'
import {excludePinFile} from '../identity/pins.js'
import {createMachine, machineSpec, worktreeMachineName} from '../machine/machine.js'
import {checkGitLink} from '../workspace/git-link.js'
import {recordUntrustedCheckout} from '../workspace/untrusted-checkouts.js'
import {buildTarget, openWorkspace, worktreePath, worktreesUnderRoot} from '../workspace/workspace.js'
import {type Trust, writeTrust} from './trust-record.js'

export interface TrustOutcome {
  name: string
  trust: Trust
  /** False when it was recorded so already. */
  changed: boolean
  /** The machine its stack and box run on from now on. */
  machine: string
  /** `[machine] backend`: `native` runs everything on the host's podman, with no machine of its own. */
  machineBackend: string
}

/**
 * Where a worktree of this trust runs, in words for its command's output (docs/worktrees.md,
 * "Untrusted worktrees"): its own machine, or on the native backend the host's podman with the
 * narrowed mounts (there is no machine to name); the shared machine, or the host's podman.
 */
export function whereItRuns(trust: Trust, machine: string, machineBackend: string): string {
  const native = machineBackend === 'native'
  if (trust === 'trusted') return native ? "it runs on this host's podman" : `it runs on the shared machine ${machine}`
  return native
    ? "its stack and box run on this host's podman (the native backend has no machine to give it), its box mounting only this worktree and the git dir read-only, its compose file checked before every up"
    : `its stack and box run on machine ${machine} (created on its first \`yard up\`), which mounts only this worktree and the git dir read-only`
}

/**
 * Sets the trust of worktree `name`.
 * @throws InputError (exit 2) for an invalid name or a worktree that does not exist;
 *   RefusedError (exit 3) while its stack or box runs on the shared machine (to untrusted) or
 *   its own machine exists or its `.git` link was changed (to trusted: git-link.ts); OperationError (exit 1) when yard.local.toml cannot be edited.
 */
export async function setWorktreeTrust(
  context: YardContext,
  backends: Backends,
  options: {name: string; trust: Trust},
): Promise<TrustOutcome> {
  const name = validateName(options.name, 'worktree name')
  const workspace = await openWorkspace(context)
  if ((await worktreesUnderRoot(workspace, context)).every((entry) => !(entry.name === name))) {
    throw new InputError(`there is no worktree named ${name}`, {
      fix: `see \`yard worktree list\`; \`yard worktree add ${name}${options.trust === 'untrusted' ? ' --untrusted' : ''}\` makes one`,
    })
  }

  const machineName =
    options.trust === 'untrusted' ? worktreeMachineName(workspace.prefix, name) : workspace.config.machine.name
  const current = workspace.config.trust[name] ?? 'trusted'
  /** The record of untrusted-checkouts.ts, for a worktree whose directory exists. */
  const recordCheckout = async () => {
    const checkout = worktreePath(workspace, name)
    if (existsSync(checkout))
      await recordUntrustedCheckout(
        context.env,
        {checkout: realpathSync(checkout), commonDir: workspace.commonDir, mainPath: workspace.mainPath},
        options.trust === 'untrusted',
      )
  }

  const machineBackend = workspace.config.machine.backend
  if (current === options.trust) {
    // Recorded again: a worktree marked before the record existed gets one this way.
    await recordCheckout()
    return {name, trust: current, changed: false, machine: machineName, machineBackend}
  }

  // Trusted again, host git would obey a .git its box re-pointed at a directory of its own.
  if (options.trust === 'trusted') checkGitLink(workspace.commonDir, worktreePath(workspace, name), name)
  const {machine} = await createMachine(context, backends, workspace)
  if (options.trust === 'untrusted') {
    // What runs now runs on the shared machine with the shared mounts.
    const socketEnv = await machine.socketEnv(machineSpec(workspace))
    if (socketEnv !== null) {
      const stack = await backends.stack(context, workspace.config.stack.backend, {socketEnv})
      const target = await buildTarget(workspace, {...context, warn() {}}, name, false, {useEnvOffset: false})
      const running = [...(await stack.ps(target)), ...(stack.box ? await stack.box.ps(target) : [])]
      if (running.length > 0) {
        throw new RefusedError(
          `worktree ${name}'s stack or box runs on the shared machine (${running.map((container) => container.container).join(', ')})`,
          {
            why: 'marked untrusted, it would still run there with the shared mounts until it is stopped',
            fix: `yard down --worktree ${name} && yard box down --worktree ${name}, then run this again`,
          },
        )
      }
    }
  } else if (machine.id !== 'native') {
    const own = machineSpec(workspace, name)
    const status = await machine.status(own)
    if (status.state !== 'absent') {
      throw new RefusedError(`worktree ${name}'s own machine ${own.name} exists (${status.state})`, {
        why: 'marked trusted, it would run on the shared machine and leave its own machine, with the containers and volumes inside, behind',
        fix: `yard machine rm --worktree ${name} --yes, then run this again`,
      })
    }
  }

  const file = workspace.config.files.local
  await withOffsetsLock(context, workspace, `worktree trust ${name}`, async () => writeTrust(file, name, options.trust))
  await recordCheckout()
  if (options.trust === 'untrusted') await excludePinFile(context, workspace)
  return {name, trust: options.trust, changed: true, machine: machineName, machineBackend}
}
