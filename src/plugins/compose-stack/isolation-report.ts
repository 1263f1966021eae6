/**
 * The isolation report (DESIGN.md §4.2, docs/stacks.md "The isolation report"): what yard
 * changed in a worktree's rendered file, what it refuses, and what stays shared by every
 * checkout. `yard up --dry-run` prints it; refusals stop `up` before anything starts.
 */
import type {StackReportEntry} from '../../sdk/stack.js'

import {RefusedError} from '../../sdk/errors.js'

export type ReportEntry = StackReportEntry

/**
 * Stands for the `[stack] allow-shared = [...]` setting in a refusal's action while the report is
 * built; `allowSharedActions` puts the one setting there that allows every such service.
 */
export const ALLOW_SHARED = '\u0000allow-shared\u0000'

/**
 * Writes the `[stack] allow-shared` setting into the actions that name it: one list of the
 * services already allowed and every service refused for sharing, so that following any one
 * suggestion (a key may appear once in yard.toml) allows them all. Names are TOML basic strings.
 */
export function allowSharedActions(report: ReportEntry[], allowed: readonly string[]): void {
  const refused = report
    .filter((entry) => entry.kind === 'refused' && entry.action.includes(ALLOW_SHARED))
    .map((entry) => entry.service ?? '')
  const services = [...new Set([...allowed, ...refused])]
  const setting = `[stack] allow-shared = [${services.map((name) => JSON.stringify(name)).join(', ')}] in yard.toml`
  for (const entry of report) entry.action = entry.action.replaceAll(ALLOW_SHARED, setting)
}

/** Exit 3 for the report's refusals, each with its service, reason and way out; nothing was created. */
export function refusalError(project: string, report: readonly ReportEntry[]): RefusedError | undefined {
  const refused = report.filter((entry) => entry.kind === 'refused')
  if (refused.length === 0) return undefined
  const line = (entry: ReportEntry) => `${entry.service ?? project}: ${entry.detail}`
  return new RefusedError(`cannot isolate ${project}: ${refused.map(line).join('; ')}`, {
    why: "two checkouts of the project would share or fight over these, so this worktree's stack cannot run beside the others; nothing was created",
    // One line per refusal, indented below `fix:` (YardError.render keeps indented continuation lines).
    fix: refused.map((entry) => `${entry.service ?? project}: ${entry.action}`).join('\n       '),
  })
}
