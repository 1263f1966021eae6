/** `worktree_add`, `worktree_list`, `worktree_remove`: `yard worktree add|list|remove` (DESIGN.md §4.1). */
import {z} from 'zod'

import {InputError} from '../../sdk/errors.js'
import {addWorktree} from '../worktree/add.js'
import {listWorktrees} from '../worktree/list.js'
import {executeRemoval, planRemoval} from '../worktree/remove.js'
import {count, defineTool, nameArg, notConfirmed, withDetails} from './tool.js'

export const worktreeAdd = defineTool({
  name: 'worktree_add',
  title: 'Add a worktree',
  description:
    'yard worktree add: creates the worktree NAME on its own branch (default wt/NAME; an existing local branch is checked out, a branch only on origin is created tracking it, else a new branch without upstream from `from`, else the default branch) with its own port offset. structuredContent: the `worktree add --json` result {name, path, branch, branchSource, upstream, base, fetched, offset, offsetSource, pinned}.',
  input: z
    .object({
      name: nameArg('worktree name (default: derived from branch)').optional(),
      branch: z.string().describe('the branch to check out or create (default wt/NAME)').optional(),
      from: z.string().describe('base of a new branch: a branch, tag or commit (must resolve)').optional(),
      fetch: z.boolean().describe("fetch the base's remote first").default(true),
    })
    .strict(),
  readOnly: false,
  hints: {openWorld: true},
  async run(args, call) {
    const context = call.context()
    const result = await addWorktree(context, {
      name: args.name,
      branch: args.branch,
      from: args.from,
      fetch: args.fetch,
      backends: call.worktreeBackends(context),
    })
    return {
      data: {...result},
      text: `worktree ${result.name} at ${result.path} on ${result.branch}, offset ${result.offset} [${result.offsetSource}]`,
    }
  },
})

export const worktreeList = defineTool({
  name: 'worktree_list',
  title: 'List worktrees',
  description:
    'yard worktree list: the main checkout first, then every worktree under the worktrees root. structuredContent: {worktrees: [the `worktree list --json` rows: name, branch, path, head, base, offset, offsetSource, project, dirty {modified, untracked}, ahead, behind, missing, locked]}.',
  input: z.object({}).strict(),
  readOnly: true,
  async run(_args, call) {
    // The server is long-lived: isomorphic-git, loaded once, answers what it can without a process.
    const rows = await listWorktrees(call.context(), {inProcess: true})
    return {
      data: {worktrees: rows},
      text: `${count(rows.length, 'checkout')}: ${rows.map((row) => row.name).join(', ')}`,
    }
  },
})

export const worktreeRemove = defineTool({
  name: 'worktree_remove',
  title: 'Remove a worktree',
  description:
    'yard worktree remove: refuses (code 3, with the plan and its counts of modified, untracked and unpushed work) when the worktree has unsaved work or is locked, unless force; then archives transcripts, saves uncommitted work to refs/yard/removed/NAME-<UTC stamp>, tears down its box and stack, unregisters it and deletes its pin; the branch is kept. A tool call is never asked for confirmation: without yes or force it is refused (code 3), as the command without a terminal. structuredContent: {plan, result} as `worktree remove --json`; result.snapshot.ref names the saved work.',
  input: z
    .object({
      name: z.string().describe('the worktree to remove'),
      force: z
        .boolean()
        .describe(
          'remove despite unsaved work (saved to a refs/yard/removed/ ref first), a lock, or a failed stack teardown; implies yes',
        )
        .default(false),
      yes: z.boolean().describe('go ahead without the confirmation the command asks on a terminal').default(false),
      dryRun: z.boolean().describe('only plan; change nothing').default(false),
    })
    .strict(),
  readOnly: false,
  hints: {destructive: true},
  async run(args, call) {
    if (args.name === 'main') {
      // The command's own check (commands/worktree/remove.ts), before core sees a reserved name.
      throw new InputError('main is the main checkout; it is not a worktree yard can remove', {
        why: 'yard removes the worktrees it made under the worktrees root; the main checkout holds the repository itself',
        fix: "name a worktree (`yard worktree list` lists them); to tear down main's stack, run `yard nuke`",
      })
    }

    const context = call.context()
    const plan = await planRemoval(context, {
      name: args.name,
      force: args.force,
      dryRun: args.dryRun,
      backends: call.worktreeBackends(context),
    })
    if (plan.refusal) throw withDetails(plan.refusal, {plan: plan.summary})
    if (args.dryRun)
      return {data: {plan: plan.summary}, text: `would remove worktree ${args.name} (${plan.summary.path})`}
    if (!args.yes && !args.force) notConfirmed(`Remove worktree ${args.name}?`, 'yes')
    const result = await executeRemoval(context, plan, {force: args.force})
    const saved = result.snapshot ? `; uncommitted work saved to ${result.snapshot.ref}` : ''
    return {data: {plan: plan.summary, result}, text: `removed worktree ${result.name}${saved}`}
  },
})
