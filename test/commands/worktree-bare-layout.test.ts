/**
 * The bare layout (`repo/.bare`, `repo/.git` = `gitdir: ./.bare`, every branch a worktree beside
 * it): yard's verbs work there, and identity and offsets are those of the same repository cloned
 * normally (DESIGN.md §3.3, §3.4).
 */
import {expect} from 'chai'
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {ownerHash} from '../../src/core/identity/identity.js'
import {BUSYBOX_IMAGE, podman, podmanEnv, prepareStackTests, projectObjects, sweep} from '../support/podman.js'
import {cleanupTemp, git, tempDir, writeFile} from '../support/repo.js'
import {cleanEnv} from '../support/worktrees.js'
import {yard} from '../support/yard.js'

const PREFIX = 'yardtest-b'

/** An upstream bare repository holding yard.toml and a compose file with one busybox service. */
function upstream(): string {
  const dir = tempDir('bare-upstream')
  const work = path.join(dir, 'work')
  git(dir, 'init', '-q', '-b', 'main', work)
  writeFile(
    work,
    'compose.yaml',
    [
      'services:',
      '  idle:',
      `    image: ${BUSYBOX_IMAGE}`,
      '    command: ["sh", "-c", "trap \'exit 0\' TERM; sleep 100000 & wait"]',
      '',
    ].join('\n'),
  )
  writeFile(work, 'README', 'x\n')
  git(work, 'add', '-A')
  git(work, 'commit', '-q', '-m', 'initial')
  const bare = path.join(dir, 'up.git')
  git(dir, 'clone', '-q', '--bare', work, bare)
  return bare
}

/** The bare layout of `url` at `<tmp>/yardtest-b`, with the default branch's worktree `main`; returns the root. */
function bareLayout(url: string): string {
  const root = path.join(tempDir('bare'), PREFIX)
  git(path.dirname(root), 'clone', '-q', '--bare', url, path.join(root, '.bare'))
  writeFileSync(path.join(root, '.git'), 'gitdir: ./.bare\n')
  git(root, 'worktree', 'add', '-q', 'main', 'main')
  return root
}

describe('the bare layout (DESIGN.md §3.3)', function () {
  this.timeout(120_000)

  afterEach(cleanupTemp)

  it('has the identity, offsets and project names of the same repository cloned normally, and fetches with the refspec a bare clone lacks', async () => {
    const url = upstream()
    const normal = path.join(tempDir('normal'), PREFIX)
    git(path.dirname(normal), 'clone', '-q', url, normal)
    const root = bareLayout(url)
    const env = cleanEnv(tempDir('state'))
    for (const main of [normal, path.join(root, 'main')]) {
      const added = await yard(['worktree', 'add', 'feat'], {cwd: main, env})
      expect(added.exitCode, added.stderr).to.equal(0)
      expect(
        added.stderr.includes(
          'note: remote origin had no fetch refspec (a bare clone has none); added +refs/heads/*:refs/remotes/origin/*',
        ),
      ).to.equal(main !== normal)
    }

    expect(existsSync(path.join(root, 'feat', 'README'))).to.equal(true)
    const bareAdd = await yard(['worktree', 'add', 'fix', '--json'], {cwd: root, env})
    expect(bareAdd.exitCode, bareAdd.stderr).to.equal(0)
    expect(bareAdd.json).to.include({path: path.join(root, 'fix'), fetched: 'origin'})
    expect(git(root, 'config', '--get', 'remote.origin.fetch')).to.equal('+refs/heads/*:refs/remotes/origin/*')
    await yard(['worktree', 'add', 'fix'], {cwd: normal, env})
    const rows = async (cwd: string) =>
      ((await yard(['worktree', 'list', '--json'], {cwd, env})).json as Array<Record<string, unknown>>).map(
        ({name, offset, project, branch}) => ({name, offset, project, branch}),
      )
    const normalRows = await rows(normal)
    expect(normalRows.map((row) => row.project)).to.deep.equal([PREFIX, `${PREFIX}-feat`, `${PREFIX}-fix`])
    // From main, from a worktree and from the directory holding .bare: the same list.
    expect(await rows(path.join(root, 'main'))).to.deep.equal(normalRows)
    expect(await rows(path.join(root, 'feat'))).to.deep.equal(normalRows)
    expect(await rows(root)).to.deep.equal(normalRows)
  })

  it('names a missing default-branch worktree and the fix; [project] main-worktree chooses another', async () => {
    const root = bareLayout(upstream())
    git(root, 'worktree', 'add', '-q', '-b', 'trunk', 'trunk', 'main')
    git(root, 'worktree', 'remove', 'main')
    const env = cleanEnv(tempDir('state'))
    const missing = await yard(['worktree', 'list'], {cwd: path.join(root, 'trunk'), env})
    expect(missing.exitCode).to.equal(2)
    expect(missing.stderr).to.include(
      `no worktree of the bare repository ${path.join(root, '.bare')} is on its default branch main`,
    )
    expect(missing.stderr).to.include('[project] main-worktree')
    writeFile(path.join(root, 'trunk'), 'yard.toml', '[project]\nmain-worktree = "trunk"\n')
    const listed = await yard(['worktree', 'list', '--json'], {cwd: path.join(root, 'trunk'), env})
    expect(listed.exitCode, listed.stderr).to.equal(0)
    expect(listed.json).to.deep.equal([
      {...(listed.json as object[])[0], name: 'main', path: path.join(root, 'trunk'), branch: 'trunk'},
    ])
  })

  it("yard init, worktree add, list, up --worktree and worktree remove work; the stack is the same project and owner as the normal layout's", async () => {
    await prepareStackTests()
    sweep(PREFIX)
    const root = bareLayout(upstream())
    const main = path.join(root, 'main')
    const env = {...podmanEnv(), YARD_PREFIX: undefined}
    const run = async (args: string[], cwd = main) => yard(args, {cwd, env})
    try {
      const init = await run(['init'])
      expect(init.exitCode, init.stderr).to.equal(0)
      expect(readFileSync(path.join(main, 'yard.toml'), 'utf8')).to.include(`prefix = "${PREFIX}"`)
      expect((await run(['worktree', 'add', 'feat'])).exitCode).to.equal(0)
      const listed = await run(['worktree', 'list', '--json'])
      expect((listed.json as Array<{name: string}>).map((row) => row.name)).to.deep.equal(['main', 'feat'])
      const up = await run(['up', '--worktree', 'feat'])
      expect(up.exitCode, up.stderr).to.equal(0)
      const {containers} = projectObjects(`${PREFIX}-feat`)
      expect(containers).to.have.length(1)
      // The owner a normal clone at the root's path has (its main checkout is the root).
      expect(podman('inspect', '--format', '{{index .Config.Labels "yard.dev/owner"}}', containers[0])).to.equal(
        ownerHash(root),
      )
      const down = await run(['down', '--worktree', 'feat'])
      expect(down.exitCode, down.stderr).to.equal(0)
      const removed = await run(['worktree', 'remove', 'feat', '--yes'])
      expect(removed.exitCode, removed.stderr).to.equal(0)
      expect(existsSync(path.join(root, 'feat'))).to.equal(false)
      expect(git(root, 'worktree', 'list')).not.to.include('feat')
    } finally {
      sweep(PREFIX)
    }
  })
})
