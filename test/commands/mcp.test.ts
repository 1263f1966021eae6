/**
 * `yard mcp` through the MCP SDK's own client over stdio (docs/agents.md, issue 20): the tool list
 * as documented, refusals and bad arguments as tool errors in yard's shape, --read-only. No
 * engine: the project selects no machine, stack or sandbox backend, so only git is touched.
 */
import type {CallToolResult} from '@modelcontextprotocol/sdk/types.js'

import {expect} from 'chai'
import {spawn} from 'node:child_process'
import {readFileSync} from 'node:fs'
import path from 'node:path'

import {type McpSession, startMcp, structured} from '../support/mcp.js'
import {cleanupTemp, git, writeFile} from '../support/repo.js'
import {cleanEnv, registered, remoteSetup, rootOf} from '../support/worktrees.js'
import {projectRoot, yard} from '../support/yard.js'

/** No machine, stack or sandbox backend is registered under these ids: nothing reaches an engine. */
const NO_ENGINE_TOML = '[machine]\nbackend = "none"\n\n[stack]\nbackend = "none"\n\n[cluster]\nbackend = "none"\n'

/** The tool table of docs/agents.md: name → [arguments (`?` optional), read-only]. */
function documentedTools(): Map<string, {args: string[]; readOnly: boolean}> {
  const text = readFileSync(path.join(projectRoot, 'docs', 'agents.md'), 'utf8')
  const rows = new Map<string, {args: string[]; readOnly: boolean}>()
  for (const match of text.matchAll(/^\| `([a-z_]+)` \|([^|]*)\| (yes|no) \| /gm)) {
    rows.set(match[1], {
      args: [...match[2].matchAll(/`([A-Za-z]+\??)`/g)].map((arg) => arg[1]),
      readOnly: match[3] === 'yes',
    })
  }

  return rows
}

function errorOf(result: CallToolResult): {
  code: number
  message: string
  why?: string
  fix?: string
  plan?: Record<string, unknown>
} {
  expect(result.isError, JSON.stringify(result)).to.equal(true)
  return structured(result)
}

