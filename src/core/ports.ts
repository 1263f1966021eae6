/**
 * `yard ports` (DESIGN.md §3.4, Appendix A): the identity and host ports of one target or of
 * every checkout and sandbox, with clashes.
 */
import type {YardContext} from './context.js'
import {buildTarget, IdentityRow, listIdentities, noteMissingCheckout, openWorkspace, targetName} from './workspace.js'

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
export async function allPorts(context: YardContext): Promise<PortsReport[]> {
  const workspace = await openWorkspace(context)
  return (await listIdentities(workspace, context)).map(toReport)
}

/**
 * Ports of the targeted checkout (DESIGN.md §3.3), honouring `WT_OFFSET`; `clashesWith` names
 * the other worktrees and sandboxes on the same offset.
 * @throws InputError (exit 2) for an invalid name, WT_OFFSET, pin or config.
 */
export async function targetPorts(context: YardContext, flag?: string): Promise<PortsReport> {
  const workspace = await openWorkspace(context)
  const {name, isMain} = targetName(workspace, context, flag)
  const target = buildTarget(workspace, context, name, isMain, {useEnvOffset: true})
  noteMissingCheckout(target, context)
  const quiet = {...context, warn: () => {}}
  const others = isMain ? [] : (await listIdentities(workspace, quiet)).filter((row) => !row.target.isMain && row.target.name !== name)
  const kind = isMain ? 'main' : 'worktree'
  return toReport({target, kind, clashesWith: others.filter((row) => row.target.offset === target.offset).map((row) => row.target.name).sort()})
}
