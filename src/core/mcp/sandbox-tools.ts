/** `sandbox_create`, `sandbox_list`, `sandbox_attach`, `sandbox_rm`: `yard sandbox …` (DESIGN.md §5.2). */
import {z} from 'zod'

import {attachSandbox, createSandbox} from '../sandbox/create.js'
import {removeSandbox} from '../sandbox/rm.js'
import {listSandboxes} from '../sandbox/sandbox.js'
import {count, defineTool, nameArg, runtimeArg} from './tool.js'

export const sandboxCreate = defineTool({
  name: 'sandbox_create',
  title: 'Create a sandbox',
  description:
    "yard sandbox create: a sandbox pod on read-only git caches, with the same project name, offset and ports a worktree of that name would get; each repository's slot gets /work/<slot>/default and the branch's worktree. structuredContent: the `sandbox create --json` result {name, project, runtime, image, offset, offsetSource, ports, pinned, stale, branch, slots}.",
  input: z
    .object({
      name: nameArg('sandbox name'),
      repos: z.array(z.string()).min(1).describe('repositories as [SLOT=]URL[#REF]; the first is the first slot'),
      branch: z.string().describe('branch to attach in every slot (default wt/NAME)').optional(),
      runtime: runtimeArg,
      image: z.string().describe("the workspace image (default [cluster] image, else yard's default image)").optional(),
    })
    .strict(),
  readOnly: false,
  hints: {openWorld: true},
  async run(args, call) {
    const result = await createSandbox(call.context(), call.backends, {
      name: args.name,
      repos: args.repos,
      branch: args.branch,
      runtime: args.runtime,
      image: args.image,
    })
    return {
      data: {...result},
      text: `created sandbox ${result.name} (pod ${result.project}, ${result.runtime}) offset ${result.offset} [${result.offsetSource}] on ${result.branch}`,
    }
  },
})

export const sandboxList = defineTool({
  name: 'sandbox_list',
  title: 'List sandboxes',
  description:
    "yard sandbox list: the project's sandboxes. structuredContent: {sandboxes: [the `sandbox list --json` rows: name, project, runtime, phase, offset, offsetSource, ports, repos: [{slot, identity, key, stale, worktrees: [{branch, path, dirty}]}]]}.",
  input: z.object({runtime: runtimeArg}).strict(),
  readOnly: true,
  hints: {openWorld: true},
  async run(args, call) {
    const rows = await listSandboxes(call.context(), call.backends, args.runtime)
    return {
      data: {sandboxes: rows},
      text:
        rows.length === 0
          ? 'no sandboxes'
          : `${count(rows.length, 'sandbox')}: ${rows.map((row) => `${row.name} ${row.phase}`).join(', ')}`,
    }
  },
})

export const sandboxAttach = defineTool({
  name: 'sandbox_attach',
  title: 'Attach a branch in a sandbox',
  description:
    'yard sandbox attach: creates /work/<slot>/<branch with "/" → "-"> in every slot; what exists is kept as it is. structuredContent: {name, branch, slots: [{slot, default, path, created}]}.',
  input: z
    .object({
      name: z.string().describe('sandbox name'),
      branch: z.string().describe('branch (default wt/NAME)').optional(),
      runtime: runtimeArg,
    })
    .strict(),
  readOnly: false,
  hints: {idempotent: true, openWorld: true},
  async run(args, call) {
    const result = await attachSandbox(call.context(), call.backends, {
      name: args.name,
      branch: args.branch,
      runtime: args.runtime,
    })
    return {
      data: {...result},
      text: result.slots
        .map((slot) => `${slot.slot}: ${slot.path} on ${result.branch}${slot.created ? '' : ' (already attached)'}`)
        .join('\n'),
    }
  },
})

export const sandboxRm = defineTool({
  name: 'sandbox_rm',
  title: 'Remove a sandbox',
  description:
    'yard sandbox rm: refuses (code 3, listing it) while a slot holds modified or untracked files or commits not on origin, unless force, which first saves a git bundle and patches under the state directory and says where. structuredContent: {name, project, runtime, dryRun, lost, unsaved, toSave, savedIn, saved, restore, goes, removed}.',
  input: z
    .object({
      name: z.string().describe('sandbox name'),
      force: z.boolean().describe('save unsaved work as a bundle and patches, then remove').default(false),
      dryRun: z.boolean().describe('show what would be saved and removed, change nothing').default(false),
      runtime: runtimeArg,
    })
    .strict(),
  readOnly: false,
  hints: {destructive: true, openWorld: true},
  async run(args, call) {
    const {result, refusal} = await removeSandbox(call.context(), call.backends, {
      name: args.name,
      force: args.force,
      dryRun: args.dryRun,
      runtime: args.runtime,
    })
    // As the command: a dry run that rm would refuse ends in that refusal (code 3).
    if (refusal) throw refusal
    const saved = result.savedIn
      ? `; ${result.dryRun ? 'would save' : 'saved'} unsaved work under ${result.savedIn}`
      : ''
    return {
      data: {...result},
      text: `${result.dryRun ? 'would remove' : 'removed'} sandbox ${result.name} (pod ${result.project})${saved}`,
    }
  },
})