describe('yard mcp over stdio (issue 20)', function () {
  this.timeout(60_000)
  let setup: ReturnType<typeof remoteSetup>
  let env: Record<string, string | undefined>
  let server: McpSession

  before(async () => {
    setup = remoteSetup({'yard.toml': NO_ENGINE_TOML})
    env = cleanEnv(setup.stateDir)
    server = await startMcp({cwd: setup.main, env})
  })

  after(async () => {
    await server?.close()
    cleanupTemp()
  })

  it('lists the tools of docs/agents.md with their arguments as documented, and the two resources', async () => {
    const {tools} = await server.client.listTools()
    const documented = documentedTools()
    expect(tools.map((tool) => tool.name)).to.deep.equal([...documented.keys()])
    for (const tool of tools) {
      const schema = tool.inputSchema as {
        properties?: Record<string, unknown>
        required?: string[]
        additionalProperties?: boolean
      }
      const args = Object.keys(schema.properties ?? {}).map((name) =>
        (schema.required ?? []).includes(name) ? name : `${name}?`,
      )
      expect(args, tool.name).to.deep.equal(documented.get(tool.name)!.args)
      expect(schema.additionalProperties, tool.name).to.equal(false)
      expect(tool.annotations?.readOnlyHint, tool.name).to.equal(documented.get(tool.name)!.readOnly)
    }

    const exec = tools.find((tool) => tool.name === 'exec')!.inputSchema as {
      properties: Record<string, {type?: string; items?: {type: string}}>
    }
    expect(exec.properties.command).to.deep.include({type: 'array', items: {type: 'string'}})
    const {resources} = await server.client.listResources()
    expect(resources.map((resource) => resource.uri)).to.deep.equal(['yard://worktrees', 'yard://sandboxes'])
  })

  it("bad arguments are tool errors with the command's message (code 2); the server keeps serving after each", async () => {
    const command = await yard(['worktree', 'add', 'Feat_1', '--no-fetch', '--json'], {cwd: setup.main, env})
    const commandError = (command.json as {error: {code: number; message: string; fix: string}}).error
    const badName = errorOf(await server.call('worktree_add', {name: 'Feat_1', fetch: false}))
    expect(badName).to.deep.include({code: 2, message: commandError.message, fix: commandError.fix})
    expect(badName.message).to.equal(
      'invalid worktree name "Feat_1": names use only a-z, 0-9 and inner hyphens (a DNS-1123 label)',
    )

    const upCommand = await yard(['env', '--worktree', 'x'.repeat(41), '--json'], {cwd: setup.main, env})
    expect(errorOf(await server.call('env', {worktree: 'x'.repeat(41)})).message).to.equal(
      (upCommand.json as {error: {message: string}}).error.message,
    )
    const mainCommand = await yard(['worktree', 'remove', 'main', '--json'], {cwd: setup.main, env})
    expect(errorOf(await server.call('worktree_remove', {name: 'main'})).message).to.equal(
      (mainCommand.json as {error: {message: string}}).error.message,
    )

    const unknown = errorOf(await server.call('worktree_add', {name: 'feat', nmae: 'x'}))
    expect(unknown).to.deep.include({
      code: 2,
      message: 'invalid arguments for worktree_add: worktree_add has no argument "nmae"',
      fix: 'worktree_add takes: name, branch, from, fetch',
    })
    const wrongType = errorOf(await server.call('worktree_add', {name: 42}))
    expect(wrongType).to.deep.include({
      code: 2,
      message: 'invalid arguments for worktree_add: argument "name": expected string, received number',
    })
    expect(errorOf(await server.call('exec', {name: 'feat', command: []})).code).to.equal(2)
    expect(errorOf(await server.call('logs', {tail: 0})).message).to.match(
      /^invalid arguments for logs: argument "tail": /,
    )
    expect(errorOf(await server.call('no_such_tool'))).to.deep.include({
      code: 2,
      message: 'there is no tool no_such_tool',
    })

    expect(registered(setup.main)).to.deep.equal([setup.main])
    const list = await server.call('worktree_list')
    expect(list.isError).to.equal(undefined)
    expect(structured<{worktrees: Array<{name: string}>}>(list).worktrees.map((row) => row.name)).to.deep.equal([
      'main',
    ])
  })

  it('worktree_remove of a dirty worktree is refused with code 3 and the counts, changing nothing; with force the snapshot ref is in the result', async () => {
    const added = await server.call('worktree_add', {name: 'dirty', fetch: false})
    expect(added.isError, JSON.stringify(added)).to.equal(undefined)
    expect(structured(added)).to.deep.include({name: 'dirty', branch: 'wt/dirty', branchSource: 'new'})
    // The machine backend "none" is a warning of worktree add: it reaches the result, never stdout.
    const warnings = (added._meta?.['yard.dev/warnings'] ?? []) as string[]
    expect(warnings.join('\n')).to.include('the worktree is ready, but the machine is not')
    expect(server.stderr()).to.include('the worktree is ready, but the machine is not')
    const dirty = path.join(rootOf(setup.main), 'dirty')
    writeFile(dirty, 'README', 'changed\n')
    writeFile(dirty, 'notes.txt', 'untracked\n')
    const refsBefore = git(setup.main, 'for-each-ref')

    for (const args of [{name: 'dirty'}, {name: 'dirty', yes: true}]) {
      const refused = errorOf(await server.call('worktree_remove', args))
      expect(refused.code).to.equal(3)
      expect(refused.message).to.equal(
        'worktree dirty has unsaved work: 1 modified file, 1 untracked file, 0 commits on no remote branch',
      )
      expect(refused.fix).to.include('pass "force": true')
      expect(refused.plan).to.deep.include({
        name: 'dirty',
        unsaved: {modified: 1, untracked: 1, unpushed: 0, detached: 0, against: 'on no remote branch'},
      })
    }

    expect(registered(setup.main)).to.include(dirty)
    expect(readFileSync(path.join(dirty, 'notes.txt'), 'utf8')).to.equal('untracked\n')
    expect(git(setup.main, 'for-each-ref')).to.equal(refsBefore)

    const forced = await server.call('worktree_remove', {name: 'dirty', force: true})
    expect(forced.isError, JSON.stringify(forced)).to.equal(undefined)
    const {result} = structured<{result: {snapshot: {ref: string; restore: string}; unregistered: boolean}}>(forced)
    expect(result.snapshot.ref).to.match(/^refs\/yard\/removed\/dirty-\d{8}T\d{6}Z$/)
    expect(result.unregistered).to.equal(true)
    expect(git(setup.main, 'show', `${result.snapshot.ref}:notes.txt`)).to.equal('untracked')
    expect(registered(setup.main)).to.not.include(dirty)
  })

  it('a remove the command would ask about is refused (code 3) unless the call passes yes; dryRun changes nothing', async () => {
    await server.call('worktree_add', {name: 'clean', fetch: false})
    const clean = path.join(rootOf(setup.main), 'clean')
    const unconfirmed = errorOf(await server.call('worktree_remove', {name: 'clean'}))
    expect(unconfirmed).to.deep.include({
      code: 3,
      message: 'Remove worktree clean? Not confirmed: a tool call is never asked',
      fix: 'pass "yes": true to go ahead without the question',
    })
    const dryRun = await server.call('worktree_remove', {name: 'clean', dryRun: true})
    expect(structured<{plan: {name: string; unsaved: unknown}}>(dryRun).plan).to.deep.include({
      name: 'clean',
      unsaved: {modified: 0, untracked: 0, unpushed: 0, detached: 0, against: 'on no remote branch'},
    })
    expect(registered(setup.main)).to.include(clean)
    const removed = await server.call('worktree_remove', {name: 'clean', yes: true})
    expect(structured<{result: {snapshot: unknown; unregistered: boolean}}>(removed).result).to.deep.include({
      snapshot: null,
      unregistered: true,
    })
    expect(registered(setup.main)).to.not.include(clean)
  })

  it('ports gives the ports --json report of the command; its exclusive arguments are refused as the flags are', async () => {
    const command = await yard(['ports', '--worktree', 'other', '--json'], {cwd: setup.main, env})
    expect(structured(await server.call('ports', {worktree: 'other'}))).to.deep.equal(command.json)
    const all = await yard(['ports', '--all', '--json'], {cwd: setup.main, env})
    expect(structured(await server.call('ports', {all: true}))).to.deep.equal({reports: all.json})
    expect(errorOf(await server.call('ports', {all: true, worktree: 'other'}))).to.deep.include({
      code: 2,
      message: 'all and worktree cannot be given together',
    })
  })

  it('yard://worktrees is the worktree list --json of the command', async () => {
    const resource = await server.client.readResource({uri: 'yard://worktrees'})
    const command = await yard(['worktree', 'list', '--json'], {cwd: setup.main, env})
    expect(JSON.parse((resource.contents[0] as {text: string}).text)).to.deep.equal(command.json)
  })

  it('stdout carries only protocol messages, warnings included; the calls made before stdin ends are answered', async () => {
    const requests = [
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {protocolVersion: '2025-06-18', capabilities: {}, clientInfo: {name: 'pipe', version: '0'}},
      },
      {jsonrpc: '2.0', method: 'notifications/initialized'},
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: {name: 'worktree_add', arguments: {name: 'piped', fetch: false}},
      },
      {jsonrpc: '2.0', id: 3, method: 'tools/call', params: {name: 'worktree_list', arguments: {}}},
    ]
    const childEnv: NodeJS.ProcessEnv = {...process.env, NODE_ENV: 'development'}
    for (const [key, value] of Object.entries(env))
      if (value === undefined) delete childEnv[key]
      else childEnv[key] = value
    const child = spawn(process.execPath, [path.join(projectRoot, 'bin', 'dev.js'), 'mcp'], {
      cwd: setup.main,
      env: childEnv,
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk))
    child.stdin.end(requests.map((request) => JSON.stringify(request)).join('\n') + '\n')
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
    expect(code, stderr).to.equal(0)
    // Every line is a JSON-RPC answer; the two calls run at once, so they may answer in either order.
    const messages = stdout
      .trim()
      .split('\n')
      .map(
        (line) =>
          JSON.parse(line) as {
            jsonrpc: string
            id: number
            result: {isError?: boolean; structuredContent?: {name?: string; worktrees?: unknown[]}}
          },
      )
    expect(messages.map((message) => [message.jsonrpc, message.id]).sort()).to.deep.equal([
      ['2.0', 1],
      ['2.0', 2],
      ['2.0', 3],
    ])
    const byId = new Map(messages.map((message) => [message.id, message.result]))
    expect(byId.get(2)).to.deep.nested.include({'structuredContent.name': 'piped'})
    expect(byId.get(3)?.structuredContent?.worktrees).to.be.an('array')
    expect(stderr).to.include('the worktree is ready, but the machine is not')
    await server.call('worktree_remove', {name: 'piped', yes: true})
  })

  it('--read-only lists no tool that changes state and refuses a call to one by name, changing nothing', async () => {
    const readOnly = await startMcp({cwd: setup.main, env, flags: ['--read-only']})
    try {
      const {tools} = await readOnly.client.listTools()
      expect(tools.map((tool) => tool.name)).to.deep.equal(
        [...documentedTools()].filter(([, row]) => row.readOnly).map(([name]) => name),
      )
      expect(tools.every((tool) => tool.annotations?.readOnlyHint === true)).to.equal(true)
      const refused = errorOf(await readOnly.call('worktree_add', {name: 'nope', fetch: false}))
      expect(refused).to.deep.include({code: 3, message: 'worktree_add changes state, and this server is read-only'})
      expect(errorOf(await readOnly.call('exec', {name: 'main', command: ['true']})).code).to.equal(3)
      expect(registered(setup.main)).to.deep.equal([setup.main])
      expect((await readOnly.call('worktree_list')).isError).to.equal(undefined)
    } finally {
      await readOnly.close()
    }
  })
})
