/**
 * What teardown and `up` may touch (DESIGN.md §3.1 "Ownership", §4.2 `nuke`): exact-prefix,
 * label-checked volumes only (cases/README.md case 7), and a project name owned by another clone.
 */
import {expect} from 'chai'
import {mkdirSync} from 'node:fs'
import path from 'node:path'

import {
  dataService,
  podman,
  podmanEnv,
  prepareStackTests,
  projectObjects,
  sweep,
  webService,
} from '../../support/podman.js'
import {cleanupTemp, git, makeRepo, tempDir} from '../../support/repo.js'
import {yard} from '../../support/yard.js'

describe('compose-stack: nuke removes exactly its own volumes (case 7)', function () {
  this.timeout(120_000)
  const prefix = 'yardtest-s2'
  let repo: string
  let env: Record<string, string | undefined>
  const run = async (args: string[]) => yard(args, {cwd: repo, env})
  const volumes = () =>
    podman('volume', 'ls', '--format', '{{.Name}}')
      .split('\n')
      .filter((name) => name.startsWith(prefix))
      .sort()

  before(async () => {
    await prepareStackTests()
    repo = makeRepo({
      'yard.toml': `[project]\nprefix = "${prefix}"\n`,
      'compose.yaml': ['services:', '  store:', dataService('data'), 'volumes:', '  data:', ''].join('\n'),
    })
    for (const name of ['a', 'a-b'])
      git(repo, 'worktree', 'add', '-q', '-b', `wt/${name}`, path.join(`${repo}-worktrees`, name))
    env = podmanEnv()
    for (const target of ['main', 'a', 'a-b']) {
      const up = await run(['up', '--worktree', target])
      expect(up.exitCode, up.stderr).to.equal(0)
    }

    // Named like a-'s volumes, but not labelled with its project: not yard's to remove.
    podman('volume', 'create', `${prefix}-a_cache`)
  })

  after(() => {
    sweep(prefix)
    cleanupTemp()
  })

  it('--dry-run lists exactly what would go and removes nothing', async () => {
    const before = volumes()
    expect(before).to.deep.equal([`${prefix}-a-b_data`, `${prefix}-a_cache`, `${prefix}-a_data`, `${prefix}_data`])
    const dry = await run(['nuke', '--worktree', 'a', '--dry-run', '--json'])
    expect(dry.exitCode, dry.stderr).to.equal(0)
    expect(dry.json).to.deep.equal({
      project: `${prefix}-a`,
      dryRun: true,
      // yard's own state of the project (its rendered compose file) goes too.
      removed: [
        `container ${prefix}-a_store_1`,
        `network ${prefix}-a_default`,
        `volume ${prefix}-a_data`,
        `yard state ${path.join(env.YARD_STATE_DIR!, 'stacks', `${prefix}-a`)}`,
      ],
    })
    expect(volumes()).to.deep.equal(before)
    expect(projectObjects(`${prefix}-a`).containers).to.deep.equal([`${prefix}-a_store_1`])
  })

  it("removes demo-a_* of its project only: demo-a-b_data, main's volumes and an unlabelled demo-a_cache survive", async () => {
    const nuke = await run(['nuke', '--worktree', 'a'])
    expect(nuke.exitCode, nuke.stderr).to.equal(0)
    expect(volumes()).to.deep.equal([`${prefix}-a-b_data`, `${prefix}-a_cache`, `${prefix}_data`])
    expect(projectObjects(`${prefix}-a`)).to.deep.equal({containers: [], volumes: [], networks: []})
    expect(projectObjects(`${prefix}-a-b`).containers).to.deep.equal([`${prefix}-a-b_store_1`])
    expect(projectObjects(prefix).containers).to.deep.equal([`${prefix}_store_1`])
  })
})

describe('compose-stack: a project name owned by another clone (DESIGN.md §3.1)', function () {
  this.timeout(120_000)
  const dirName = 'yardtest-s3app'

  before(prepareStackTests)

  after(() => {
    sweep(dirName)
    cleanupTemp()
  })

  it('refuses up in the second clone (exit 3) with the prefix fix, and touches nothing of the first', async () => {
    const files = {'compose.yaml': ['services:', '  web:', webService('first', '38390:8080'), ''].join('\n')}
    const first = makeRepo(files, dirName)
    const second = path.join(tempDir(), dirName)
    mkdirSync(path.dirname(second), {recursive: true})
    git(path.dirname(second), 'clone', '-q', '--', first, second)
    const env = podmanEnv()

    const up = await yard(['up'], {cwd: first, env})
    expect(up.exitCode, up.stderr).to.equal(0)
    const state = () =>
      podman('container', 'inspect', '--format', '{{.Id}} {{.State.Status}} {{.State.StartedAt}}', `${dirName}_web_1`)
    const running = state()

    const clash = await yard(['up'], {cwd: second, env})
    expect(clash.exitCode).to.equal(3)
    expect(clash.stderr).to.include(`compose project ${dirName} is already used by another checkout`)
    expect(clash.stderr).to.include(first)
    expect(clash.stderr).to.match(/fix: set a distinct prefix in .*yard\.toml: \[project\] prefix = /)
    expect(state()).to.equal(running)

    for (const verb of [['down'], ['nuke']]) {
      const teardown = await yard(verb, {cwd: second, env})
      expect(teardown.exitCode).to.equal(0)
      expect(teardown.stderr).to.include('not owned by this checkout')
    }

    expect(state()).to.equal(running)
    expect(projectObjects(dirName).networks).to.deep.equal([`${dirName}_default`])
  })
})
