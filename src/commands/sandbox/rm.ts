import {Args, Flags} from '@oclif/core'

import {type RemoveResult, removeSandbox} from '../../core/sandbox/index.js'
import {BaseCommand, quietFlag} from '../base.js'

/** `yard sandbox rm NAME [--force] [--dry-run]` (DESIGN.md §5.2). */
export default class SandboxRm extends BaseCommand {
  static aliases = ['sandbox:remove']
  static summary = 'Remove a sandbox pod and release its caches'
  static description =
    'Refuses (exit 3) while a slot holds modified or untracked files, or commits the cache and origin lack (on a branch, a detached HEAD or in a stash), listing them. --force first saves, under <state dir>/sandboxes/<name>/, per slot a git bundle of just those commits and a patch per dirty worktree, and prints the command that restores them. --dry-run prints the plan, also when rm would refuse. A sandbox whose pod is not running (stopped, or after a reboot) cannot be checked: rm refuses (exit 3) unless --force, which removes it and its /work unchecked. A sandbox whose pod (or workspace container) was removed outside yard has its leftovers (pod, leases, record, pin) cleaned; its work volume, which may hold unsaved work, goes only with --force.'

  static examples = ['<%= config.bin %> sandbox rm feat', '<%= config.bin %> sandbox rm feat --force --dry-run']
  static args = {name: Args.string({description: 'sandbox name', required: true})}
  static flags = {
    quiet: quietFlag,
    force: Flags.boolean({description: 'save unsaved work as bundles and patches, then remove'}),
    'dry-run': Flags.boolean({description: 'show what would be saved and removed, change nothing'}),
    runtime: Flags.string({
      description: 'podman or kubernetes (default [cluster] runtime)',
      options: ['podman', 'kubernetes'],
    }),
  }

  async run(): Promise<RemoveResult> {
    const {args, flags} = await this.parse(SandboxRm)
    const {result, refusal} = await removeSandbox(this.context, this.backends, {
      name: args.name,
      force: flags.force,
      dryRun: flags['dry-run'],
      runtime: flags.runtime,
    })
    this.print(render(result, flags.force))
    if (refusal) throw refusal
    return result
  }
}

function render(result: RemoveResult, force: boolean): string {
  const verb = result.dryRun ? 'would remove' : 'removed'
  const lines: string[] = []
  if (result.lost)
    lines.push(
      `${result.goes.includes(`pod ${result.project}`) ? `the workspace container of sandbox ${result.name}` : `the pod ${result.project} of sandbox ${result.name}`} is gone (removed outside yard, or a removal cut short); ${result.dryRun ? 'would clean' : 'cleaned'} what it left:`,
    )
  if (result.lost && result.unchecked)
    lines.push(
      `its /work ${result.dryRun ? 'cannot be checked for unsaved work' : 'was not checked for unsaved work and is gone'}`,
    )
  else if (result.unchecked)
    lines.push(
      `the pod of sandbox ${result.name} is not running: ${result.dryRun ? 'its /work cannot be checked for unsaved work' : 'its /work was not checked for unsaved work and is gone'}`,
    )
  for (const line of result.unsaved) lines.push(`unsaved: ${line}`)
  if (result.dryRun && result.unsaved.length > 0) {
    const what = [
      ...result.toSave.bundles.map((bundle) => `${bundle.slot}.bundle (${bundle.refs.join(', ')})`),
      ...result.toSave.patches.map((worktree) => `a patch of ${worktree}`),
    ]
    lines.push(
      force
        ? `would save under ${result.savedIn}: ${what.join('; ')}`
        : `rm refuses without --force; --force would save: ${what.join('; ')}`,
    )
  }

  if (!result.dryRun && result.savedIn)
    lines.push(
      `saved ${result.saved.length} file(s) under ${result.savedIn}:`,
      ...result.saved.map((file) => `  ${file}`),
    )
  for (const restore of result.restore) {
    lines.push(`restore slot ${restore.slot} into ./${restore.directory}:`, `  ${restore.command}`)
    for (const ref of restore.refs) lines.push(`  ${ref.what} is ${ref.ref}: ${ref.use}`)
  }

  lines.push(...result.goes.map((item) => `${result.lost ? '  ' : ''}${verb} ${item}`))
  if (!result.lost) lines.push(`${verb} sandbox ${result.name} (pod ${result.project})`)
  return lines.join('\n')
}
