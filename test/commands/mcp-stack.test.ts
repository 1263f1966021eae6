/**
 * `yard mcp` end to end on real podman (issue 20, acceptance 1): through the MCP SDK's client
 * over stdio, a worktree is created, its stack brought up, a command run in its box, and the
 * worktree removed, leaving what the commands leave: no container, volume or network of its
 * project, the worktree unregistered, the branch kept.
 */
import {expect} from 'chai'

import {type McpSession, startMcp, structured} from '../support/mcp.js'
import {
  ensureBusyboxImage,
  ensureDefaultImage,
  podmanEnv,
  podmanStateDir,
  podmanTry,
  projectObjects,
  sweep,
  webService,
} from '../support/podman.js'
import {cleanupTemp, git, makeRepo} from '../support/repo.js'
import {hasBranch, registered} from '../support/worktrees.js'
import {yard} from '../support/yard.js'

const TEST_PREFIX = 'yardtest-q'
const prefix = 'yardtest-q1'

describe('yard mcp drives a worktree through its stack and box (podman)', function () {
  this.timeout(300_000)
  let repo: string
  let env: Record<string, string | undefined>
  let server: McpSession

  before(async () => {
    sweep(TEST_PREFIX)
    await ensureBusyboxImage()
    await ensureDefaultImage()
    const compose = ['services:', '  web:', webService('hello from mcp', '${WEB_PORT:-38800}:8080'), ''].join('\n')
    repo = makeRepo({
      'yard.toml': `[project]\nprefix = "${prefix}"\n\n[ports]\nWEB_PORT = 38800\n`,
      'compose.yaml': compose,
    })
    env = {
      ...podmanEnv(podmanStateDir()),
      GIT_AUTHOR_NAME: 'Test',
      GIT_AUTHOR_EMAIL: 't@example.com',
      GIT_COMMITTER_NAME: 'Test',
      GIT_COMMITTER_EMAIL: 't@example.com',
    }
    server = await startMcp({cwd: repo, env})
  })

  after(async () => {
    await server?.close()
    sweep(TEST_PREFIX)
    cleanupTemp()
  })

  it('worktree_add, up, box_up, exec (git status, exit codes, cap, time-out), logs, worktree_remove', async () => {
    const {tools} = await server.client.listTools()
    expect(tools.map((tool) => tool.name)).to.include.members([
      'worktree_add',
      'up',
      'box_up',
      'exec',
      'worktree_remove',
    ])

    const added = await server.call('worktree_add', {name: 'feat', fetch: false})
    expect(added.isError, JSON.stringify(added)).to.equal(undefined)
    const feat = structured<{path: string; branch: string}>(added)
    expect(feat.branch).to.equal('wt/feat')
    const project = `${prefix}-feat`

    const up = await server.call('up', {worktree: 'feat'})
    expect(up.isError, JSON.stringify(up)).to.equal(undefined)
    expect(structured(up)).to.deep.equal({project, boxOnly: false})
    const ps = structured<{containers: Array<{service: string; state: string}>}>(
      await server.call('ps', {worktree: 'feat'}),
    )
    expect(ps.containers.map((row) => [row.service, row.state])).to.deep.equal([['web', 'running']])

    const box = await server.call('box_up', {worktree: 'feat'})
    expect(box.isError, JSON.stringify(box)).to.equal(undefined)
    expect(structured(box)).to.deep.include({project, started: true})

    const status = await server.call('exec', {name: 'feat', command: ['git', 'status']})
    expect(status.isError, JSON.stringify(status)).to.equal(undefined)
    const ran = structured<{exitCode: number; stdout: string; truncated: boolean; timedOut: boolean}>(status)
    expect(ran).to.deep.include({exitCode: 0, truncated: false, timedOut: false})
    expect(ran.stdout).to.include('On branch wt/feat')
    expect(
      structured(await server.call('exec', {name: 'feat', command: ['sh', '-c', 'echo $WORKTREE; pwd; exit 7']})),
    ).to.deep.include({exitCode: 7, stdout: `feat\n${feat.path}\n`})
    const big = structured<{stdout: string; stdoutBytes: number; truncated: boolean; outputCapBytes: number}>(
      await server.call('exec', {name: 'feat', command: ['seq', '1', '30000']}),
    )
    expect(big).to.deep.include({truncated: true, outputCapBytes: 65_536})
    expect(big.stdoutBytes).to.be.above(65_536)
    expect(Buffer.byteLength(big.stdout)).to.equal(65_536)
    const slow = structured(await server.call('exec', {name: 'feat', command: ['sleep', '30'], timeoutSeconds: 1}))
    expect(slow).to.deep.include({exitCode: 124, timedOut: true})

    const logs = structured<{lines: string[]}>(await server.call('logs', {worktree: 'feat', tail: 5}))
    expect(logs.lines.join('\n')).to.include('serving hello from mcp')

    expect(structured(await server.call('sandbox_list'))).to.deep.equal({sandboxes: []})
    expect(structured(await server.call('cache_list'))).to.deep.equal({caches: []})
    const noSandbox = await yard(['sandbox', 'rm', 'nope', '--json'], {cwd: repo, env})
    const refused = await server.call('sandbox_rm', {name: 'nope'})
    expect(refused.isError).to.equal(true)
    expect(structured(refused)).to.deep.include({
      code: noSandbox.exitCode,
      message: (noSandbox.json as {error: {message: string}}).error.message,
    })

    const removed = await server.call('worktree_remove', {name: 'feat', yes: true})
    expect(removed.isError, JSON.stringify(removed)).to.equal(undefined)
    const {result} = structured<{result: {stack: {removed: string[]}; unregistered: boolean}}>(removed)
    expect(result.unregistered).to.equal(true)
    expect(result.stack.removed.join('\n')).to.include(`${project}-box`)
    expect(projectObjects(project)).to.deep.equal({containers: [], volumes: [], networks: []})
    expect(podmanTry('container', 'exists', `${project}-box`).status).to.equal(1)
    expect(registered(repo)).to.deep.equal([repo])
    expect(hasBranch(repo, 'wt/feat')).to.equal(true)
    expect(git(repo, 'status', '--porcelain')).to.equal('')
  })
})
