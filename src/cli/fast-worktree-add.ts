/**
 * `yard worktree add [NAME] [BRANCH]` without oclif (DESIGN.md §9 "Start-up"). A worktree per
 * branch, per agent, is made many times a day, and next to `git worktree add` oclif's import and
 * configuration were most of what yard added. bin/run.js hands this module the arguments first;
 * it runs the request itself only when oclif would add nothing to it:
 *
 * - the words are `worktree add` with at most two plain words (NAME, BRANCH) and the command's
 *   own flags (`--branch`/`-b`, `--from`, `--[no-]fetch`, `--[no-]submodules`, `--untrusted`,
 *   `--json`, `--quiet`), each at most once, as `--flag VALUE` or `--flag=VALUE`; anything else
 *   (`--help`, `--verbose`, `--`, an unknown flag, a value starting with `-`) goes to oclif, which
 *   says what is wrong;
 * - no plugin is installed or linked, `DEBUG`, `YARD_DEBUG` and `YARD_CONTENT_TYPE` are unset
 *   (fast-path.ts).
 *
 * Otherwise it answers undefined and oclif runs src/commands/worktree/add.ts. Both call the same
 * use case (`addWorktree`), show progress the same way (tui/progress-renderer.ts), print the same
 * lines (worktree-added.ts) or JSON, and render errors the same way.
 */
import {parseArgs} from 'node:util'

// The use case's own modules, not the domain's index file (fast-exec.ts says why).
import {addWorktree} from '../core/worktree/add.js'
import {worktreeBackends} from '../core/worktree/backends.js'
import {InputError} from '../sdk/errors.js'
import {oclifAddsNothing} from './fast-path.js'
import {runFastCommand} from './fast-run.js'
import {addedLines} from './worktree-added.js'

/** What the fast path runs: the command's arguments and flags, as oclif would parse them. */
export interface FastAddRequest {
  name?: string
  branch?: string
  /** Whether BRANCH was given both as a word and as `--branch` (refused as the command refuses it). */
  branchTwice: boolean
  from?: string
  fetch: boolean
  submodules: boolean
  untrusted: boolean
  json: boolean
  quiet: boolean
}

const OPTIONS = {
  branch: {type: 'string', short: 'b'},
  from: {type: 'string'},
  fetch: {type: 'boolean'},
  submodules: {type: 'boolean'},
  untrusted: {type: 'boolean'},
  json: {type: 'boolean'},
  quiet: {type: 'boolean'},
} as const

/** The flags oclif takes as `--no-FLAG` (allowNo); node:util would take it of any boolean. */
const NEGATABLE = new Set(['fetch', 'submodules'])

/**
 * The request in `argv` (the words after `yard`) when the fast path may run it, else undefined
 * (node:util parseArgs, strict: an unknown flag, a missing value or one that starts with `-` is
 * oclif's to report). Reads the user plugins' package.json (fast-path.ts oclifAddsNothing).
 */
export function fastAddRequest(argv: readonly string[], env: NodeJS.ProcessEnv): FastAddRequest | undefined {
  if (argv[0] !== 'worktree' || argv[1] !== 'add') return undefined
  const words = argv.slice(2)
  if (words.includes('--')) return undefined
  let parsed
  try {
    parsed = parseArgs({
      args: [...words],
      options: OPTIONS,
      allowPositionals: true,
      allowNegative: true,
      strict: true,
      tokens: true,
    })
  } catch {
    return undefined
  }

  const {values, positionals, tokens} = parsed
  if (positionals.length > 2) return undefined
  const given = tokens.flatMap((token) => (token.kind === 'option' ? [token] : []))
  if (new Set(given.map((token) => token.name)).size !== given.length) return undefined
  // `--no-json`, `--no-untrusted`, `--no-quiet`: oclif refuses them.
  if (given.some((token) => token.rawName.startsWith('--no-') && !NEGATABLE.has(token.name))) return undefined
  // `--json=yes` (oclif refuses a boolean's value), `-bNAME` and an empty value: oclif's to read.
  if (given.some((token) => token.inlineValue && (token.value === undefined || !token.rawName.startsWith('--'))))
    return undefined
  // oclif reads `--branch=--json` as a flag without its value: refused in its words, not the use case's.
  if (given.some((token) => token.value === '' || token.value?.startsWith('-'))) return undefined
  if (!oclifAddsNothing(env)) return undefined
  const [name, branch] = positionals
  return {
    ...(name !== undefined && {name}),
    ...((branch ?? values.branch) !== undefined && {branch: branch ?? values.branch}),
    branchTwice: branch !== undefined && values.branch !== undefined,
    ...(values.from !== undefined && {from: values.from}),
    fetch: values.fetch ?? true,
    submodules: values.submodules ?? true,
    untrusted: values.untrusted ?? false,
    json: values.json ?? false,
    quiet: values.quiet ?? false,
  }
}

/**
 * Runs `yard worktree add` for `argv` without oclif when `fastAddRequest` allows it: the exit code
 * to leave with (0 after the result on stdout, or a YardError's after it was rendered), or
 * undefined when oclif must run the command instead.
 */
export async function fastWorktreeAdd(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<number | undefined> {
  const request = fastAddRequest(argv, env)
  if (request === undefined) return undefined
  return runFastCommand(
    env,
    request,
    async (context, backends) => {
      // In oclif's order: the state directory (BaseCommand.init, runFastCommand) before the command's own checks.
      if (request.branchTwice)
        throw new InputError('the branch was given twice: as BRANCH and as --branch', {fix: 'give it once'})
      return addWorktree(context, {
        name: request.name,
        branch: request.branch,
        from: request.from,
        fetch: request.fetch,
        submodules: request.submodules,
        untrusted: request.untrusted,
        backends: worktreeBackends(backends, context),
      })
    },
    addedLines,
  )
}
