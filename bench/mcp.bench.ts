/**
 * `yard mcp` (docs/agents.md): one `worktree_list` call through a server already running (the
 * shipped CLI, `bin/run.js mcp`, driven by the MCP SDK's client over stdio) against `yard worktree
 * list --json` as a process, in a scratch repository with three worktrees. The server pays its
 * start-up once; the target is a call at most 0.3× the process.
 */
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {StdioClientTransport} from '@modelcontextprotocol/sdk/client/stdio.js'
import {execFileSync} from 'node:child_process'
import {join} from 'node:path'

import {ensureBuilt, runJs, scratchGitRepo, yardEnv} from './fixtures.js'
import {makeScratchDir, measureBench, reportBench} from './lib.js'

const log = (line: string) => process.stderr.write(`mcp: ${line}\n`)
const node = process.execPath

const buildFailure = await ensureBuilt(log)
const repo = await scratchGitRepo()
for (const name of ['alpha', 'beta', 'gamma'])
  execFileSync('git', ['worktree', 'add', '-q', '-b', `wt/${name}`, join(`${repo}-worktrees`, name)], {cwd: repo})
const env = yardEnv(await makeScratchDir('state'))

let client: Client | undefined
if (buildFailure === undefined) {
  const childEnv = Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  )
  client = new Client({name: 'yard-bench', version: '0'})
  await client.connect(
    new StdioClientTransport({command: node, args: [runJs, 'mcp'], cwd: repo, env: childEnv, stderr: 'ignore'}),
  )
}

const result = await measureBench({
  name: 'mcp',
  baseline: 'yard worktree list --json',
  rows: [
    {
      label: 'yard worktree list --json',
      argv: [node, runJs, 'worktree', 'list', '--json'],
      cwd: repo,
      env,
      unavailable: buildFailure,
    },
    {
      label: 'worktree_list via yard mcp',
      argv: [node, runJs, 'mcp'],
      unavailable: buildFailure,
      note: 'one tools/call to the running server; target ≤ 0.3',
      async call() {
        const answer = await client!.callTool({name: 'worktree_list', arguments: {}})
        const rows = (answer.structuredContent as {worktrees?: unknown[]} | undefined)?.worktrees
        if (answer.isError || rows?.length !== 4)
          throw new Error(`worktree_list answered ${JSON.stringify(answer).slice(0, 200)}`)
      },
    },
  ],
})
await client?.close()
await reportBench(result)
