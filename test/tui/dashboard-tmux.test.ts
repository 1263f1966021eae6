/**
 * `yard dashboard` in a real terminal (DESIGN.md §6, cases/README.md case 10): the CLI in a
 * 120×40 tmux pane, read with capture-pane, over main + 3 worktrees (two stacks up on real
 * podman) and one podman-runtime sandbox.
 */
import {expect} from 'chai'
import {execFileSync, spawnSync} from 'node:child_process'
import {readFileSync, rmSync} from 'node:fs'
import path from 'node:path'

import {makeUpstream} from '../plugins/k8s-sandbox/support.js'
import {
  ensureBusyboxImage,
  ensureDefaultImage,
  podmanEnv,
  podmanStateDir,
  podmanTry,
  sweep,
  webService,
} from '../support/podman.js'
import {addWorktree, cleanupTemp, makeRepo, tempDir, writeFile} from '../support/repo.js'
import {projectRoot, yard} from '../support/yard.js'

/** This file's podman objects, and only they, start with this. */
const PREFIX = 'yardtest-d2'
const devJs = path.join(projectRoot, 'bin', 'dev.js')
const socket = `yardtest-d-${process.pid}`
// The environment as mocha loaded this file, before any test ran: a test that leaves
// process.env changed shows up in the diagnosis below (tmux's server inherits process.env).
const envAtLoad = {...process.env}
const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, '-f', '/dev/null', ...args], {encoding: 'utf8'})
const quote = (word: string) => `'${word.replaceAll("'", String.raw`'\''`)}'`
const screen = () => tmux('capture-pane', '-p', '-t', 't')
const paneFlag = (name: string) => tmux('display-message', '-p', '-t', 't', `#{${name}}`).trim()

/** Keys whose values differ between two environments, as `KEY: before → after` lines. */
function envChanges(before: NodeJS.ProcessEnv, after: NodeJS.ProcessEnv): string[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()
  return keys
    .filter((key) => before[key] !== after[key])
    .map((key) => `${key}: ${before[key] ?? '(unset)'} → ${after[key] ?? '(unset)'}`)
}

/** The processes under the pane's shell (pid, state, age in s, kernel wait channel, argv). */
function paneProcesses(): string {
  const panePid = paneFlag('pane_pid')
  const table = spawnSync('ps', ['-e', '-o', 'pid=,ppid=,stat=,etimes=,wchan:24=,args='], {
    encoding: 'utf8',
  }).stdout.split('\n')
  const rows = table.map((line) => line.trim().split(/\s+/)).filter((cells) => cells.length > 5)
  const tree = new Set([panePid])
  for (let grew = true; grew;) {
    grew = false
    for (const cells of rows) if (tree.has(cells[1]) && !tree.has(cells[0])) grew = tree.add(cells[0]) !== undefined
  }

  return rows
    .filter((cells) => tree.has(cells[0]))
    .map((cells) => cells.join(' ').slice(0, 300))
    .join('\n')
}

/** Set in `before`: where the pane's environment and the dashboard's trace are written. */
let diagnosis: {paneEnv: string; trace: string; envChanged: string[]} | undefined

