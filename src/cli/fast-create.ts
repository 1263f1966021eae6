/**
 * `yard sandbox create NAME --repo …` without oclif (DESIGN.md §9 "Start-up"). A fleet of agents
 * creates sandboxes by the hundred, and a warm create (a pool pod claimed) takes little more than
 * one engine call: oclif's import and configuration were a sixth of it. bin/run.js hands this
 * module the arguments first; it runs the request itself only when oclif would add nothing to it:
 *
 * - the words are `sandbox create NAME` with the command's own flags only (`--repo` one or more
 *   times, `--branch`, `--runtime podman|kubernetes`, `--image`, `--json`, `--quiet`), each at most
 *   once but `--repo`, as `--flag VALUE` or `--flag=VALUE`; anything else (`--help`, `--verbose`,
 *   `--`, a value oclif would refuse, a missing `--repo`) goes to oclif, which says what is wrong;
 * - no plugin is installed or linked, `DEBUG` and `YARD_CONTENT_TYPE` are unset (fast-path.ts).
 *
 * Otherwise it answers undefined and oclif runs src/commands/sandbox/create.ts. Both call the same
 * use case (`createSandbox`), show progress the same way (tui/progress-renderer.ts), print the
 * same lines (sandbox-created.ts) or JSON, and render errors the same way.
 */
import {parseArgs} from 'node:util'

// The use case's own module, not the domain's index file (fast-exec.ts says why).
import {createSandbox} from '../core/sandbox/create.js'
import {oclifAddsNothing} from './fast-path.js'
import {runFastCommand} from './fast-run.js'
import {createdLines, SANDBOX_RUNTIMES} from './sandbox-created.js'

/** What the fast path runs: the command's argument and flags, as oclif would parse them. */
export interface FastCreateRequest {
  name: string
  repos: string[]
  branch?: string
  runtime?: string
  image?: string
  json: boolean
  quiet: boolean
}

const OPTIONS = {
  repo: {type: 'string', multiple: true},
  branch: {type: 'string'},
  runtime: {type: 'string'},
  image: {type: 'string'},
  json: {type: 'boolean'},
  quiet: {type: 'boolean'},
} as const

/**
 * The request in `argv` (the words after `yard`) when the fast path may run it, else undefined
 * (node:util parseArgs, strict: an unknown flag, a missing value or one that starts with `-` is
 * oclif's to report). Reads the user plugins' package.json (fast-path.ts oclifAddsNothing).
 */
export function fastCreateRequest(argv: readonly string[], env: NodeJS.ProcessEnv): FastCreateRequest | undefined {
  if (argv[0] !== 'sandbox' || argv[1] !== 'create') return undefined
  const words = argv.slice(2)
  if (words.includes('--')) return undefined
  let parsed
  try {
    parsed = parseArgs({args: [...words], options: OPTIONS, allowPositionals: true, strict: true, tokens: true})
  } catch {
    return undefined
  }

  const {values, positionals, tokens} = parsed
  if (positionals.length !== 1 || !values.repo || values.repo.length === 0) return undefined
  // oclif's `--repo` (multiple) takes every plain word after it as another value, so a NAME after
  // a --repo is oclif's to read (it refuses a missing name): the fast path takes NAME first only.
  const first = tokens.findIndex((token) => token.kind === 'option' && token.name === 'repo')
  if (tokens.findIndex((token) => token.kind === 'positional') > first) return undefined
  const given = tokens.flatMap((token) => (token.kind === 'option' && token.name !== 'repo' ? [token.name] : []))
  if (new Set(given).size !== given.length) return undefined
  if (values.runtime !== undefined && !(SANDBOX_RUNTIMES as readonly string[]).includes(values.runtime))
    return undefined
  if (!oclifAddsNothing(env)) return undefined
  return {
    name: positionals[0],
    repos: values.repo,
    json: values.json ?? false,
    quiet: values.quiet ?? false,
    ...(values.branch !== undefined && {branch: values.branch}),
    ...(values.runtime !== undefined && {runtime: values.runtime}),
    ...(values.image !== undefined && {image: values.image}),
  }
}

/**
 * Runs `yard sandbox create` for `argv` without oclif when `fastCreateRequest` allows it: the exit
 * code to leave with (0 after the result on stdout, or a YardError's after it was rendered), or
 * undefined when oclif must run the command instead.
 */
export async function fastCreate(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<number | undefined> {
  const request = fastCreateRequest(argv, env)
  if (request === undefined) return undefined
  return runFastCommand(
    env,
    request,
    async (context, backends) =>
      createSandbox(context, backends, {
        name: request.name,
        repos: request.repos,
        branch: request.branch,
        runtime: request.runtime,
        image: request.image,
      }),
    createdLines,
  )
}
