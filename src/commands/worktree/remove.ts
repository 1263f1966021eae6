import {Args, Flags} from '@oclif/core'

import {
  deleteBranch,
  describeStackStep,
  executeRemoval,
  type OutsideWork,
  planRemoval,
  type RemovalResult,
  type RemovalSummary,
  requireMergedBranch,
  worktreeBackends,
} from '../../core/worktree/index.js'
import {InputError} from '../../sdk/errors.js'
import {shellCommand} from '../../sdk/shell.js'
import {BaseCommand, targetName} from '../base.js'

export default class WorktreeRemove extends BaseCommand {
  static aliases = ['worktree:rm']
  static hiddenAliases = ['wt:remove', 'wt:rm']
  static summary =
    'Remove a worktree without losing work: refuse on unsaved work, archive transcripts, snapshot, tear down its stack'

  static description = `Plans first and refuses (exit 3) before anything is torn down when the worktree has modified or untracked files, commits on no remote branch (with no remote: on neither its recorded base nor another branch), a detached HEAD no branch holds, a submodule with unpushed commits or changes, a nested repository, or ignored files matching [worktrees] keep-ignored (default .env), unless --force. The plan names every ignored path it deletes. Then: agent transcripts (.yard/transcripts/) are archived, uncommitted work (and a detached HEAD) is saved to refs/yard/removed/NAME-<UTC stamp>, submodules (bundle + patch), nested repositories (tar) and kept ignored files go to <state dir>/removed/, and one printed command restores it all, the box and stack are torn down by the stack backend, git unregisters that one worktree, an untrusted worktree's own machine is removed with its disk, and its offset pin and untrusted record are deleted. The branch is kept, unless --delete-branch and it is merged into its base.
Asks for confirmation on a terminal; without one, pass --yes. A remove that stopped half-way, or a worktree whose directory was deleted by hand, finishes on the next call.`

  static examples = [
    '<%= config.bin %> worktree remove feat',
    '<%= config.bin %> worktree remove feat --dry-run',
    '<%= config.bin %> worktree remove feat --force --yes',
  ]

  static args = {
    name: Args.string({description: 'the worktree to remove (the same as --worktree NAME)'}),
  }

  static flags = {
    // No default here: a remove names its worktree (YARD_WORKTREE or the current directory never pick one).
    worktree: Flags.string({char: 'w', description: 'the worktree to remove (the same as NAME)', helpValue: 'NAME'}),
    force: Flags.boolean({
      description:
        'remove despite unsaved work (saved to a refs/yard/removed/ ref first), a lock, transcripts that cannot be archived or a failed stack teardown; implies --yes',
      default: false,
    }),
    yes: Flags.boolean({char: 'y', description: 'do not ask for confirmation', default: false}),
    'dry-run': Flags.boolean({description: 'show the plan; change nothing', default: false}),
    'delete-branch': Flags.boolean({
      description:
        "delete the worktree's branch too, when it is merged into its base (refuses otherwise, exit 3, before anything is removed)",
      default: false,
    }),
  }

  async run(): Promise<{plan: RemovalSummary; result?: RemovalResult & {branchDeleted: boolean}}> {
    const {args: given, flags} = await this.parse(WorktreeRemove)
    const name = targetName(given, flags)
    if (name === undefined)
      throw new InputError('yard worktree remove needs the worktree to remove', {
        fix: 'yard worktree remove NAME (`yard worktree list` lists them)',
      })
    const args = {name}
    if (args.name === 'main') {
      throw new InputError('main is the main checkout; it is not a worktree yard can remove', {
        why: 'yard removes the worktrees it made under the worktrees root; the main checkout holds the repository itself',
        fix: "name a worktree (`yard worktree list` lists them); to tear down main's stack, run `yard nuke`",
      })
    }

    const backends = worktreeBackends(this.backends, this.context)
    const plan = await planRemoval(this.context, {
      name: args.name,
      force: flags.force,
      dryRun: flags['dry-run'],
      backends,
      deleteBranch: flags['delete-branch'],
    })
    const branch = flags['delete-branch'] ? plan.summary.branch : null
    const mergedInto =
      branch === null ? undefined : await requireMergedBranch(this.context, plan.workspace.mainPath, branch)
    this.print(
      renderPlan(
        plan.summary,
        flags['dry-run'] ? 'dry-run' : (flags.yes || flags.force) && !plan.refusal ? 'go' : 'ask',
      ) + (branch === null ? '' : `\n  delete the branch ${branch} (merged into ${mergedInto})`),
    )
    if (plan.refusal && flags['dry-run'])
      this.context.warn(
        `yard worktree remove ${args.name} would refuse (exit 3), as below; the plan above is what --force would do`,
      )
    if (plan.refusal) throw plan.refusal
    if (flags['dry-run']) return {plan: plan.summary}
    await this.confirmOrRefuse(`Remove worktree ${args.name}${branch === null ? '' : ` and its branch ${branch}`}?`, {
      yes: flags.yes || flags.force,
      flag: '--yes',
    })
    const result = await executeRemoval(this.context, plan, {force: flags.force})
    if (branch !== null) await deleteBranch(this.context, plan.workspace.mainPath, branch)
    this.print(renderResult(result, branch !== null))
    return {plan: plan.summary, result: {...result, branchDeleted: branch !== null}}
  }
}

