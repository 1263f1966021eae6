/**
 * Progress of a long command, as a person and a script see it: `yard cache add` in a tmux pane
 * (a bar that advances, then the result line), with stderr not a terminal (step lines only) and
 * with `--quiet` (only the result). The CLI runs as its own process from the sources.
 */
import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {readFileSync, rmSync} from 'node:fs'
import path from 'node:path'

import {cleanupTemp, git, makeRepo, tempDir, writeFile} from '../support/repo.js'
import {openPane, type TmuxPane} from '../support/tmux.js'
import {projectRoot} from '../support/yard.js'

const devJs = path.join(projectRoot, 'bin', 'dev.js')
const quote = (word: string) => `'${word.replaceAll("'", String.raw`'\''`)}'`

describe('progress of yard cache add', function () {
  this.timeout(120_000)
  let big: string
  let small: string
  let caches: string
  let state: string
  let pane: TmuxPane | undefined

  before(() => {
    // Incompressible blobs: git spends seconds compressing and sending them, reporting as it goes.
    big = makeRepo({}, 'big')
    for (let index = 0; index < 60; index++) writeFile(big, `blob-${index}`, randomBytes(200_000).toString('base64'))
    git(big, 'add', '-A')
    git(big, 'commit', '-q', '-m', 'blobs')
    small = makeRepo({}, 'small')
    caches = tempDir('yardtest-progress-caches')
    state = tempDir('yardtest-progress-state')
  })

  afterEach(() => {
    pane?.kill()
    pane = undefined
    rmSync(caches, {recursive: true, force: true})
  })

  after(() => cleanupTemp())

  const env = () => ({...process.env, YARD_STATE_DIR: state, YARD_CACHE_ROOT: caches, CI: 'true'})

  /**
   * Sets the pane's shell up and waits for its cleared prompt: a command typed before `clear` ran
   * is echoed by the terminal at once, then wiped with the screen.
   */
  async function shellReady(into: TmuxPane): Promise<void> {
    into.send(`export YARD_STATE_DIR=${quote(state)} YARD_CACHE_ROOT=${quote(caches)} CI=true PS1='$ '; clear`, 'Enter')
    await into.waitFor(/^\$\s*$/m)
  }

  it('on a terminal (80×24) shows steps and a bar that advances, then the result line', async () => {
    pane = openPane(`yardtest-progress-${process.pid}`, {width: 80, height: 24, command: 'sh'})
    await shellReady(pane)
    pane.send(`${quote(process.execPath)} ${quote(devJs)} cache add ${quote(big)}; echo "exit=$?"`, 'Enter')
    const percentages = new Set<string>()
    const deadline = Date.now() + 100_000
    let screen = ''
    while (Date.now() < deadline) {
      screen = pane.screen()
      for (const match of screen.matchAll(/(\d+)% [█░]+ \d+\/\d+ \w+/g)) percentages.add(match[1])
      if (/^exit=\d+/m.test(screen)) break
      await new Promise((resolve) => setTimeout(resolve, 50))
    }

    expect(screen, screen).to.match(/^exit=0/m)
    expect([...percentages], screen).to.have.length.of.at.least(3)
    // The last frame stays: each step done, then the result line after it.
    const lines = screen.split('\n').map((line) => line.trimEnd())
    const cloned = lines.findIndex((line) => line.startsWith(`✓ cloning ${big} into the cache`))
    const result = lines.findIndex((line) => line.startsWith(`cloned ${big} → `))
    expect(cloned, screen).to.be.greaterThan(-1)
    expect(result, screen).to.be.greaterThan(cloned)
    expect(
      lines.some((line) => /%.*█/.test(line)),
      'the bar is gone once done',
    ).to.equal(false)
  })

  it('with stderr not a terminal prints one line per step, and the result on stdout', () => {
    const run = spawnSync(process.execPath, [devJs, 'cache', 'add', small], {env: env(), encoding: 'utf8'})
    expect(run.status, run.stderr).to.equal(0)
    expect(run.stderr.split('\n').filter(Boolean)).to.deep.equal([
      `cloning ${small} into the cache…`,
      'pinning the cache…',
    ])
    expect(run.stdout).to.match(new RegExp(String.raw`^cloned ${small} → \S+\n$`))
  })

  it('with --quiet prints only the result, with --json only the json', () => {
    const quiet = spawnSync(process.execPath, [devJs, 'cache', 'add', small, '--quiet'], {env: env(), encoding: 'utf8'})
    expect(quiet.status, quiet.stderr).to.equal(0)
    expect(quiet.stderr).to.equal('')
    expect(quiet.stdout).to.match(new RegExp(String.raw`^cloned ${small} → \S+\n$`))
    rmSync(caches, {recursive: true, force: true})
    const json = spawnSync(process.execPath, [devJs, 'cache', 'add', small, '--json'], {env: env(), encoding: 'utf8'})
    expect(json.status, json.stderr).to.equal(0)
    expect(json.stderr).to.equal('')
    expect(JSON.parse(json.stdout)).to.include({action: 'cloned', url: small})
  })

  it('a command off a terminal loads neither Ink nor React (start-up stays light)', () => {
    const record = path.join(tempDir('yardtest-progress-imports'), 'imports.txt')
    const run = spawnSync(
      process.execPath,
      ['--import', path.join(projectRoot, 'test', 'support', 'record-imports.mjs'), devJs, 'cache', 'add', small],
      {env: {...env(), RECORD_IMPORTS_FILE: record}, encoding: 'utf8'},
    )
    expect(run.status, run.stderr).to.equal(0)
    const loaded = readFileSync(record, 'utf8').split('\n')
    expect(
      loaded.some((url) => url.includes('/src/commands/cache/add.ts')),
      'the command was recorded',
    ).to.equal(true)
    expect(loaded.filter((url) => /\/node_modules\/(ink|react)\//.test(url))).to.deep.equal([])
  })

  it('--quiet on a terminal shows only the result', async () => {
    // Wide enough that the command and the result are one line each.
    pane = openPane(`yardtest-progress-${process.pid}`, {width: 250, height: 24, command: 'sh'})
    await shellReady(pane)
    pane.send(
      `${quote(process.execPath)} ${quote(devJs)} cache add --quiet ${quote(small)} 2>&1; echo "exit=$?"`,
      'Enter',
    )
    const screen = await pane.waitFor(/^exit=\d+/m)
    const lines = screen
      .split('\n')
      .map((line) => line.trimEnd())
      .filter(Boolean)
    // Between the command line and its exit: the result alone.
    const output = lines.slice(1, lines.indexOf('exit=0'))
    expect(output, screen).to.have.length(1)
    expect(output[0], screen).to.match(new RegExp(String.raw`^cloned ${small} → ${caches}/small-\w+$`))
  })
})
