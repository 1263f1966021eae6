import {expect} from 'chai'

import {podmanEnv} from '../support/podman.js'
import {addWorktree, cleanupTemp, makeRepo} from '../support/repo.js'
import {yard} from '../support/yard.js'

const COMPOSE = 'services:\n  web:\n    image: localhost/yardtest-g-none:1\n    ports: ["${APP_PORT}:80"]\n'

/**
 * Every command that targets a checkout, as [words before the name, words after it]. Each runs
 * with NAME, -w NAME and --worktree NAME; the three must give the same exit code and output.
 * Commands whose words after the name would start something run with --dry-run or on a
 * checkout that does not exist (their refusal is then what must agree).
 */
const TARGETING: Array<{command: string[]; rest?: string[]; name?: string; silent?: boolean}> = [
  {command: ['up'], rest: ['--dry-run', '--json']},
  {command: ['down'], rest: ['--json']},
  {command: ['ps'], rest: ['--json'], silent: true},
  {command: ['nuke'], rest: ['--dry-run', '--json']},
  {command: ['env'], rest: ['--json']},
  {command: ['config'], rest: ['--json']},
  {command: ['ports'], rest: ['--json']},
  {command: ['box', 'up'], name: 'ghost'},
  {command: ['box', 'down'], rest: ['--json']},
  {command: ['box', 'ps'], rest: ['--json'], silent: true},
  {command: ['exec'], rest: ['--', 'true'], name: 'ghost'},
  {command: ['shell'], name: 'ghost'},
  {command: ['worktree', 'remove'], rest: ['--dry-run', '--json']},
]

describe('one grammar for every command that targets a checkout', () => {
  afterEach(cleanupTemp)

  it('takes NAME, -w NAME and --worktree NAME alike on every targeting command', async function () {
    this.timeout(120_000)
    const repo = makeRepo({'yard.toml': '[ports]\nAPP_PORT = 3000\n', 'compose.yaml': COMPOSE}, 'yardtest-g')
    addWorktree(repo, 'feat')
    const env = podmanEnv()
    for (const {command, rest = [], name = 'feat', silent} of TARGETING) {
      const runs = []
      for (const form of [[name], ['-w', name], ['--worktree', name]])
        runs.push(await yard([...command, ...form, ...rest], {cwd: repo, env}))
      const label = command.join(' ')
      expect(runs[0].exitCode, `${label}: ${runs[0].stderr}`).to.be.oneOf(name === 'feat' ? [0] : [2])
      if (!silent) expect(runs[0].stdout + runs[0].stderr, label).to.contain(name)
      for (const run of runs.slice(1))
        expect({code: run.exitCode, stdout: run.stdout, stderr: run.stderr}, label).to.deep.equal({
          code: runs[0].exitCode,
          stdout: runs[0].stdout,
          stderr: runs[0].stderr,
        })
    }

    // The positional name is the --worktree target, not the current directory's checkout.
    expect((await yard(['ports', 'feat', '--json'], {cwd: repo, env})).json).to.include({
      worktree: 'feat',
      project: 'yardtest-g-feat',
    })
  })

  it('refuses NAME and --worktree naming two different checkouts (exit 2)', async () => {
    const repo = makeRepo()
    const run = await yard(['ports', 'feat', '--worktree', 'fix'], {cwd: repo})
    expect(run.exitCode).to.equal(2)
    expect(run.stderr).to.contain('both feat and --worktree fix name a checkout')
    const all = await yard(['ports', 'feat', '--all'], {cwd: repo})
    expect(all.exitCode).to.equal(2)
    expect(all.stderr).to.contain('feat names a worktree, but --all was given too')
  })

  it("runs every topic's ls / rm alias and the wt topic", async () => {
    const repo = makeRepo({}, 'yardtest-g')
    addWorktree(repo, 'feat')
    const env = {...podmanEnv(), YARD_CACHE_ROOT: undefined}
    for (const [alias, command] of [
      [
        ['worktree', 'ls', '--json'],
        ['worktree', 'list', '--json'],
      ],
      [
        ['wt', 'ls', '--json'],
        ['worktree', 'list', '--json'],
      ],
      [
        ['wt', 'list', '--json'],
        ['worktree', 'list', '--json'],
      ],
      [
        ['wt', 'rm', 'feat', '--dry-run', '--json'],
        ['worktree', 'remove', 'feat', '--dry-run', '--json'],
      ],
      [
        ['worktree', 'rm', 'feat', '--dry-run', '--json'],
        ['worktree', 'remove', 'feat', '--dry-run', '--json'],
      ],
      [
        ['cache', 'ls', '--json'],
        ['cache', 'list', '--json'],
      ],
      [
        ['plugins', 'ls', '--json'],
        ['plugins', '--json'],
      ],
      [
        ['plugins', 'list', '--json'],
        ['plugins', '--json'],
      ],
    ]) {
      const run = await yard(alias, {cwd: repo, env})
      expect(run.exitCode, `${alias.join(' ')}: ${run.stderr}`).to.equal(0)
      // Plugin rows carry the loading command's directory: compare what they list.
      const listed = (json: unknown) =>
        alias[0] === 'plugins' ? (json as Array<{name: string}>).map((row) => row.name) : json
      expect(listed(run.json), alias.join(' ')).to.deep.equal(listed((await yard(command, {cwd: repo, env})).json))
    }

    // Removal aliases: each names its command (a missing target gives the command's own refusal, not 127).
    for (const [alias, message] of [
      [['sandbox', 'remove', 'nosuch', '--dry-run', '--runtime', 'podman'], 'nosuch'],
      [['cache', 'rm', '/nonexistent/repo', '--dry-run'], '/nonexistent/repo'],
      [['machine', 'remove', '--help'], 'yard machine remove'],
      [['plugins', 'rm', '--help'], 'yard plugins rm'],
      [['box', 'ls', '--help'], 'yard box ls'],
      [['sandbox', 'ls', '--help'], 'yard sandbox ls'],
      [['wt', 'add', '--help'], 'yard wt add'],
      [['wt', 'trust', 'nosuch', '--untrusted'], 'nosuch'],
      [['wt', 'prune', '--dry-run'], 'nothing to prune'],
    ] as const) {
      const run = await yard([...alias], {cwd: repo, env})
      expect(run.exitCode, alias.join(' ')).not.to.equal(127)
      expect(run.stdout + run.stderr, alias.join(' '))
        .to.contain(message)
        .and.not.contain('is not a yard command')
    }
  })
})
