/**
 * `yard exec` into a box with one engine call (DESIGN.md §4.2): after `box up` recorded the box's
 * id, exec is a single `podman exec`; a box removed or stopped behind yard's back, and a checkout
 * directory missing in the box, come out of that call's own failure as the clear errors the
 * inspect gave. Real podman, the busybox service image as the box image.
 */
import {expect} from 'chai'
import {mkdirSync, readFileSync, renameSync, rmSync} from 'node:fs'
import path from 'node:path'

import {BUSYBOX_IMAGE, podman, podmanEnv, podmanStateDir, prepareStackTests, sweep} from '../../support/podman.js'
import {cleanupTemp, git, makeRepo} from '../../support/repo.js'
import {yard} from '../../support/yard.js'

const prefix = 'yardtest-s7'

describe("yard exec into a box: one engine call, its failures in yard's words", function () {
  this.timeout(120_000)
  let repo: string
  let feat: string
  let env: Record<string, string | undefined>
  const box = `${prefix}-feat-box`

  /** The podman calls of one `yard exec --verbose` (the `+ podman …` echoes). */
  const podmanCalls = (stderr: string) => stderr.split('\n').filter((line) => line.startsWith('+ podman'))

  before(async () => {
    await prepareStackTests()
    repo = makeRepo({'yard.toml': `[project]\nprefix = "${prefix}"\n\n[box]\nimage = "${BUSYBOX_IMAGE}"\n`})
    feat = path.join(`${repo}-worktrees`, 'feat')
    git(repo, 'worktree', 'add', '-q', '-b', 'wt/feat', feat)
    env = podmanEnv(podmanStateDir())
  })

  after(() => {
    sweep(prefix)
    cleanupTemp()
  })

  it('runs with one podman exec once box up recorded the box, exit codes and stderr passing through', async () => {
    const up = await yard(['box', 'up', '--worktree', 'feat'], {cwd: repo, env})
    expect(up.exitCode, up.stderr).to.equal(0)
    const run = await yard(['exec', 'feat', '--verbose', '--', 'sh', '-c', 'pwd >&2; echo Error: mine >&2; exit 7'], {
      cwd: repo,
      env,
    })
    expect(run.exitCode).to.equal(7)
    const calls = podmanCalls(run.stderr)
    expect(calls, run.stderr).to.have.length(1)
    expect(calls[0]).to.match(/^\+ podman exec --interactive --workdir \S+ [0-9a-f]{64} sh -c /)
    // The command's own "Error: " line is no engine failure: it passes.
    expect(run.stderr).to.include(`${feat}\nError: mine\n`)
  })

  it("a command that prints podman's own failure lines with podman's exit codes runs once, its lines and code its own", async () => {
    const count = path.join(feat, 'runs')
    for (const [line, code] of [
      ['Error: no container with name or ID "db" found: no such container', 125],
      ['Error: can only create exec sessions on running containers: container state improper', 125],
      // runc's missing-directory line with exit 127 is read from the exec alone, and so taken for one.
    ] as const) {
      rmSync(count, {force: true})
      const run = await yard(
        ['exec', 'feat', '--verbose', '--', 'sh', '-c', `echo run >> ${count}; echo '${line}' >&2; exit ${code}`],
        {cwd: repo, env},
      )
      expect(run.exitCode, run.stderr).to.equal(code)
      expect(readFileSync(count, 'utf8'), line).to.equal('run\n')
      expect(run.stderr).to.include(line)
      expect(
        podmanCalls(run.stderr).filter((call) => / exec .* sh -c /.test(call)),
        run.stderr,
      ).to.have.length(1)
    }

    rmSync(count, {force: true})
  })

  it("a box removed behind yard's back: exit 1 with the box up hint, podman's own line held back", async () => {
    podman('rm', '--force', '--time', '0', box)
    const run = await yard(['exec', 'feat', '--verbose', '--', 'sh', '-c', 'exit 0'], {cwd: repo, env})
    expect(run.exitCode).to.equal(1)
    expect(run.stderr).to.include(`the box of feat is not created`)
    expect(run.stderr).to.include('run `yard box up --worktree feat` first')
    expect(run.stderr).not.to.include('no such container')
  })

  it("a box stopped behind yard's back: exit 1 naming its state", async () => {
    expect((await yard(['box', 'up', '--worktree', 'feat'], {cwd: repo, env})).exitCode).to.equal(0)
    podman('stop', '--time', '0', box)
    const run = await yard(['exec', 'feat', '--', 'sh', '-c', 'exit 0'], {cwd: repo, env})
    expect(run.exitCode).to.equal(1)
    expect(run.stderr).to.include('the box of feat is exited')
    expect(run.stderr).not.to.include('container state improper')
  })

  it('the checkout missing in the box (the worktrees root made anew after box up): exit 125 saying so, from the exec alone', async () => {
    expect((await yard(['box', 'up', '--worktree', 'feat'], {cwd: repo, env})).exitCode).to.equal(0)
    // The box mounts the old root directory; the checkout now lives in a new one.
    const root = path.dirname(feat)
    renameSync(root, `${root}.old`)
    mkdirSync(root)
    renameSync(path.join(`${root}.old`, 'feat'), feat)
    const run = await yard(['exec', 'feat', '--verbose', '--', 'sh', '-c', 'exit 0'], {cwd: repo, env})
    expect(run.exitCode).to.equal(125)
    expect(run.stderr).to.include(`the box ${box} has no ${feat}`)
    expect(run.stderr).to.include('yard box down --worktree feat')
    expect(podmanCalls(run.stderr)).to.have.length(1)
    expect(run.stderr).not.to.include('chdir to cwd')
  })
})
