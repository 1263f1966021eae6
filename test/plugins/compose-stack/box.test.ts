/**
 * The box and `yard exec` (DESIGN.md §4.2, cases/README.md case 11) on real podman with yard's
 * default image, through the CLI in child processes (exec hands the terminal to podman) and in a
 * real tmux pane for the terminal size.
 */
import {expect} from 'chai'
import {execFileSync, spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import type {StackContainer} from '../../../src/sdk/stack.js'

import {ensureDefaultImage, podman, podmanEnv, podmanStateDir, prepareStackTests, sweep} from '../../support/podman.js'
import {cleanupTemp, git, makeRepo, tempDir, writeFile} from '../../support/repo.js'
import {projectRoot, yard} from '../../support/yard.js'

const prefix = 'yardtest-s5'
const devJs = path.join(projectRoot, 'bin', 'dev.js')
const runJs = path.join(projectRoot, 'bin', 'run.js')
const recordImports = path.join(projectRoot, 'test', 'support', 'record-imports.mjs')

describe('the box and yard exec (DESIGN.md §4.2)', function () {
  this.timeout(300_000)
  let repo: string
  let feat: string
  let state: string
  let env: Record<string, string | undefined>

  /** `yard …` as a child process: exec's output goes straight to the terminal (here: a pipe). */
  function cli(args: string[]): {status: number; stdout: string; stderr: string} {
    const childEnv: NodeJS.ProcessEnv = {...process.env}
    for (const [key, value] of Object.entries(env)) {
      if (value === undefined) delete childEnv[key]
      else childEnv[key] = value
    }

    const result = spawnSync(process.execPath, [devJs, ...args], {
      cwd: repo,
      env: childEnv,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    return {status: result.status ?? 1, stdout: result.stdout, stderr: result.stderr}
  }

  before(async () => {
    await prepareStackTests()
    await ensureDefaultImage()
    repo = makeRepo({'yard.toml': `[project]\nprefix = "${prefix}"\n\n[ports]\nWEB_PORT = 38600\n`})
    feat = path.join(`${repo}-worktrees`, 'feat')
    git(repo, 'worktree', 'add', '-q', '-b', 'wt/feat', feat)
    writeFile(feat, 'notes.txt', 'untracked\n')
    state = podmanStateDir()
    env = podmanEnv(state)
  })

  after(() => {
    sweep(prefix)
    cleanupTemp()
  })

  it('yard image build reuses the image built for its recipe', async () => {
    const build = await yard(['image', 'build', '--json'], {cwd: repo, env})
    expect(build.exitCode, build.stderr).to.equal(0)
    expect(build.json).to.deep.include({built: false, seconds: 0})
    expect((build.json as {image: string}).image).to.match(/^localhost\/yard-default:[0-9a-f]{12}$/)
  })

  it('a stopped box is exit 1 with the hint; a missing `--` is exit 2', () => {
    const stopped = cli(['exec', 'feat', '--', 'true'])
    expect(stopped.status).to.equal(1)
    expect(stopped.stderr).to.include('run `yard box up --worktree feat` first')
    const noDashes = cli(['exec', 'feat', 'true'])
    expect(noDashes.status).to.equal(2)
    expect(noDashes.stderr).to.include('needs `--`')
  })

  it('box up starts the box on the stack network; exec runs in the worktree with its env and passes exit codes through', async () => {
    const up = await yard(['box', 'up', '--worktree', 'feat'], {cwd: repo, env})
    expect(up.exitCode, up.stderr).to.equal(0)
    const ps = await yard(['box', 'ps', '--worktree', 'feat', '--json'], {cwd: repo, env})
    expect((ps.json as StackContainer[]).map((row) => [row.service, row.container, row.state])).to.deep.equal([
      ['box', `${prefix}-feat-box`, 'running'],
    ])
    // worktree list tells a running box from a running stack.
    const list = await yard(['worktree', 'list'], {cwd: repo, env})
    expect(list.stdout, list.stderr).to.match(/\nfeat\s+wt\/feat\s.*\s-\s+running 1\/1\s+ok\s/)

    const shown = cli(['exec', 'feat', '--', 'sh', '-c', 'echo $WORKTREE; pwd; git status --short | wc -l'])
    expect(shown.status, shown.stderr).to.equal(0)
    expect(
      shown.stdout
        .trim()
        .split('\n')
        .map((line) => line.trim()),
    ).to.deep.equal(['feat', feat, '1'])
    expect(cli(['exec', 'feat', '--', 'sh', '-c', 'exit 7']).status).to.equal(7)
    expect(cli(['exec', 'feat', '--', 'no-such-command']).status).to.equal(127)
    const again = await yard(['box', 'up', '--worktree', 'feat'], {cwd: repo, env})
    expect(again.stdout).to.include('was already running')
  })

  it('the built CLI runs `exec NAME -- CMD` without oclif, as oclif does; flags or a linked plugin go through oclif', () => {
    if (!existsSync(path.join(projectRoot, 'dist', 'cli', 'fast-exec.js')))
      execFileSync('npm', ['run', '--silent', 'build:cli'], {cwd: projectRoot, stdio: 'ignore'})
    const scratch = tempDir('yard-fast-exec')
    const imports = path.join(scratch, 'imports')
    /** bin/run.js with every resolved module recorded; answers what loaded of oclif too. */
    const built = (args: string[], extra: Record<string, string> = {}) => {
      writeFileSync(imports, '')
      const childEnv: NodeJS.ProcessEnv = {...process.env, ...extra, RECORD_IMPORTS_FILE: imports}
      for (const [key, value] of Object.entries(env)) {
        if (value === undefined) delete childEnv[key]
        else childEnv[key] = value
      }

      const result = spawnSync(process.execPath, ['--import', recordImports, runJs, ...args], {
        cwd: repo,
        env: childEnv,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      const oclif = readFileSync(imports, 'utf8').includes('/@oclif/core/')
      return {status: result.status ?? 1, stdout: result.stdout, stderr: result.stderr, oclif}
    }

    const shown = built(['exec', 'feat', '--', 'sh', '-c', 'echo $WORKTREE; pwd; exit 7'])
    expect(shown, shown.stderr).to.deep.include({status: 7, stdout: `feat\n${feat}\n`, oclif: false})
    // The same refusals, word for word, as through oclif.
    const unknown = built(['exec', 'nope', '--', 'true'])
    expect(unknown).to.deep.include({status: 2, oclif: false, stderr: cli(['exec', 'nope', '--', 'true']).stderr})
    expect(unknown.stderr).to.include('there is no worktree nope')
    // A directory or file of the worktrees root that is no checkout is no worktree; a name no
    // worktree can have is said to be one, with no name to make suggested.
    mkdirSync(path.join(path.dirname(feat), 'plain'))
    writeFileSync(path.join(path.dirname(feat), 'afile'), '')
    for (const name of ['plain', 'afile']) {
      const plain = built(['exec', name, '--', 'true'])
      expect(plain, plain.stderr).to.deep.include({status: 2, oclif: false})
      expect(plain.stderr).to.include(
        `there is no worktree ${name}: ${path.join(path.dirname(feat), name)} is not a git worktree`,
      )
      expect(plain.stderr).to.include('is in the way of a worktree of that name')
    }

    // Another repository in the worktrees root is no worktree either, for exec and for box up.
    const foreign = path.join(path.dirname(feat), 'foreign')
    git(path.dirname(feat), 'init', '-q', foreign)
    const other = built(['exec', 'foreign', '--', 'true'])
    expect(other, other.stderr).to.deep.include({status: 2, oclif: false})
    expect(other.stderr).to.include(`there is no worktree foreign: ${foreign} is no worktree of this repository`)
    const boxed = cli(['box', 'up', '--worktree', 'foreign'])
    expect(boxed.status, boxed.stderr).to.equal(2)
    expect(boxed.stderr).to.include('is no worktree of this repository')

    for (const name of ['.', '', 'Feat']) {
      const invalid = built(['exec', name, '--', 'true'])
      expect(invalid, invalid.stderr).to.deep.include({status: 2, oclif: false})
      expect(invalid.stderr).to.include(`no worktree or sandbox can be named "${name}"`)
      expect(invalid.stderr).to.not.include('use "')
    }

    expect(built(['exec', 'Feat', '--', 'true']).stderr).to.include('did you mean feat?')
    // NAME/BRANCH names a sandbox's branch; on a worktree's name it says so.
    const branchOfWorktree = built(['exec', 'feat/x', '--', 'true'])
    expect(branchOfWorktree).to.deep.include({status: 2})
    expect(branchOfWorktree.stderr).to.include('feat is a worktree').and.include('yard exec feat -- CMD')

    // Anything oclif adds something to is oclif's: a flag, a linked plugin (it may provide backends).
    expect(built(['exec', '--worktree', 'feat', '--', 'true'])).to.deep.include({status: 0, oclif: true})
    const data = path.join(scratch, 'data')
    mkdirSync(data)
    writeFileSync(
      path.join(data, 'package.json'),
      JSON.stringify({
        oclif: {
          plugins: [{type: 'link', name: 'procfile-stack', root: path.join(projectRoot, 'examples', 'procfile-stack')}],
        },
      }),
    )
    const linked = built(['exec', 'feat', '--', 'sh', '-c', 'echo $WORKTREE'], {YARD_DATA_DIR: data})
    expect(linked, linked.stderr).to.deep.include({status: 0, stdout: 'feat\n', oclif: true})
  })

  it('in a 100×30 tmux pane exec starts at 30 100 and a running shell follows a resize to 80×20 (case 11)', async () => {
    const socket = `yardtest-s-${process.pid}`
    const tmux = (...args: string[]) =>
      execFileSync('tmux', ['-L', socket, '-f', '/dev/null', ...args], {encoding: 'utf8'})
    const quote = (word: string) => `'${word.replaceAll("'", String.raw`'\''`)}'`
    const yardCommand = (args: string[]) =>
      `cd ${quote(repo)} && YARD_STATE_DIR=${quote(state)} ${quote(process.execPath)} ${quote(devJs)} ${args.map(quote).join(' ')}`
    const screen = () => tmux('capture-pane', '-p', '-t', 't')
    const waitFor = async (pattern: RegExp) => {
      for (let tries = 0; tries < 100; tries++) {
        if (pattern.test(screen())) return
        await new Promise((resolve) => setTimeout(resolve, 200))
      }

      throw new Error(`tmux pane never showed ${pattern}:\n${screen()}`)
    }

    tmux('new-session', '-d', '-s', 't', '-x', '100', '-y', '30', 'env -u CONTAINERS_CONF -u YARD_WORKTREE sh')
    try {
      // The marker is computed by the shell, so the typed line (which may wrap) never matches it.
      tmux(
        'send-keys',
        '-t',
        't',
        `clear; ${yardCommand(['exec', 'feat', '--', 'stty', 'size'])}; echo exec-done-$((6*7))`,
        'Enter',
      )
      await waitFor(/exec-done-42/)
      expect(screen()).to.match(/^30 100$/m)

      tmux('send-keys', '-t', 't', `clear; ${yardCommand(['exec', 'feat', '--', 'sh'])}`, 'Enter')
      tmux('send-keys', '-t', 't', 'echo in-box-$YARD_IN_BOX', 'Enter')
      await waitFor(/(^|# )in-box-1$/m)
      tmux('resize-window', '-t', 't', '-x', '80', '-y', '20')
      await new Promise((resolve) => setTimeout(resolve, 500))
      tmux('send-keys', '-t', 't', 'clear; stty size', 'Enter')
      await waitFor(/(^|# )20 80$/m)
    } finally {
      spawnSync('tmux', ['-L', socket, 'kill-server'])
    }
  })

  it('a box that fails to start leaves no container or network; one left created by an earlier start is made anew', async () => {
    const name = 'nostart'
    const checkout = path.join(`${repo}-worktrees`, name)
    git(repo, 'worktree', 'add', '-q', '-b', `wt/${name}`, checkout)
    const box = `${prefix}-${name}-box`
    const names = (...args: string[]) =>
      podman(...args)
        .split('\n')
        .filter(Boolean)
    // A hard nofile limit above the host's: the runtime cannot set it, as on hosts without
    // CAP_SYS_RESOURCE before `yard doctor --fix` (the container is created, its start fails).
    const bad = path.join(tempDir('yard-bad-conf'), 'containers.conf')
    writeFileSync(
      bad,
      readFileSync(path.join(state, 'containers.conf'), 'utf8').replace(
        'nofile=1024:1024',
        'nofile=1073741816:1073741816',
      ),
    )
    const failed = await yard(['box', 'up', '--worktree', name], {cwd: repo, env: {...env, CONTAINERS_CONF: bad}})
    expect(failed.exitCode, failed.stderr).to.equal(1)
    expect(names('ps', '-a', '--filter', `name=^${box}$`, '--format', '{{.Names}}')).to.deep.equal([])
    expect(names('network', 'ls', '--format', '{{.Name}}')).to.not.include(`${prefix}-${name}_default`)

    // A box an earlier yard left created (never started) is replaced, not started as it was made.
    const [owner, image] = podman(
      'inspect',
      '--format',
      '{{index .Config.Labels "yard.dev/owner"}} {{.ImageName}}',
      `${prefix}-feat-box`,
    ).split(' ', 2)
    podman(
      'create',
      '--name',
      box,
      '--label',
      `yard.dev/owner=${owner}`,
      '--label',
      `yard.dev/role=box`,
      '--label',
      `yard.dev/project=${prefix}-${name}`,
      '--',
      image,
      'false',
    )
    const up = await yard(['box', 'up', '--worktree', name], {cwd: repo, env})
    expect(up.exitCode, up.stderr).to.equal(0)
    expect(names('ps', '--filter', `name=^${box}$`, '--format', '{{.Names}} {{.Command}}')[0]).to.include('sleep')
    expect((await yard(['box', 'down', '--worktree', name], {cwd: repo, env})).exitCode).to.equal(0)

    // An image without sleep: the box ends at once; up says so and leaves nothing.
    const scratch = tempDir('yard-nosleep')
    writeFileSync(path.join(scratch, 'file'), 'x\n')
    const tar = path.join(scratch, 'image.tar')
    execFileSync('tar', ['-C', scratch, '-cf', tar, 'file'])
    const noSleep = `localhost/${prefix}-nosleep:1`
    podman('import', '--quiet', tar, noSleep)
    writeFile(checkout, 'yard.toml', `[project]\nprefix = "${prefix}"\n\n[box]\nimage = "${noSleep}"\n`)
    const ended = await yard(['box', 'up', '--worktree', name], {cwd: repo, env})
    expect(ended.exitCode, ended.stderr).to.equal(1)
    expect(ended.stderr).to.include(`the box of ${name} stopped as soon as it started`)
    expect(names('ps', '-a', '--filter', `name=^${box}$`, '--format', '{{.Names}}')).to.deep.equal([])
    expect(names('network', 'ls', '--format', '{{.Name}}')).to.not.include(`${prefix}-${name}_default`)
    podman('rmi', noSleep)
  })

  it('box down removes the box; with nothing running it says so and exits 0', async () => {
    const down = await yard(['box', 'down', '--worktree', 'feat'], {cwd: repo, env})
    expect(down.exitCode, down.stderr).to.equal(0)
    expect(down.stdout).to.include(`removed container ${prefix}-feat-box`)
    expect(down.stdout).to.include(`removed network ${prefix}-feat_default`)
    const again = await yard(['box', 'down', '--worktree', 'feat'], {cwd: repo, env})
    expect(again.exitCode).to.equal(0)
    expect(again.stdout).to.include('nothing to do')
  })
})
