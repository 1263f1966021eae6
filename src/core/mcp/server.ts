/**
 * `yard mcp` (issue 20, docs/agents.md): a Model Context Protocol server on stdio, with the
 * official SDK's low-level `Server`, over the same use cases as the commands. Tools are the
 * table of tools.ts; arguments are checked here against each tool's strict zod schema (so a bad
 * argument is a tool error in yard's shape, not a protocol error); results are the `--json`
 * shapes as `structuredContent` beside a short text; every YardError becomes a tool error with
 * `{code, message, why, fix}`. The server targets one checkout (`project`) and never asks:
 * what a command would confirm on a terminal is refused unless the call says `yes` / `force`.
 */
import {Server} from '@modelcontextprotocol/sdk/server/index.js'
import {StdioServerTransport} from '@modelcontextprotocol/sdk/server/stdio.js'
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js'
import {Writable} from 'node:stream'
import {z} from 'zod'

import type {Backends} from '../registry/backends.js'

import {ExitCode, InputError, RefusedError, YardError} from '../../sdk/errors.js'
import {ProcessRunner, type TerminalCapture} from '../../sdk/process.js'
import {createContext, type YardContext} from '../kernel/context.js'
import {worktreeBackends} from '../worktree/backends.js'
import {STDERR_CAPTURE} from './capture.js'
import {sandboxList} from './sandbox-tools.js'
import {detailsOf, type ToolCall, type YardTool} from './tool.js'
import {TOOLS, toolsFor} from './tools.js'
import {worktreeList} from './worktree-tools.js'

export interface McpServerOptions {
  /** The checkout every tool targets (the command's cwd, or `--project`): its working directory. */
  project: string
  /** Offer only the tools that change nothing; a call to another is refused (code 3). */
  readOnly: boolean
  /** The command's backends (`this.backends`); the registry loads on first use, once. */
  backends: Backends
  /** yard's package root, for doctor. */
  selfRoot?: string
  /** yard's version, in the server's `initialize` answer. */
  version: string
  env?: NodeJS.ProcessEnv
  /** Echo every external command (`+ cmd`) to stderr. */
  verbose?: boolean
}

/** The resources: the lists, readable without a tool call. */
const RESOURCES = [
  {
    uri: 'yard://worktrees',
    name: 'worktrees',
    title: 'Worktrees',
    description: 'yard worktree list --json: main first, then every worktree',
    mimeType: 'application/json',
    tool: worktreeList,
    key: 'worktrees',
  },
  {
    uri: 'yard://sandboxes',
    name: 'sandboxes',
    title: 'Sandboxes',
    description: "yard sandbox list --json: the project's sandboxes",
    mimeType: 'application/json',
    tool: sandboxList,
    key: 'sandboxes',
  },
] as const

/** The tool's input as JSON Schema (draft 2020-12, what MCP specifies), defaults marked optional. */
export function inputJsonSchema(tool: YardTool): {type: 'object'; [key: string]: unknown} {
  const schema = z.toJSONSchema(tool.input, {io: 'input'}) as Record<string, unknown>
  delete schema.$schema
  return {...schema, type: 'object'}
}

/** What one call made of yard: its warnings (also on stderr) and contexts on the project. */
class Call implements ToolCall {
  readonly warnings: string[] = []
  constructor(
    private readonly options: McpServerOptions,
    readonly backends: Backends,
  ) {}

  get selfRoot() {
    return this.options.selfRoot
  }

  context(capture: TerminalCapture = STDERR_CAPTURE): YardContext {
    const warn = (message: string) => {
      this.warnings.push(message)
      process.stderr.write(message + '\n')
    }

    const context = createContext({
      cwd: this.options.project,
      env: this.options.env,
      verbose: this.options.verbose,
      warn,
    })
    return {...context, runner: new ProcessRunner({...context.runner.options, capture})}
  }

  worktreeBackends(context: YardContext) {
    return worktreeBackends(this.backends, context)
  }
}

/**
 * `--dry-run` → `"dryRun": true` in a fix, for the tool's own switches (the command's boolean
 * flags by another name). Flags with a value stay as they are: they appear in command lines the
 * fix quotes (`yard exec --sandbox NAME -- CMD`).
 */
