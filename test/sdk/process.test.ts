import {expect} from 'chai'
import {spawn} from 'node:child_process'
import {existsSync, readdirSync, readFileSync} from 'node:fs'
import path from 'node:path'

import {OperationError} from '../../src/sdk/errors.js'
import {formatArgv, ProcessRunner, signalRunningGroups} from '../../src/sdk/process.js'
import {cleanupTemp, tempDir} from '../support/repo.js'

/** Live (not zombie) processes of process group `pgid`, read from /proc. */
function groupMembers(pgid: number): number[] {
  const members: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const [state, , group] = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ', 2)[1].split(' ', 3)
      if (Number(group) === pgid && state !== 'Z') members.push(Number(entry))
    } catch {
      // Gone meanwhile.
    }
  }

  return members
}

describe('process adapter (STYLE.md, "Processes and git")', () => {
  afterEach(cleanupTemp)

  it('passes argv verbatim, never through a shell', async () => {
    const runner = new ProcessRunner()
    const tricky = ['$(touch /tmp/never)', "a'b", '; rm -rf /', '--', '*']
    const result = await runner.run(process.execPath, [
      '-e',
      'console.log(JSON.stringify(process.argv.slice(1)))',
      ...tricky,
    ])
    expect(JSON.parse(result.stdout)).to.deep.equal(tricky)
  })

  it('echoes `+ cmd` with --verbose and records argv', async () => {
    const lines: string[] = []
    const seen: string[][] = []
    const runner = new ProcessRunner({
      verbose: true,
      log: (line) => lines.push(line),
      onSpawn: (argv) => seen.push(argv),
    })
    await runner.git(['--version'])
    expect(lines).to.deep.equal(['+ git --version'])
    expect(seen).to.deep.equal([['git', '--version']])
    expect(formatArgv(['git', 'commit', '-m', "it's here"])).to.equal(String.raw`git commit -m 'it'\''s here'`)
  })

  it('stderrHold: holds back the engine failures it names, passes every other stderr line as it comes', async () => {
    const shown: string[] = []
    const runner = new ProcessRunner({capture: {write: (stream, text) => shown.push(`${stream}:${text}`)}})
    // "Err" arrives alone: it could still become an engine failure, so it waits for its line.
    const script = String.raw`printf Err >&2; sleep 0.1; printf "or: engine says no\n" >&2; echo "Error: the command's own" >&2; printf "prompt> " >&2; echo out`
    const result = await runner.run('sh', ['-c', script], {
      stdio: 'inherit',
      allowFailure: true,
      stderrHold: (line) => line.includes('engine says no'),
    })
    expect(result.stderr).to.equal('Error: engine says no\n')
    expect(shown.filter((text) => text.startsWith('stderr:')).join('')).to.equal(
      "stderr:Error: the command's own\nstderr:prompt> ",
    )
    expect(shown).to.include('stdout:out\n')
  })

  it('throws a typed failure carrying the command, exit code and stderr', async () => {
    const runner = new ProcessRunner()
    try {
      await runner.git(['rev-parse', '--verify', 'no-such-ref'], {cwd: tempDir('empty')})
      expect.fail('should have thrown')
    } catch (error) {
      expect(error).to.be.instanceOf(OperationError)
      expect((error as OperationError).code).to.equal(1)
      expect((error as OperationError).message).to.match(
        /^git rev-parse --verify no-such-ref failed with exit code 128/,
      )
      expect((error as OperationError).why).to.match(/not a git repository/)
    }

    const allowed = await runner.git(['rev-parse'], {cwd: tempDir('empty'), allowFailure: true})
    expect(allowed.exitCode).to.equal(128)
  })

  it("bounds a failing tool's stderr in the error to its first and last 10 lines", async () => {
    const script =
      'process.stderr.write(Array.from({length: 10000}, (_, i) => `error: unable to write file f${i}: No space left on device\\n`).join("")); process.exitCode = 128'
    try {
      await new ProcessRunner().run(process.execPath, ['-e', script])
      expect.fail('should have thrown')
    } catch (error) {
      const why = (error as OperationError).why!.split('\n')
      expect(why).to.have.length(21)
      expect([why[0], why[10], why[20]]).to.deep.equal([
        'error: unable to write file f0: No space left on device',
        '… 9980 lines omitted …',
        'error: unable to write file f9999: No space left on device',
      ])
    }
  })

  it('says when a program is not installed', async () => {
    try {
      await new ProcessRunner().run('yard-no-such-program', [])
      expect.fail('should have thrown')
    } catch (error) {
      expect((error as OperationError).message).to.equal('yard-no-such-program is not installed or not on PATH')
    }
  })

  it('kills the whole process group when the budget runs out, naming the budget', async () => {
    const dir = tempDir('budget')
    const marker = path.join(dir, 'grandchild-survived')
    const started = Date.now()
    try {
      // The grandchild would create the marker after 1.5 s unless the group is killed.
      await new ProcessRunner().run('sh', ['-c', `(sleep 1.5; touch "$1") & sleep 30`, 'sh', marker], {
        timeoutMs: 300,
        budget: 'fetch',
      })
      expect.fail('should have thrown')
    } catch (error) {
      expect((error as OperationError).message).to.match(/exceeded its fetch budget of 300 ms/)
    }

    expect(Date.now() - started).to.be.below(5000)
    const allowed = await new ProcessRunner().run('sleep', ['30'], {timeoutMs: 100, allowFailure: true})
    expect(allowed).to.include({exitCode: 124, timedOut: true})
    await new Promise((resolve) => setTimeout(resolve, 2000))
    expect(existsSync(marker), 'grandchild was killed with the group').to.equal(false)
  })

  it('signalRunningGroups reaches the commands in their own group (a budget), grandchildren too', async () => {
    const runner = new ProcessRunner()
    const started = Date.now()
    // sh runs sleep as its child: both are in the group the signal goes to.
    const running = runner.run('sh', ['-c', 'sleep 30; echo late'], {timeoutMs: 60_000, allowFailure: true})
    await new Promise((resolve) => setTimeout(resolve, 300))
    signalRunningGroups('SIGINT', ['sh'])
    // A program not named is left running.
    const other = runner.run('sleep', ['1'], {timeoutMs: 60_000})
    await new Promise((resolve) => setTimeout(resolve, 100))
    signalRunningGroups('SIGINT', ['git'])
    expect((await other).exitCode).to.equal(0)
    const result = await running
    expect(result.exitCode).to.not.equal(0)
    expect(result.stdout).to.equal('')
    expect(Date.now() - started).to.be.below(10_000)
  })

  for (const [signal, how] of [
    ['SIGTERM', 'a SIGTERM'],
    ['SIGINT', 'a Ctrl-C'],
    ['SIGHUP', 'a closed terminal'],
    ['SIGUSR2', 'process.exit(130), as a second Ctrl-C during a create'],
  ] as const) {
    it(`ends the commands running in their own group when yard ends by ${how}`, async () => {
      const worker = spawn(process.execPath, [
        '--import',
        'tsx',
        new URL('../support/group-exit-worker.ts', import.meta.url).pathname,
      ])
      const pgid = await new Promise<number>((resolve) =>
        worker.stdout.once('data', (chunk) => resolve(Number(String(chunk).trim()))),
      )
      // The group's sh has started its sleep: two members.
      for (let tries = 0; groupMembers(pgid).length < 2 && tries < 100; tries++)
        await new Promise((resolve) => setTimeout(resolve, 20))
      expect(groupMembers(pgid)).to.have.length(2)
      worker.kill(signal)
      const [code, ended] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
        worker.on('exit', (...outcome) => resolve(outcome)),
      )
      expect(signal === 'SIGUSR2' ? code : ended).to.equal(signal === 'SIGUSR2' ? 130 : signal)
      for (let tries = 0; groupMembers(pgid).length > 0 && tries < 100; tries++)
        await new Promise((resolve) => setTimeout(resolve, 20))
      expect(groupMembers(pgid)).to.deep.equal([])
    })
  }

  it('gives a command on the terminal ended by a signal the exit code a shell gives: 128 + the signal', async () => {
    const runner = new ProcessRunner()
    for (const [signal, code] of [
      ['KILL', 137],
      ['TERM', 143],
    ] as const) {
      const result = await runner.run('sh', ['-c', `kill -${signal} $$`], {stdio: 'inherit', allowFailure: true})
      expect(result.exitCode, signal).to.equal(code)
    }

    expect((await runner.run('sh', ['-c', 'exit 42'], {stdio: 'inherit', allowFailure: true})).exitCode).to.equal(42)
  })

  it("gives children the runner's environment, not more", async () => {
    const runner = new ProcessRunner({env: {PATH: process.env.PATH, ONLY_THIS: 'yes'}})
    const result = await runner.run(process.execPath, [
      '-e',
      'console.log(process.env.ONLY_THIS, process.env.HOME === undefined)',
    ])
    expect(result.stdout.trim()).to.equal('yes true')
  })
})
