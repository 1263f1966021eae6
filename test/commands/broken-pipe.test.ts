/**
 * A reader that closes its end of yard's stdout early (`yard worktree list | head -1`, a script
 * that stops reading) is not a failure of the command: yard still finishes its work and exits
 * with the command's own code, quietly. Before, oclif's final flush waited for a 'drain' that
 * never came, so Node left with exit 13 and an "unsettled top-level await" warning.
 */
import {expect} from 'chai'
import {execFileSync, spawn, spawnSync} from 'node:child_process'
import {existsSync, openSync, readFileSync} from 'node:fs'
import path from 'node:path'

import {projectRoot} from '../support/oclif-config.js'
import {cleanupTemp, makeRepo, tempDir} from '../support/repo.js'

const runJs = path.join(projectRoot, 'bin', 'run.js')

/**
 * Runs bin/run.js with the read end of its stdout (and with `stderr: 'closed'` of its stderr too)
 * closed at once; resolves its exit code and stderr.
 */
async function yardIntoClosedPipe(
  args: string[],
  cwd: string,
  options: {stderr?: 'closed'} = {},
): Promise<{status: number | null; stderr: string}> {
  const env: NodeJS.ProcessEnv = {...process.env, YARD_STATE_DIR: tempDir('yard-state')}
  for (const key of ['NODE_ENV', 'YARD_WORKTREE', 'WT_OFFSET', 'YARD_PREFIX']) delete env[key]
  const child = spawn(process.execPath, [runJs, ...args], {cwd, env, stdio: ['ignore', 'pipe', 'pipe']})
  child.stdout.destroy()
  if (options.stderr === 'closed') child.stderr.destroy()
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (status) => resolve({status, stderr}))
  })
}

describe('yard writing into a pipe its reader has closed', function () {
  this.timeout(120_000)
  let repo: string

  before(() => {
    if (!existsSync(path.join(projectRoot, 'dist', 'commands', 'ports.js')))
      execFileSync('npm', ['run', '--silent', 'build:cli'], {cwd: projectRoot, stdio: 'ignore'})
    repo = makeRepo({'yard.toml': '[project]\nprefix = "yardtest-bp"\n\n[ports]\nAPP_PORT = 3000\n'})
  })

  after(() => cleanupTemp())

  for (const args of [['--version'], ['ports'], ['config'], ['worktree', 'list', '--json']]) {
    it(`exits 0 without a warning for yard ${args.join(' ')}`, async () => {
      const run = await yardIntoClosedPipe(args, repo)
      expect(run.stderr).to.equal('')
      expect(run.status).to.equal(0)
    })
  }

  it("still does the work and keeps the command's own exit code", async () => {
    const target = tempDir('yard-bp-init')
    execFileSync('git', ['init', '-q', '-b', 'main', target])
    const first = await yardIntoClosedPipe(['init', '--prefix', 'yardtest-bp'], target)
    expect(first.status, first.stderr).to.equal(0)
    expect(readFileSync(path.join(target, 'yard.toml'), 'utf8')).to.include('prefix = "yardtest-bp"')
    const again = await yardIntoClosedPipe(['init'], target)
    expect(again.status).to.equal(3)
    expect(again.stderr).to.include('already exists')
    expect(again.stderr).not.to.include('unsettled')
  })

  it('a worktree add whose stderr is closed too finishes the add rather than dying half-way', async () => {
    const main = path.join(tempDir('yard-bp-add'), 'app')
    execFileSync('git', ['clone', '-q', repo, main])
    const added = await yardIntoClosedPipe(['worktree', 'add', 'feat', '--no-fetch'], main, {stderr: 'closed'})
    expect(added.status).to.equal(0)
    expect(existsSync(path.join(`${main}-worktrees`, 'feat', 'yard.toml'))).to.equal(true)
    expect(existsSync(path.join(main, '.git', 'yard', 'adding', 'feat.json')), 'no journal left').to.equal(false)
  })

  it('hands a slow reader all of a large output when the command exits non-zero (oclif exits at once)', async () => {
    // 300 services publishing a port and sharing an external volume: feat's dry run renders them
    // (~150 KB) and is refused (exit 3) for the volume.
    const services = Array.from(
      {length: 300},
      (_, index) =>
        `  svc${index}:\n    image: busybox\n    command: ['sh', '-c', 'echo ${'x'.repeat(100)}']\n    ports: ['${10_000 + index}:80']\n    volumes: ['ext:/data']\n`,
    )
    const app = makeRepo({
      'yard.toml': '[project]\nprefix = "yardtest-bp"\n',
      'compose.yaml': `services:\n${services.join('')}volumes:\n  ext:\n    external: true\n`,
    })
    const env: NodeJS.ProcessEnv = {...process.env, YARD_STATE_DIR: tempDir('yard-state')}
    for (const key of ['NODE_ENV', 'YARD_WORKTREE', 'WT_OFFSET', 'YARD_PREFIX']) delete env[key]
    execFileSync(process.execPath, [runJs, 'worktree', 'add', 'feat', '--no-fetch'], {cwd: app, env, stdio: 'ignore'})
    const intoFile = path.join(tempDir('yard-bp-out'), 'dry-run.yaml')
    const whole = spawnSync(process.execPath, [runJs, 'up', 'feat', '--dry-run'], {
      cwd: app,
      env,
      stdio: ['ignore', openSync(intoFile, 'w'), 'ignore'],
    })
    expect(whole.status).to.equal(3)
    const expected = readFileSync(intoFile, 'utf8')
    expect(expected.length).to.be.above(128 * 1024)
    // A reader that starts a second late, after yard has written all it could and exited.
    const child = spawn(process.execPath, [runJs, 'up', 'feat', '--dry-run'], {
      cwd: app,
      env,
      stdio: ['ignore', 'pipe', 'ignore'],
    })
    child.stdout.pause()
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve))
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const chunks: Buffer[] = []
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk)).resume()
    expect(await closed).to.equal(3)
    expect(Buffer.concat(chunks).toString('utf8')).to.equal(expected)
  })

  it('says once, without a stack, that output to a full device is lost, and exits 1', () => {
    const env: NodeJS.ProcessEnv = {...process.env, YARD_STATE_DIR: tempDir('yard-state')}
    for (const key of ['NODE_ENV', 'YARD_WORKTREE', 'WT_OFFSET', 'YARD_PREFIX']) delete env[key]
    for (const args of [
      ['worktree', 'list'],
      ['worktree', 'list', '--json'],
    ]) {
      const run = spawnSync(process.execPath, [runJs, ...args], {
        cwd: repo,
        env,
        stdio: ['ignore', openSync('/dev/full', 'w'), 'pipe'],
        encoding: 'utf8',
      })
      expect(run.status, args.join(' ')).to.equal(1)
      expect(run.stderr, args.join(' ')).to.equal('yard: its output could not be written (ENOSPC); it is lost\n')
    }
  })
})
