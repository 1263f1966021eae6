/**
 * What one tool of `yard mcp` is (issue 20, docs/agents.md): a name, a strict zod input schema,
 * whether it changes anything, and a `run` that calls the same core function as the command and
 * returns its `--json` shape (DESIGN.md Appendix A) with a one-line summary.
 */
import {z} from 'zod'

import type {TerminalCapture} from '../../sdk/process.js'
import type {YardContext} from '../kernel/context.js'
import type {Backends} from '../registry/backends.js'
import type {WorktreeBackends} from '../worktree/backends.js'

import {RefusedError} from '../../sdk/errors.js'

/** What a tool call gets from the server: contexts on the server's checkout, the backends. */
export interface ToolCall {
  /**
   * A context on the server's checkout (its cwd); warnings go into the call's result and to
   * stderr. `capture` receives what children that ask for the terminal write (default: stderr,
   * never stdout, which carries the protocol).
   */
  context(capture?: TerminalCapture): YardContext
  /** The server's backends (core/registry/backends.ts), the registry loaded on first use, once. */
  backends: Backends
  /** The worktree use cases' backends, from `backends`, for `context`. */
  worktreeBackends(context: YardContext): WorktreeBackends
  /** The root of the running yard package (doctor tells it from other `yard`s on PATH). */
  selfRoot?: string
}

/** A tool's answer: `data` becomes `structuredContent`, `text` the short text beside it. */
export interface ToolOutcome {
  data: Record<string, unknown>
  text: string
}

/** MCP tool annotations (the specification's `ToolAnnotations`), hints for the host's UI. */
export interface ToolHints {
  /** Removes something (work, containers, a pod): a host should ask its user first. */
  destructive?: boolean
  /** A second call with the same arguments changes nothing more. */
  idempotent?: boolean
  /** Talks to something outside the project (a remote, a cluster). */
  openWorld?: boolean
}

export interface YardTool<S extends z.ZodObject = z.ZodObject> {
  name: string
  title: string
  /** What it does, which command it is, and what `structuredContent` holds. */
  description: string
  /** Strict (unknown fields are refused); generates the tool's JSON Schema. */
  input: S
  /** Changes nothing: the only kind `yard mcp --read-only` offers. */
  readOnly: boolean
  hints?: ToolHints
  run(args: z.output<S>, call: ToolCall): Promise<ToolOutcome>
}

/** Declares a tool with its argument types inferred from the schema. */
export function defineTool<S extends z.ZodObject>(tool: YardTool<S>): YardTool {
  return tool
}

/**
 * A worktree or sandbox name as the commands take it; yard's rules (identity.ts) are checked by
 * core, so a bad name gets the command's own message.
 */
export const nameArg = (what: string) => z.string().describe(`${what}: a-z, 0-9 and inner -, at most 40 characters`)

/** `--worktree NAME` of the stack commands (DESIGN.md §3.3). */
export const worktreeArg = z
  .string()
  .describe(
    'the worktree to target, or "main" (default: YARD_WORKTREE of the server, then the checkout it serves, i.e. main)',
  )
  .optional()

/** `--runtime` of the sandbox commands. */
export const runtimeArg = z
  .enum(['podman', 'kubernetes'])
  .describe('sandbox runtime (default [cluster] runtime)')
  .optional()

/**
 * The refusal a command gives without a terminal and without `--yes` (base.ts confirmOrRefuse):
 * a tool call never asks, so it refuses unless `yes` (or `force`) is passed.
 * @throws RefusedError (exit 3) always.
 */
export function notConfirmed(question: string, argument: string): never {
  throw new RefusedError(`${question} Not confirmed: a tool call is never asked`, {
    why: 'the command asks on a terminal before this step; over MCP there is no one to answer, so it is refused like a "no"',
    fix: `pass "${argument}": true to go ahead without the question`,
  })
}

/** "1 worktree", "2 worktrees". */
export function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`
}

const details = new WeakMap<object, Record<string, unknown>>()

/** Adds fields to an error's `structuredContent` (a refused remove's plan with its counts); returns the error. */
export function withDetails<E extends Error>(error: E, fields: Record<string, unknown>): E {
  details.set(error, {...details.get(error), ...fields})
  return error
}

/** The fields `withDetails` added, if any. */
export function detailsOf(error: unknown): Record<string, unknown> {
  return (typeof error === 'object' && error !== null && details.get(error)) || {}
}
