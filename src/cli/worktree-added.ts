/**
 * What `yard worktree add` prints for the worktree it made, as both of its start-up paths print it
 * (src/commands/worktree/add.ts through oclif, fast-worktree-add.ts without).
 */
import type {AddResult} from '../core/worktree/add.js'

import {whereItRuns} from '../core/worktree/trust.js'

/** The summary lines, unescaped (the caller escapes): path, branch, base, submodules, offset, trust, copies. */
export function addedLines(result: AddResult): string[] {
  const branch =
    result.branchSource === 'existing'
      ? `checked out the existing branch ${result.branch}`
      : result.branchSource === 'remote'
        ? `created branch ${result.branch} tracking ${result.upstream}`
        : `created branch ${result.branch} without upstream`
  const lines = [`worktree ${result.name} at ${result.path}`, `  ${branch}`]
  if (result.base) lines.push(`  base: ${result.base.ref} at ${result.base.commit}`)
  if (result.submodules.initialised.length > 0) lines.push(`  submodules: ${result.submodules.initialised.join(', ')}`)
  lines.push(`  offset ${result.offset} [${result.offsetSource}]`)
  if (result.trust === 'untrusted')
    lines.push(`  untrusted: ${whereItRuns('untrusted', result.machine, result.machineBackend)}`)
  if (result.copied.length > 0)
    lines.push(`  copied from the main checkout ([worktrees] copy): ${result.copied.join(', ')}`)
  return lines
}