function inArgumentWords(text: string | undefined, tool: YardTool | undefined): string | undefined {
  if (text === undefined || tool === undefined) return text
  let said = text
  for (const [key, field] of Object.entries(tool.input.shape)) {
    if (!(field as z.ZodType).safeParse(true).success) continue
    const flag = key.replaceAll(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)
    said = said.replaceAll(new RegExp(String.raw`--${flag}(?![\w-])`, 'g'), `"${key}": true`)
  }

  return said
}

/**
 * A failed call as MCP wants it: `isError`, the rendered error as text, `{code, message, why, fix}`
 * as structured content.
 */
export function toolError(error: unknown, tool?: YardTool, warnings: string[] = []): CallToolResult {
  const yardError = error instanceof YardError ? error : undefined
  if (!yardError)
    process.stderr.write(
      `yard mcp: unexpected failure${tool ? ` in ${tool.name}` : ''}: ${(error as Error)?.stack ?? String(error)}\n`,
    )
  const code = yardError?.code ?? ExitCode.failed
  const message = yardError?.message ?? `unexpected failure: ${(error as Error)?.message ?? String(error)}`
  const fields = {code, message, why: yardError?.why, fix: inArgumentWords(yardError?.fix, tool)}
  const rendered = [message, fields.why && `  why: ${fields.why}`, fields.fix && `  fix: ${fields.fix}`]
    .filter(Boolean)
    .join('\n')
  return {
    isError: true,
    content: [{type: 'text', text: `error (code ${code}): ${rendered}`}, ...warningBlock(warnings)],
    structuredContent: {...JSON.parse(JSON.stringify(fields)), ...detailsOf(error)},
  }
}

function warningBlock(warnings: string[]): Array<{type: 'text'; text: string}> {
  return warnings.length === 0 ? [] : [{type: 'text', text: `warnings:\n${warnings.join('\n')}`}]
}

/** A zod failure in the words of yard's input errors (exit 2): which argument, what was wrong. */
function argumentError(tool: YardTool, error: z.ZodError): InputError {
  const problems = error.issues.map((issue) => {
    if (issue.code === 'unrecognized_keys')
      return `${tool.name} has no argument ${issue.keys.map((key) => `"${key}"`).join(', ')}`
    const where = issue.path.length > 0 ? `argument "${issue.path.join('.')}"` : 'the arguments'
    return `${where}: ${issue.message.replace(/^Invalid input: /, '')}`
  })
  const names = Object.keys(tool.input.shape)
  return new InputError(`invalid arguments for ${tool.name}: ${problems.join('; ')}`, {
    why: "nothing was run: the arguments must match the tool's input schema (tools/list)",
    fix: names.length > 0 ? `${tool.name} takes: ${names.join(', ')}` : `${tool.name} takes no arguments: pass {}`,
  })
}

/**
 * Runs one `tools/call`. Never throws: an unknown or withheld tool, bad arguments and every
 * failure are tool errors, so the server keeps serving.
 */
export async function callTool(
  options: McpServerOptions,
  backends: Backends,
  name: string,
  args: unknown,
): Promise<CallToolResult> {
  const offered = toolsFor(options)
  const tool = offered.find((candidate) => candidate.name === name)
  if (!tool) {
    if (TOOLS.some((candidate) => candidate.name === name)) {
      return toolError(
        new RefusedError(`${name} changes state, and this server is read-only`, {
          why: '`yard mcp --read-only` offers only the tools that change nothing',
          fix: `use a server started without --read-only, or run \`yard\` yourself; this one offers: ${offered.map((candidate) => candidate.name).join(', ')}`,
        }),
      )
    }

    return toolError(
      new InputError(`there is no tool ${name}`, {
        fix: `use one of: ${offered.map((candidate) => candidate.name).join(', ')}`,
      }),
    )
  }

  const parsed = tool.input.safeParse(args ?? {})
  if (!parsed.success) return toolError(argumentError(tool, parsed.error), tool)
  const call = new Call(options, backends)
  try {
    const outcome = await tool.run(parsed.data, call)
    return {
      content: [
        {type: 'text', text: outcome.text},
        {type: 'text', text: JSON.stringify(outcome.data)},
        ...warningBlock(call.warnings),
      ],
      structuredContent: outcome.data,
      ...(call.warnings.length > 0 && {_meta: {'yard.dev/warnings': call.warnings}}),
    }
  } catch (error) {
    return toolError(error, tool, call.warnings)
  }
}