/** The plan as lines; its first says whether it runs now (`go`), after the question (`ask`) or not at all. */
function renderPlan(plan: RemovalSummary, mode: 'ask' | 'dry-run' | 'go'): string {
  const dryRun = mode === 'dry-run'
  const lines = [
    `${{'dry-run': 'would remove', go: 'removing', ask: 'about to remove'}[mode]} worktree ${plan.name} (${plan.path})${plan.branch ? `, branch ${plan.branch}` : ''}`,
  ]
  if (!plan.present) lines.push('  its directory is gone: nothing to check, archive or snapshot')
  if (plan.unsaved)
    lines.push(
      `  unsaved work: ${plan.unsaved.modified} modified, ${plan.unsaved.untracked} untracked, ${plan.unsaved.unpushed} unpushed (${plan.unsaved.against})${plan.unsaved.detached > 0 ? `, ${plan.unsaved.detached} on a detached HEAD no branch holds` : ''}`,
    )
  if (plan.outside) lines.push(...describeOutsidePlan(plan.outside))
  if (plan.transcripts)
    lines.push(`  archive ${plan.transcripts.files} transcript files to ${plan.transcripts.archive}`)
  for (const store of plan.agentStores)
    lines.push(`  archive ${store.files} files of ${storeName(store.agent)} ${store.source} to ${store.archive}`)
  if (plan.snapshot)
    lines.push(
      `  save ${plan.unsaved && plan.unsaved.modified + plan.unsaved.untracked > 0 ? 'uncommitted work' : 'the detached HEAD'} to refs/yard/removed/${plan.name}-<UTC stamp>`,
    )
  lines.push(`  ${describeStackStep(plan.stack)}`)
  if (dryRun && 'wouldRemove' in plan.stack && plan.stack.wouldRemove)
    lines.push(...plan.stack.wouldRemove.map((item) => `    ${item}`))
  if (plan.registered) lines.push(`  ${shellCommand(['git', 'worktree', 'remove', plan.path])}`)
  if (plan.machine !== null)
    lines.push(`  remove its own machine ${plan.machine} with its disk (the worktree is untrusted)`)
  if (plan.trust === 'untrusted')
    lines.push(`  delete the untrusted record [worktrees.${plan.name}] from yard.local.toml`)
  if (plan.pin !== null)
    lines.push(
      plan.pinByYard
        ? `  delete the pin ${plan.name} = ${plan.pin} from yard.local.toml`
        : `  keep the hand-written pin ${plan.name} = ${plan.pin} in yard.local.toml`,
    )
  return lines.join('\n')
}

function storeName(agent: string): string {
  return agent === 'box'
    ? "the box's agent home"
    : `the host's ${agent === 'claude-code' ? 'Claude Code' : agent === 'gemini-cli' ? 'Gemini CLI' : agent} transcripts`
}

/** The plan's lines for submodules, nested repositories and the ignored files remove deletes. */
function describeOutsidePlan(outside: OutsideWork): string[] {
  const lines = outside.submodules.map(
    (sub) =>
      `  submodule ${sub.path}: ${sub.commits} commits not on its remote, ${sub.modified} modified, ${sub.untracked} untracked (${sub.commits + sub.modified + sub.untracked > 0 ? 'a bundle and a patch are saved' : 'initialised again on restore, for its nested repositories'})`,
  )
  lines.push(...outside.nested.map((nested) => `  nested repository ${nested}/ (archived as a tar, its .git included)`))
  if (outside.ignored.length > 0) {
    const shown =
      outside.ignored.slice(0, 10).join(', ') +
      (outside.ignored.length > 10 ? `, and ${outside.ignored.length - 10} more` : '')
    lines.push(
      `  ${outside.ignored.length} ignored ${outside.ignored.length === 1 ? 'path is' : 'paths are'} deleted: ${shown}`,
    )
  }

  if (outside.keepIgnored.length > 0)
    lines.push(`  keep (copied to the archive, [worktrees] keep-ignored): ${outside.keepIgnored.join(', ')}`)
  return lines
}

function renderResult(result: RemovalResult, branchDeleted: boolean): string {
  const lines = [`removed worktree ${result.name}`]
  if (result.archived)
    lines.push(
      `  transcripts archived to ${result.archived.archive} (${result.archived.copied} copied, ${result.archived.kept} already there)`,
    )
  for (const store of result.archivedStores)
    lines.push(
      `  ${storeName(store.agent)} ${store.source} archived to ${store.archive} (${store.copied} copied, ${store.kept} already there)`,
    )
  if (result.snapshot) lines.push(`  ${result.snapshot.holds} saved to ${result.snapshot.ref}`)
  for (const part of (result.saved?.parts ?? []).filter((saved) => saved.files.length > 0))
    lines.push(
      `  ${part.kind === 'ignored' ? 'ignored files' : `${part.kind === 'nested' ? 'nested repository' : 'submodule'} ${part.path}`} saved to ${part.files.join(', ')}`,
    )
  if (result.restore) lines.push(`  restore it with: ${result.restore}`)
  if ('removed' in result.stack) lines.push(...result.stack.removed.map((item) => `  removed ${item}`))
  if (result.machineRemoved) lines.push(`  removed machine ${result.machineRemoved}`)
  if (result.pinKept)
    lines.push(
      `  kept the hand-written pin of ${result.name} in yard.local.toml (yard deletes only the pins it wrote, marked "# yard:")`,
    )
  if (result.branch && branchDeleted) lines.push(`  deleted branch ${result.branch}`)
  else if (result.branch)
    lines.push(
      `  branch ${result.branch} kept; delete it with: ${shellCommand(['git', 'branch', '-D', result.branch])}`,
    )
  return lines.join('\n')
}
