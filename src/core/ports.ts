/**
 * `yard ports` (DESIGN.md §3.4, Appendix A): the identity and host ports of one target or of
 * every checkout and sandbox, with clashes.
 */
import type {YardContext} from './context.js'
import type {Registry} from './registry.js'
import {openSandboxes, requireSandbox} from './sandbox.js'
import {buildTarget, IdentityRow, listIdentities, noteMissingCheckout, openWorkspace, targetName, Workspace} from './workspace.js'

/** The project's sandboxes as name and offset (WorktreeBackends.sandboxes); none when not given. */
export type SandboxLister = (workspace: Workspace) => Promise<Array<{name: string; offset: number}>>
const noSandboxes: SandboxLister = async () => []

/** Appendix A shape of one `yard ports` entry. */
export interface PortsReport {
  worktree: string
  kind: 'main' | 'worktree' | 'sandbox'
  project: string
  offset: number
  offsetSource: string
  ports: Record<string, number>
  clashesWith: string[]
}

function toReport(row: IdentityRow): PortsReport {
  const {target} = row
  return {worktree: target.name, kind: row.kind, project: target.project, offset: target.offset, offsetSource: target.offsetSource, ports: target.ports, clashesWith: row.clashesWith}
}

/**
 * Ports of every checkout (main, worktrees under the root) and sandbox, ignoring `WT_OFFSET`.
 * @throws InputError (exit 2) for invalid config or pins.
 */
export async function allPorts(context: YardContext, sandboxes: SandboxLister = noSandboxes): Promise<PortsReport[]> {
  const workspace = await openWorkspace(context)
  return (await listIdentities(workspace, context, await sandboxes(workspace))).map(toReport)
}

/**
 * Ports of the targeted checkout (DESIGN.md §3.3), honouring `WT_OFFSET`; `clashesWith` names
 * the other worktrees and sandboxes on the same offset.
 * @throws InputError (exit 2) for an invalid name, WT_OFFSET, pin or config.
 */
export async function targetPorts(context: YardContext, flag?: string, sandboxes: SandboxLister = noSandboxes): Promise<PortsReport> {
  const workspace = await openWorkspace(context)
  const {name, isMain} = targetName(workspace, context, flag)
  const target = buildTarget(workspace, context, name, isMain, {useEnvOffset: true})
  noteMissingCheckout(target, context)
  const quiet = {...context, warn: () => {}}
  const others = isMain ? [] : (await listIdentities(workspace, quiet, await sandboxes(workspace))).filter((row) => !row.target.isMain && row.target.name !== name)
  const kind = isMain ? 'main' : 'worktree'
  return toReport({target, kind, clashesWith: others.filter((row) => row.target.offset === target.offset).map((row) => row.target.name).sort()})
}

/**
 * Ports of sandbox `name` (DESIGN.md §3.4): its offset label; `clashesWith` names the worktrees
 * and other sandboxes on the same offset (a worktree of the same name is the same identity).
 * @throws InputError (exit 2) for an unknown sandbox.
 */
export async function sandboxPorts(context: YardContext, registry: Registry, name: string, sandboxes: SandboxLister = noSandboxes): Promise<PortsReport> {
  const session = await openSandboxes(context, registry)
  const {target} = await requireSandbox(context, session, name)
  const quiet = {...context, warn: () => {}}
  const others = (await listIdentities(session.workspace, quiet, await sandboxes(session.workspace))).filter((row) => !row.target.isMain && row.target.name !== name)
  return toReport({target, kind: 'sandbox', clashesWith: others.filter((row) => row.target.offset === target.offset).map((row) => row.target.name).sort()})
}
