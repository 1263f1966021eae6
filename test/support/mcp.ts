import type {CallToolResult} from '@modelcontextprotocol/sdk/types.js'

/**
 * `yard mcp` driven through the MCP SDK's own client over stdio: the server is `bin/dev.js mcp`
 * (the TypeScript sources) in a child process, with a chosen cwd and environment; its stderr is
 * collected so a test can see the warnings that must not reach stdout.
 */
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {StdioClientTransport} from '@modelcontextprotocol/sdk/client/stdio.js'
import path from 'node:path'

import {projectRoot} from './yard.js'

export interface McpSession {
  client: Client
  /** What the server wrote to stderr so far. */
  stderr(): string
  /** A tools/call; its result as the SDK gives it. */
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>
  close(): Promise<void>
}

/** Starts `yard mcp …flags` in `cwd` with process.env overlaid by `env` (undefined deletes), and connects. */
export async function startMcp(options: {
  cwd: string
  env?: Record<string, string | undefined>
  flags?: string[]
}): Promise<McpSession> {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries({...process.env, NODE_ENV: 'development', ...options.env}))
    if (value !== undefined) env[key] = value
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(projectRoot, 'bin', 'dev.js'), 'mcp', ...(options.flags ?? [])],
    cwd: options.cwd,
    env,
    stderr: 'pipe',
  })
  let stderr = ''
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const client = new Client({name: 'yard-test', version: '0'})
  await client.connect(transport)
  return {
    client,
    stderr: () => stderr,
    call: async (name, args = {}) => (await client.callTool({name, arguments: args})) as CallToolResult,
    close: async () => client.close(),
  }
}

/** The structured content of a result, typed for a test. */
export function structured<T = Record<string, unknown>>(result: CallToolResult): T {
  return result.structuredContent as T
}