/** What the failure message of a wait adds: the screen, the trace, the processes and environments. */
function diagnose(): string {
  if (!diagnosis) return ''
  const read = (file: string) => {
    try {
      return readFileSync(file, 'utf8')
    } catch {
      return '(none)\n'
    }
  }

  const paneEnv = Object.fromEntries(
    read(diagnosis.paneEnv)
      .split('\n')
      .filter((line) => line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  )
  return [
    `alternate screen: ${paneFlag('alternate_on')}`,
    `the dashboard's trace (YARD_DASHBOARD_TRACE):\n${read(diagnosis.trace)}`,
    `processes under the pane:\n${paneProcesses()}`,
    `process.env changed since this file loaded:\n${diagnosis.envChanged.join('\n') || '(nothing)'}`,
    `the pane's environment against this process's:\n${envChanges(process.env, paneEnv).join('\n') || '(the same)'}`,
  ].join('\n')
}

async function waitFor(test: RegExp | ((text: string) => boolean), budgetMs = 30_000): Promise<string> {
  const check = typeof test === 'function' ? test : (text: string) => test.test(text)
  for (let waited = 0; waited < budgetMs; waited += 150) {
    const text = screen()
    if (check(text)) return text
    await new Promise((resolve) => setTimeout(resolve, 150))
  }

  throw new Error(`the pane never showed ${test}:\n${screen()}\n${diagnose()}`)
}

/** The row of worktree `name` on the screen (the line whose first word after the mark is the name). */
const rowOf = (text: string, name: string) =>
  text.split('\n').find((line) => line.replace(/^›/, ' ').trim().split(/\s+/, 1)[0] === name) ?? ''
const selected = (text: string) =>
  text
    .split('\n')
    .find((line) => line.startsWith('›'))
    ?.split(/\s+/, 2)[1]

describe('yard dashboard in a tmux pane (DESIGN.md §6, case 10)', function () {
  this.timeout(300_000)
  // Each step goes on from the screen the one before left: after a failure the rest fail at once.
  let broken: string | undefined

  beforeEach(() => {
    if (broken) throw new Error(`not run: the step before failed (${broken})`)
  })

  afterEach(function () {
    if (this.currentTest?.state === 'failed') broken ??= this.currentTest.title
  })
  let repo: string
  let state: string
  let marks: string

  before(async () => {
    sweep(PREFIX)
    await ensureDefaultImage()
    await ensureBusyboxImage() // the web services' image, also when no stack test ran before
    const compose = ['services:', '  web:', webService('hello ${WORKTREE:-main}', '${WEB_PORT:-38780}:8080'), ''].join(
      '\n',
    )
    // Two [ports] keys: rows wider than 80 columns, so the 80×20 pane must cut cells.
    repo = makeRepo({
      'yard.toml': `[project]\nprefix = "${PREFIX}"\n\n[ports]\nWEB_PORT = 38780\nAPI_PORT = 38880\n`,
      'compose.yaml': compose,
    })
    for (const name of ['feat', 'fix', 'docs']) addWorktree(repo, name)
    writeFile(path.join(`${repo}-worktrees`, 'docs'), 'draft.md', 'not committed\n')
    state = podmanStateDir()
    marks = tempDir('yardtest-d-marks')
    const env = podmanEnv(state)
    for (const args of [
      ['up', '--worktree', 'feat'],
      ['up', '--worktree', 'fix'],
      ['box', 'up', '--worktree', 'feat'],
      ['sandbox', 'create', 'sbx', '--repo', makeUpstream('shop'), '--branch', 'feat/cart'],
    ]) {
      const done = await yard(args, {cwd: repo, env})
      expect(done.exitCode, `${args.join(' ')}: ${done.stderr}`).to.equal(0)
    }

    diagnosis = {
      paneEnv: path.join(marks, 'pane-env'),
      trace: path.join(marks, 'trace'),
      envChanged: envChanges(envAtLoad, process.env),
    }
    tmux(
      'new-session',
      '-d',
      '-s',
      't',
      '-x',
      '120',
      '-y',
      '40',
      'env -u CONTAINERS_CONF -u YARD_WORKTREE -u WT_OFFSET -u YARD_PREFIX PS1="$ " sh',
    )
    // CI=true as CI runners set it (and tmux's server passes on): Ink then drew no frame at all.
    const setup = `cd ${quote(repo)} && export CI=true YARD_STATE_DIR=${quote(state)} YARD_DASHBOARD_TRACE=${quote(diagnosis.trace)} && env > ${quote(diagnosis.paneEnv)}`
    tmux('send-keys', '-t', 't', `${setup} && stty -a > ${quote(path.join(marks, 'before'))}; clear`, 'Enter')
  })

  after(() => {
    // kill-server leaves the socket file behind: remove it too.
    const socketPath = spawnSync('tmux', ['-L', socket, 'display-message', '-p', '#{socket_path}'], {
      encoding: 'utf8',
    }).stdout.trim()
    spawnSync('tmux', ['-L', socket, 'kill-server'])
    if (socketPath.endsWith(`/${socket}`)) rmSync(socketPath, {force: true})
    sweep(PREFIX)
    cleanupTemp()
  })

  const start = async () => {
    tmux('send-keys', '-t', 't', `clear; ${quote(process.execPath)} ${quote(devJs)} dashboard; echo "exit=$?"`, 'Enter')
    // The first screen waits for the TypeScript sources to load under tsx and for the first
    // gather; late in a long suite on 2 cores that has taken over 30 s.
    await waitFor(
      (text) => rowOf(text, 'feat').includes('running 1/1') && rowOf(text, 'fix').includes('running 1/1'),
      90_000,
    )
  }

  /** Asserts the terminal is as before: normal screen, cursor shown, `stty -a` unchanged. */
  const expectRestored = async (code: number) => {
    await waitFor(new RegExp(`exit=${code}`))
    expect(paneFlag('alternate_on')).to.equal('0')
    expect(paneFlag('cursor_flag')).to.equal('1')
    const after = path.join(marks, `after-${code}`)
    tmux('send-keys', '-t', 't', `stty -a > ${quote(after)}; echo stty-saved-${code}`, 'Enter')
    await waitFor(new RegExp(`^stty-saved-${code}`, 'm'))
    expect(readFileSync(after, 'utf8')).to.equal(readFileSync(path.join(marks, 'before'), 'utf8'))
  }

  it('shows every checkout with offset and host ports; Tab shows the sandbox with slot, branch and cache freshness, and returns', async () => {
    await start()
    expect(paneFlag('alternate_on')).to.equal('1')
    const text = screen()
    for (const name of ['main', 'feat', 'fix', 'docs'])
      expect(rowOf(text, name)).to.match(/\d+ (main|hash)\s+WEB_PORT=\d+/)
    expect(rowOf(text, 'main')).to.include('WEB_PORT=38780')
    expect(rowOf(text, 'docs')).to.match(/absent\s+absent\s+0M 1U/)
    tmux('send-keys', '-t', 't', 'Tab')
    const cluster = await waitFor((shown) => rowOf(shown, 'sbx') !== '')
    expect(rowOf(cluster, 'sbx')).to.match(
      /sbx\s+podman\s+Running\s+\d+ label\s+shop: \S*feat\/cart\s+shop fresh \d+[smh]/,
    )
    tmux('send-keys', '-t', 't', 'Tab')
    await waitFor((shown) => rowOf(shown, 'feat').includes('running 1/1'))
  })

  it('Enter shows the detail pane: the web container with its host port, a recent log line, git status; Enter closes it', async () => {
    tmux('send-keys', '-t', 't', 'j', 'j')
    await waitFor((text) => selected(text) === 'feat')
    tmux('send-keys', '-t', 't', 'Enter')
    const pane = await waitFor((text) => text.includes('recent logs:') && /^ {2}## wt\/feat/m.test(text))
    expect(pane).to.match(/^ {2}web {2}running {2}\d+→8080 {2}\(yardtest-d2-feat/m)
    expect(pane).to.match(/^ {2}box {2}running/m)
    expect(pane).to.match(/^ {2}web \| serving hello feat/m)
    tmux('send-keys', '-t', 't', 'Enter')
    await waitFor((text) => !text.includes('recent logs:'))
    tmux('send-keys', '-t', 't', 'k', 'k')
    await waitFor((text) => selected(text) === 'main')
  })

  it('u brings a stopped worktree up and its row turns running; d brings it down', async () => {
    tmux('send-keys', '-t', 't', 'j', 'j', 'k')
    await waitFor((text) => selected(text) === 'docs')
    tmux('send-keys', '-t', 't', 'u')
    await waitFor((text) => rowOf(text, 'docs').includes('running 1/1'), 60_000)
    tmux('send-keys', '-t', 't', 'd')
    await waitFor((text) => rowOf(text, 'docs').includes('absent') && text.includes('docs is down'), 60_000)
  })

  it('x on a worktree with an uncommitted file shows the refusal with counts; nothing is removed', async () => {
    tmux('send-keys', '-t', 't', 'x')
    const text = await waitFor(/remove docs refused/)
    expect(text).to.match(/1 untracked/)
    // The dashboard never forces: the fix is the shell command that does (cut where the pane ends).
    expect(text.replaceAll('\n', ' ').replaceAll(/\s+/g, ' '))
      .to.include('run `yard worktree remove docs --force`')
      .and.not.include('pass --force')
    tmux('send-keys', '-t', 't', 'r')
    await waitFor((shown) => rowOf(shown, 'docs').includes('0M 1U'))
    expect(readFileSync(path.join(`${repo}-worktrees`, 'docs', 'draft.md'), 'utf8')).to.equal('not committed\n')
  })

  it('resizing to 80×20 and back leaves no garbage, keeps the selection and cuts columns with an ellipsis', async () => {
    tmux('resize-window', '-t', 't', '-x', '80', '-y', '20')
    // The table's own cells cut with an ellipsis (not a "…" the status line may show).
    const narrow = await waitFor(
      (text) => rowOf(text, 'main').includes('…') && selected(text)?.startsWith('do') === true,
    )
    const lines = narrow.split('\n')
    for (const line of lines) expect(line.length).to.be.at.most(80)
    expect(lines.filter((line) => line.startsWith('yard dashboard'))).to.have.length(1)
    tmux('resize-window', '-t', 't', '-x', '120', '-y', '40')
    const wide = await waitFor(
      (text) => rowOf(text, 'main').includes('WEB_PORT=38780') && !rowOf(text, 'main').includes('…'),
    )
    expect(selected(wide)).to.equal('docs')
    expect(wide.split('\n').filter((line) => line.startsWith('yard dashboard'))).to.have.length(1)
  })

  it("e opens a shell in the worktree's box and comes back: ↓ and q still work, the terminal is as before", async () => {
    tmux('send-keys', '-t', 't', 'j')
    await waitFor((text) => selected(text) === 'feat')
    tmux('send-keys', '-t', 't', 'e')
    await waitFor(() => paneFlag('alternate_on') === '0', 30_000)
    await waitFor(/^yard: a shell in the box of feat; type exit to return to the dashboard$/m)
    tmux('send-keys', '-t', 't', 'echo "in=$WORKTREE"', 'Enter')
    await waitFor(/^in=feat\s*$/m)
    tmux('send-keys', '-t', 't', 'exit', 'Enter')
    await waitFor((text) => selected(text) === 'feat' && paneFlag('alternate_on') === '1')
    tmux('send-keys', '-t', 't', 'Down')
    await waitFor((text) => selected(text) === 'fix')
    tmux('send-keys', '-t', 't', 'q')
    await expectRestored(0)
  })

  it('e on a row without a box stays on the screen with a hint; e on a stopped box prints why, waits for Enter and comes back; q exits 0', async () => {
    await start()
    expect(selected(screen())).to.equal('main')
    tmux('send-keys', '-t', 't', 'e')
    await waitFor(/no box for main: run yard box up \(u starts only the stack\)/)
    expect(paneFlag('alternate_on')).to.equal('1')
    tmux('send-keys', '-t', 't', 'j', 'j')
    await waitFor((text) => selected(text) === 'feat')
    const stopped = podmanTry('stop', '--time', '0', `${PREFIX}-feat-box`)
    expect(stopped.status, stopped.stderr).to.equal(0)
    await waitFor((text) => /running 1\/1\s+(stopped|exited)/.test(rowOf(text, 'feat')))
    tmux('send-keys', '-t', 't', 'e')
    await waitFor(
      (text) => paneFlag('alternate_on') === '0' && text.includes('(press Enter to go back to the dashboard)'),
      30_000,
    )
    expect(screen()).to.match(/the box of feat is (stopped|exited)/)
    // It waits for the key: the process neither ends nor comes back on its own.
    await new Promise((resolve) => setTimeout(resolve, 2000))
    expect(screen()).not.to.match(/exit=\d+/)
    expect(paneFlag('alternate_on')).to.equal('0')
    tmux('send-keys', '-t', 't', 'Enter')
    await waitFor((text) => paneFlag('alternate_on') === '1' && selected(text) === 'feat')
    tmux('send-keys', '-t', 't', 'k')
    await waitFor((text) => selected(text) === 'docs')
    tmux('send-keys', '-t', 't', 'q')
    await expectRestored(0)
  })

  it('n asks for a name, refuses a bad one as it is typed, and makes the worktree; its row appears', async () => {
    await start()
    tmux('send-keys', '-t', 't', 'n')
    await waitFor(/new worktree: ▏ ✗ type a name/)
    tmux('send-keys', '-t', 't', '-l', 'Extra')
    await waitFor(/new worktree: Extra▏ ✗ names use only a-z/)
    tmux('send-keys', '-t', 't', 'BSpace', 'BSpace', 'BSpace', 'BSpace', 'BSpace')
    tmux('send-keys', '-t', 't', '-l', 'extra')
    await waitFor(/new worktree: extra▏ ✓ Enter creates worktree extra on branch wt\/extra/)
    tmux('send-keys', '-t', 't', 'Enter')
    // The selection moves onto the row just made.
    await waitFor(
      (text) => /^› extra\s+wt\/extra\s+\d+ hash/m.test(text) && text.includes('created worktree extra on wt/extra'),
      60_000,
    )
    expect(readFileSync(path.join(`${repo}-worktrees`, 'extra', 'yard.toml'), 'utf8')).to.include('yardtest-d2')
  })

  it('b starts the box of a worktree; its row turns running', async () => {
    tmux('send-keys', '-t', 't', 'k')
    await waitFor((text) => selected(text) === 'docs')
    tmux('send-keys', '-t', 't', 'b')
    await waitFor((text) => /running 1\/1\s+0M 1U/.test(rowOf(text, 'docs')), 90_000)
  })

  it('l follows the logs of the selected stack on the normal screen; Ctrl-C comes back to the screen', async () => {
    tmux('send-keys', '-t', 't', 'j', 'j')
    await waitFor((text) => selected(text) === 'feat')
    tmux('send-keys', '-t', 't', 'l')
    await waitFor(
      (text) =>
        paneFlag('alternate_on') === '0' &&
        text.includes('yard: following the logs of feat; Ctrl-C returns to the dashboard') &&
        text.includes('serving hello feat'),
      60_000,
    )
    tmux('send-keys', '-t', 't', 'C-c')
    await waitFor((text) => paneFlag('alternate_on') === '1' && selected(text) === 'feat', 30_000)
  })

  it('x in cluster mode removes the sandbox after y/N; the empty screen says n makes one', async () => {
    tmux('send-keys', '-t', 't', 'Tab')
    await waitFor((text) => selected(text) === 'sbx')
    tmux('send-keys', '-t', 't', 'x')
    await waitFor(/remove sbx\? y\/N$/m, 30_000)
    tmux('send-keys', '-t', 't', 'y')
    await waitFor((text) => text.includes('removed sandbox sbx') && text.includes('no sandboxes: n makes one'), 90_000)
    expect(podmanTry('pod', 'exists', `${PREFIX}-sbx`).status).to.equal(1)
  })

  it('Ctrl-C quits with 130 and leaves the terminal as before', async () => {
    tmux('send-keys', '-t', 't', 'C-c')
    await expectRestored(130)
  })
})
