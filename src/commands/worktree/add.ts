import {Args, Flags} from '@oclif/core'

import {addedLines} from '../../cli/worktree-added.js'
import {type AddResult, addWorktree, worktreeBackends} from '../../core/worktree/index.js'
import {InputError} from '../../sdk/errors.js'
import {BaseCommand, quietFlag} from '../base.js'

export default class WorktreeAdd extends BaseCommand {
  static hiddenAliases = ['wt:add']
  static summary = 'Create a worktree on its own branch, forked from the default branch, with its own port offset'

  static description = `The worktree goes to <worktrees root>/NAME on BRANCH (default wt/NAME). An existing local branch is checked out as it is; a branch that exists only as origin/BRANCH is created tracking it; otherwise a new branch is created without upstream (so a bare \`git push\` never lands on the base) from: --from REF, else YARD_WORKTREE_BASE / [worktrees] base, else origin/HEAD, else the first of origin/main, main, origin/master, master, else the current HEAD. The base's remote is fetched first (--no-fetch skips it); the base is printed and recorded as branch.<branch>.yardBase.
A name whose offset clashes with another worktree or sandbox is pinned to the lowest free offset in yard.local.toml.
Submodules main has checked out are initialised from main's own objects (--no-submodules skips them); a sparse main's patterns apply to the new worktree before its checkout; a partial clone's missing blobs are fetched once, up front.
--untrusted records the worktree as untrusted in the main checkout's yard.local.toml ([worktrees.NAME] trust = "untrusted"): its stack and box run on a machine of their own, yard-<prefix>-NAME, created on its first \`yard up\` and removed with the worktree. On the native backend (Linux) there is no machine to give: they run on the host's podman, the box mounting only the worktree and the git dir read-only, the compose file checked before every up.`

  static examples = [
    '<%= config.bin %> worktree add feat',
    '<%= config.bin %> worktree add fix bugfix/login --from origin/release-2',
    '<%= config.bin %> worktree add --branch feature/Login.v2',
    '<%= config.bin %> worktree add pr-123 contributor/fix --untrusted',
  ]

  static args = {
    name: Args.string({
      description: 'worktree name: a-z, 0-9 and inner -, at most 40 characters (default: derived from --branch)',
    }),
    branch: Args.string({description: 'branch to check out or create (default: wt/NAME)'}),
  }

  static flags = {
    quiet: quietFlag,
    branch: Flags.string({
      char: 'b',
      description: 'the branch; without NAME, the name is derived from it (feature/Login.v2 → feature-login-v2-<hash>)',
      helpValue: 'BRANCH',
    }),
    from: Flags.string({description: 'base of a new branch: a branch, tag or commit (must resolve)', helpValue: 'REF'}),
    fetch: Flags.boolean({description: "fetch the base's remote first", default: true, allowNo: true}),
    submodules: Flags.boolean({
      description: "initialise the submodules main has checked out, from main's objects",
      default: true,
      allowNo: true,
    }),
    untrusted: Flags.boolean({
      description:
        'for code you have not reviewed: its stack and box run on a machine of their own that mounts only this worktree and the git dir read-only (recorded in yard.local.toml)',
      default: false,
    }),
  }

  async run(): Promise<AddResult> {
    const {args, flags} = await this.parse(WorktreeAdd)
    if (args.branch !== undefined && flags.branch !== undefined)
      throw new InputError('the branch was given twice: as BRANCH and as --branch', {fix: 'give it once'})
    // The registry's plugins load while git answers; only sandbox backends are asked (under the lock).
    void this.backends.ids('sandbox')
    const result = await addWorktree(this.context, {
      name: args.name,
      branch: args.branch ?? flags.branch,
      from: flags.from,
      fetch: flags.fetch,
      submodules: flags.submodules,
      untrusted: flags.untrusted,
      backends: worktreeBackends(this.backends, this.context),
    })
    this.print(addedLines(result).join('\n'))
    return result
  }
}