/**
 * The MCP server with yard's tools and resources, not yet connected to a transport, and `settled`:
 * resolves when no tool call or resource read is under way.
 */
export function createServer(options: McpServerOptions): {server: Server; settled: () => Promise<void>} {
  const running = new Set<Promise<unknown>>()
  const track = async <T>(work: Promise<T>): Promise<T> => {
    running.add(work)
    void work.finally(() => running.delete(work)).catch(() => undefined)
    return work
  }

  const server = new Server(
    {name: 'yard', title: 'yard', version: options.version},
    {
      capabilities: {tools: {}, resources: {}},
      instructions: `yard on the checkout ${options.project}: every worktree its own stack, box and port offset. Tools take worktree or sandbox names as yard's commands do; refusals are code 3 with a fix, and nothing destructive happens without "force" or "yes".${options.readOnly ? ' This server is read-only.' : ''}`,
    },
  )
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: toolsFor(options).map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: inputJsonSchema(tool),
      annotations: {
        title: tool.title,
        readOnlyHint: tool.readOnly,
        ...(!tool.readOnly && {
          destructiveHint: tool.hints?.destructive ?? false,
          idempotentHint: tool.hints?.idempotent ?? false,
        }),
        openWorldHint: tool.hints?.openWorld ?? false,
      },
    })),
  }))
  server.setRequestHandler(CallToolRequestSchema, async (request) =>
    track(callTool(options, options.backends, request.params.name, request.params.arguments)),
  )
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: RESOURCES.map(({uri, name, title, description, mimeType}) => ({
      uri,
      name,
      title,
      description,
      mimeType,
    })),
  }))
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => track(readResource(request.params.uri)))
  async function readResource(uri: string) {
    const resource = RESOURCES.find((candidate) => candidate.uri === uri)
    if (!resource)
      throw new Error(
        `there is no resource ${uri}; yard offers ${RESOURCES.map((candidate) => candidate.uri).join(', ')}`,
      )
    const result = await callTool(options, options.backends, resource.tool.name, {})
    const data = result.structuredContent ?? {}
    if (result.isError) throw new Error(String((data as {message?: unknown}).message ?? 'failed'))
    return {
      contents: [
        {
          uri: resource.uri,
          mimeType: resource.mimeType,
          text: JSON.stringify((data as Record<string, unknown>)[resource.key]),
        },
      ],
    }
  }

  // The SDK sends a call's answer in a callback on the handler's promise, some microtasks after
  // the call itself settles: a turn of the event loop (setImmediate) after the last call lets
  // every answer be written before the caller closes the transport.
  const settled = async () => {
    do {
      await Promise.allSettled(running)
      await new Promise((resolve) => setImmediate(resolve))
    } while (running.size > 0)
  }

  return {server, settled}
}

/**
 * Serves on this process's stdin and stdout until stdin ends (calls under way are answered
 * first). stdout carries only the protocol:
 * anything else that would write to it (a plugin's hook, a stray log) goes to stderr.
 */
export async function serveStdio(options: McpServerOptions): Promise<void> {
  const {stdout} = process
  const protocolWrite = stdout.write.bind(stdout)
  stdout.write = (chunk: string | Uint8Array, ...rest: never[]) => process.stderr.write(chunk, ...rest)
  const channel = new Writable({
    write(chunk: Buffer, _encoding, done) {
      protocolWrite(chunk, (error?: Error | null) => done(error ?? null))
    },
  })
  // A failure no call awaited (a backend's stray promise) is logged; it must not end the server.
  process.on('unhandledRejection', (reason) =>
    process.stderr.write(`yard mcp: unhandled rejection: ${(reason as Error)?.stack ?? String(reason)}\n`),
  )
  const {server, settled} = createServer(options)
  const closed = new Promise<void>((resolve) => {
    server.onclose = resolve
    // The client is done sending; the calls it already made are still answered.
    process.stdin.once('end', () => void settled().then(async () => server.close()))
  })
  await server.connect(new StdioServerTransport(process.stdin, channel))
  await closed
}
