/**
 * The isolation report (DESIGN.md §4.2, docs/stacks.md "The isolation report"): what yard
 * changed in a worktree's rendered file, what it refuses, and what stays shared by every
 * checkout. `yard up --dry-run` prints it; refusals stop `up` before anything starts.
 */
import type {StackReportEntry} from '../../core/backend.js'
import {RefusedError} from '../../core/errors.js'

export type ReportEntry = StackReportEntry

/** Exit 3 for the report's refusals, each with its service, reason and way out; nothing was created. */
export function refusalError(project: string, report: readonly ReportEntry[]): RefusedError | undefined {
  const refused = report.filter((entry) => entry.kind === 'refused')
  if (refused.length === 0) return undefined
  const line = (entry: ReportEntry) => `${entry.service ?? project}: ${entry.detail}`
  return new RefusedError(`cannot isolate ${project}: ${refused.map(line).join('; ')}`, {
    why: 'two checkouts of the project would share or fight over these, so this worktree\'s stack cannot run beside the others; nothing was created',
    fix: refused.map((entry) => `${entry.service ?? project}: ${entry.action}`).join('\n'),
  })
}
