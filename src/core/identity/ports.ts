/**
 * `yard ports` (DESIGN.md §3.4, Appendix A): the identity and host ports of one target or of
 * every checkout and sandbox, with clashes — the `[ports]` keys and the implicit ports the
 * compose file publishes (DESIGN.md §4.2, the port rule).
 */
import type {ImplicitPort} from '../../sdk/stack.js'
import type {Target} from '../../sdk/target.js'
import type {YardContext} from '../kernel/context.js'
import type {Backends} from '../registry/backends.js'
import type {Trust} from '../worktree/trust-record.js'

import {YardError} from '../../sdk/errors.js'
import {openSandboxes, requireSandbox} from '../sandbox/sandbox.js'
import {stackPlanOf} from '../stack/stack.js'
import {
  buildTarget,
  type IdentityRow,
  listIdentities,
  noteMissingCheckout,
  openWorkspace,
  targetName,
  type Workspace,
} from '../workspace/workspace.js'

/** The project's sandboxes as name and offset (WorktreeBackends.sandboxes); none when not given. */
export type SandboxLister = (workspace: Workspace) => Promise<Array<{name: string; offset: number}>>
const noSandboxes: SandboxLister = async () => []

/** A checkout's implicit ports (its stack backend's plan); none when not given. */
export type ImplicitPortLister = (workspace: Workspace, target: Target) => Promise<ImplicitPort[]>
const noImplicitPorts: ImplicitPortLister = async () => []

/** The implicit ports of a checkout from its stack backend's plan (DESIGN.md §4.2, the port rule). */
export function stackImplicitPorts(context: YardContext, backends: Backends): ImplicitPortLister {
  return async (workspace, target) => (await stackPlanOf(context, backends, workspace, target))?.ports ?? []
}

/** Appendix A shape of one `yard ports` entry. */
export interface PortsReport {
  worktree: string
  kind: 'main' | 'worktree' | 'sandbox'
  project: string
  offset: number
  offsetSource: string
  ports: Record<string, number>
  /** Host ports the compose file publishes that no `[ports]` key gives, as this checkout publishes them. */
  implicitPorts: ImplicitPort[]
  clashesWith: string[]
  /** `untrusted` for a worktree recorded so in yard.local.toml (a machine of its own), else `trusted`. */
  trust: Trust
}

function toReport(row: IdentityRow, implicitPorts: ImplicitPort[] = [], workspace?: Workspace): PortsReport {
  const {target} = row
  const trust =
    row.kind === 'worktree' && workspace?.config.trust[target.name] === 'untrusted' ? 'untrusted' : 'trusted'
  return {
    worktree: target.name,
    kind: row.kind,
    project: target.project,
    offset: target.offset,
    offsetSource: target.offsetSource,
    ports: target.ports,
    implicitPorts,
    clashesWith: row.clashesWith,
    trust,
  }
}

/**
 * The implicit ports as `yard env` exports them: `YARD_PORT_<SERVICE>_<PORT>` = the host port
 * this checkout publishes (the first of a range).
 */
export function implicitPortEnv(ports: readonly ImplicitPort[]): Record<string, string> {
  return Object.fromEntries(ports.map((port) => [port.variable, String(port.host)]))
}

/** Every host port a report publishes: its `[ports]` ports and each port of its implicit ones. */
function hostPorts(report: PortsReport): Set<number> {
  const ports = new Set(Object.values(report.ports))
  for (const port of report.implicitPorts)
    for (let {host} = port; host <= (port.hostEnd ?? port.host); host++) ports.add(host)
  return ports
}

/** Adds to `clashesWith` the checkouts that publish one of the same host ports (implicit ones included). */
function addPortClashes(reports: PortsReport[]): void {
  const published = reports.map(hostPorts)
  for (const [index, report] of reports.entries()) {
    for (const [other, ports] of published.entries()) {
      if (
        other === index ||
        reports[other].worktree === report.worktree ||
        report.clashesWith.includes(reports[other].worktree)
      )
        continue
      if ([...published[index]].some((port) => ports.has(port))) report.clashesWith.push(reports[other].worktree)
    }

    report.clashesWith.sort()
  }
}

/** The implicit ports of a target, or none with a warning when its compose files cannot be read. */
async function implicitOf(
  context: YardContext,
  lister: ImplicitPortLister,
  workspace: Workspace,
  target: Target,
  quiet: boolean,
): Promise<ImplicitPort[]> {
  try {
    return await lister(workspace, target)
  } catch (error) {
    if (!quiet || !(error instanceof YardError)) throw error
    context.warn(`note: ${target.name}: its compose ports are left out: ${error.message}`)
    return []
  }
}

/**
 * Ports of every checkout (main, worktrees under the root) and sandbox, ignoring `WT_OFFSET`.
 * @throws InputError (exit 2) for invalid config or pins.
 */
export async function allPorts(
  context: YardContext,
  sandboxes: SandboxLister = noSandboxes,
  implicit: ImplicitPortLister = noImplicitPorts,
): Promise<PortsReport[]> {
  const workspace = await openWorkspace(context)
  const rows = await listIdentities(workspace, context, await sandboxes(workspace))
  const reports = await Promise.all(
    rows.map(async (row) =>
      toReport(
        row,
        row.kind === 'sandbox' ? [] : await implicitOf(context, implicit, workspace, row.target, true),
        workspace,
      ),
    ),
  )
  addPortClashes(reports)
  return reports
}

/**
 * Ports of the targeted checkout (DESIGN.md §3.3), honouring `WT_OFFSET`; `clashesWith` names
 * the other worktrees and sandboxes on the same offset.
 * @throws InputError (exit 2) for an invalid name, WT_OFFSET, pin or config.
 */
export async function targetPorts(
  context: YardContext,
  flag?: string,
  sandboxes: SandboxLister = noSandboxes,
  implicit: ImplicitPortLister = noImplicitPorts,
): Promise<PortsReport> {
  const workspace = await openWorkspace(context)
  const {name, isMain} = targetName(workspace, context, flag)
  const target = await buildTarget(workspace, context, name, isMain, {useEnvOffset: true})
  noteMissingCheckout(target, context)
  const quiet = {...context, warn() {}}
  const others = isMain
    ? []
    : (await listIdentities(workspace, quiet, await sandboxes(workspace))).filter(
        (row) => !row.target.isMain && row.target.name !== name,
      )
  const kind = isMain ? 'main' : 'worktree'
  return toReport(
    {
      target,
      kind,
      clashesWith: others
        .filter((row) => row.target.offset === target.offset)
        .map((row) => row.target.name)
        .sort(),
    },
    await implicitOf(context, implicit, workspace, target, false),
    workspace,
  )
}

/**
 * Ports of sandbox `name` (DESIGN.md §3.4): its offset label; `clashesWith` names the worktrees
 * and other sandboxes on the same offset (a worktree of the same name is the same identity).
 * @throws InputError (exit 2) for an unknown sandbox.
 */
export async function sandboxPorts(
  context: YardContext,
  backends: Backends,
  name: string,
  sandboxes: SandboxLister = noSandboxes,
): Promise<PortsReport> {
  const session = await openSandboxes(context, backends)
  const {target} = await requireSandbox(context, session, name)
  const quiet = {...context, warn() {}}
  const others = (await listIdentities(session.workspace, quiet, await sandboxes(session.workspace))).filter(
    (row) => !row.target.isMain && row.target.name !== name,
  )
  return toReport({
    target,
    kind: 'sandbox',
    clashesWith: others
      .filter((row) => row.target.offset === target.offset)
      .map((row) => row.target.name)
      .sort(),
  })
}
