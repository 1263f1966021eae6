/**
 * Shell completion of yard's own values (`yard completion bash|zsh` → `yard complete`): in a real
 * bash in tmux, `yard exec <TAB><TAB>` lists main, the worktrees and SANDBOX/BRANCH of a podman
 * sandbox; `yard complete` answers the words of each kind.
 */
import {expect} from 'chai'
import {chmodSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {makeUpstream} from '../plugins/k8s-sandbox/support.js'
import {ensureDefaultImage, podmanEnv, sweep} from '../support/podman.js'
import {addWorktree, cleanupTemp, makeRepo, tempDir} from '../support/repo.js'
import {openPane} from '../support/tmux.js'
import {projectRoot, yard} from '../support/yard.js'

const PREFIX = 'yardtest-c1'
const SOCKET = `${PREFIX}-tmux`

describe("shell completion of worktrees, sandboxes, services and cache urls; sandbox list's unsaved marks", function () {
  this.timeout(120_000)
  let repo: string
  let env: Record<string, string | undefined>
  let upstream: string
  const complete = async (...words: string[]) =>
    (await yard(['complete', '--', ...words], {cwd: repo, env})).stdout.split('\n').filter(Boolean)

  before(async () => {
    sweep(PREFIX)
    await ensureDefaultImage()
    repo = makeRepo({
      'yard.toml': `[project]\nprefix = "${PREFIX}"\n`,
      'compose.yaml': 'services:\n  web:\n    image: localhost/none:1\n  worker:\n    image: localhost/none:1\n',
    })
    addWorktree(repo, 'feat')
    addWorktree(repo, 'fix')
    env = {...podmanEnv(), YARD_CACHE_ROOT: path.join(tempDir('caches'), 'root')}
    upstream = makeUpstream('shop')
    const created = await yard(
      ['sandbox', 'create', 'sbx', '--runtime', 'podman', '--repo', upstream, '--branch', 'feat/cart'],
      {cwd: repo, env},
    )
    expect(created.exitCode, created.stderr).to.equal(0)
  })

  after(() => {
    sweep(PREFIX)
    cleanupTemp()
  })

  it('yard complete: commands, topics and aliases, flags, checkouts, sandboxes, SANDBOX/BRANCH, services, cache urls', async () => {
    expect(await complete('wo')).to.deep.equal(['worktree'])
    expect(await complete('wt', '')).to.include.members(['add', 'list', 'ls', 'remove', 'rm', 'trust'])
    expect(await complete('up', '--d')).to.deep.equal(['--dry-run'])
    expect(await complete('up', '')).to.deep.equal(['main', 'feat', 'fix'])
    expect(await complete('down', '-w', 'f')).to.deep.equal(['feat', 'fix'])
    expect(await complete('up', 'feat', '')).to.deep.equal([])
    expect(await complete('worktree', 'rm', '')).to.deep.equal(['feat', 'fix'])
    // sbx/main: the default branch's worktree every slot has beside the attached one.
    expect(await complete('exec', '')).to.deep.equal(['main', 'feat', 'fix', 'sbx', 'sbx/feat/cart', 'sbx/main'])
    expect(await complete('exec', 'sbx/f')).to.deep.equal(['sbx/feat/cart'])
    expect(await complete('exec', 'feat', '--', '')).to.deep.equal([])
    expect(await complete('sandbox', 'rm', '')).to.deep.equal(['sbx'])
    expect(await complete('sandbox', 'pull', '')).to.deep.equal(['sbx', 'sbx/feat/cart', 'sbx/main'])
    expect(await complete('worktree', 'trust', '')).to.deep.equal(['feat', 'fix'])
    expect(await complete('exec', '--sandbox', '')).to.deep.equal(['sbx'])
    expect(await complete('logs', '')).to.deep.equal(['web', 'worker'])
    expect(await complete('logs', 'w')).to.deep.equal(['web', 'worker'])
    // A service given already is not offered again.
    expect(await complete('logs', 'web', 'w')).to.deep.equal(['worker'])
    expect(await complete('logs', 'web', '')).to.deep.equal(['worker'])
    expect(await complete('cache', 'fetch', '')).to.deep.equal([upstream])
    const zsh = await yard(['completion', 'zsh'], {cwd: repo, env})
    expect(zsh.stdout)
      .to.contain('compdef _yard_complete yard')
      .and.contain('yard complete -- "${(@)words[2,CURRENT]}"')
  })

  it('sandbox list marks a worktree with unsaved work (what rm refuses on), and only that one', async () => {
    const clean = await yard(['sandbox', 'list'], {cwd: repo, env})
    expect(clean.exitCode, clean.stderr).to.equal(0)
    expect(clean.stdout).not.to.contain('unsaved')
    const wrote = await yard(['exec', 'sbx/feat/cart', '--', 'sh', '-c', 'echo draft > notes.txt'], {cwd: repo, env})
    expect(wrote.exitCode, wrote.stderr).to.equal(0)
    const listed = await yard(['sandbox', 'list'], {cwd: repo, env})
    expect(listed.stdout).to.match(/^ +\S+ feat\/cart {2}unsaved: modified or untracked files$/m)
    expect(listed.stdout).to.match(/^ +\S+ main$/m)
    const json = (await yard(['sandbox', 'list', '--json'], {cwd: repo, env})).json as Array<{
      repos: Array<{worktrees: Array<{branch: string; unsaved: boolean}>}>
    }>
    expect(json[0].repos[0].worktrees.map((row) => [row.branch, row.unsaved]).sort()).to.deep.equal([
      ['feat/cart', true],
      ['main', false],
    ])
    expect((await yard(['exec', 'sbx/feat/cart', '--', 'rm', 'notes.txt'], {cwd: repo, env})).exitCode).to.equal(0)
  })

  it('bash: yard exec <TAB><TAB> lists the checkouts and SANDBOX/BRANCH', async () => {
    // `yard` on PATH runs this checkout's sources, as `npm link` would run its build.
    const bin = tempDir('bin')
    writeFileSync(
      path.join(bin, 'yard'),
      `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(projectRoot, 'bin', 'dev.js'))} "$@"\n`,
    )
    chmodSync(path.join(bin, 'yard'), 0o755)
    // env(1) takes its -u options before the assignments.
    const entries = Object.entries(env)
    const exports = [
      ...entries.filter(([, value]) => value === undefined).map(([key]) => `-u ${key}`),
      ...entries.filter(([, value]) => value !== undefined).map(([key, value]) => `${key}=${JSON.stringify(value)}`),
    ].join(' ')
    const line = `cd ${JSON.stringify(repo)} && env ${exports} PATH=${JSON.stringify(`${bin}:${process.env.PATH}`)} PS1='$ ' bash --norc --noprofile`
    const pane = openPane(SOCKET, {width: 120, height: 30, command: line})
    try {
      pane.send('eval "$(yard completion bash)"', 'Enter')
      pane.send('yard exec ', 'Tab', 'Tab')
      const screen = await pane.waitFor(/sbx\/feat\/cart/, 30_000)
      // bash lists the candidates sorted, in columns, under the line.
      const listing = screen.split('\n').find((line) => line.includes('sbx/feat/cart')) ?? ''
      expect(listing.trim().split(/\s+/)).to.deep.equal(['feat', 'fix', 'main', 'sbx', 'sbx/feat/cart', 'sbx/main'])
      // One more letter narrows it to one, completed in place.
      pane.send('f', 'i', 'Tab')
      // (capture-pane drops the space completion adds after it.)
      expect(await pane.waitFor(/^\$ yard exec fix$/m, 30_000)).to.match(/^\$ yard exec fix$/m)
    } finally {
      pane.kill()
    }
  })
})
