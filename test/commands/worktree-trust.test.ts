/**
 * Untrusted worktrees on the Linux `native` machine (docs/worktrees.md, "Untrusted worktrees"),
 * on real podman: no VM, so the box mounts exactly the worktree read-write and the git common dir
 * read-only, and a compose bind outside the worktree (a symbolic link included) is refused before
 * anything starts; `yard worktree trust` flips the record, refusing while its stack still runs
 * with the shared reach; a failed `worktree add --untrusted` takes its record back.
 */
import {expect} from 'chai'
import {chmodSync, readFileSync, symlinkSync} from 'node:fs'
import path from 'node:path'

import {ensureBusyboxImage, podman, podmanEnv, projectObjects, sweep, webService} from '../support/podman.js'
import {cleanupTemp, makeRepo, writeFile} from '../support/repo.js'
import {yard} from '../support/yard.js'

const PREFIX = 'yardtest-n'
const IMAGE = 'localhost/yardtest-n-busybox:1'
const WEB_PORT = 38_600

const web = (extra: string[] = []) =>
  [
    'services:',
    '  web:',
    webService('native', '${WEB_PORT}:8080').replace(/image: .*/, `image: ${IMAGE}`),
    ...extra,
    '',
  ].join('\n')
const toml = (n: number) =>
  `[project]\nprefix = "${PREFIX}${n}"\n\n[machine]\nbackend = "native"\n\n[ports]\nWEB_PORT = ${WEB_PORT + n * 100}\n\n[box]\nimage = "${IMAGE}"\n`
const localToml = (repo: string) => readFileSync(path.join(repo, 'yard.local.toml'), 'utf8')

describe('untrusted worktrees on the native machine, and yard worktree trust', function () {
  this.timeout(180_000)

  before(async () => {
    sweep(PREFIX)
    await ensureBusyboxImage(IMAGE)
  })

  after(() => {
    sweep(PREFIX)
    cleanupTemp()
  })

  it('the box mounts exactly the worktree rw and the common dir ro; binds outside the worktree (through a symbolic link too), privileges, host namespaces and outside env_files are refused (exit 3) before anything starts', async () => {
    const repo = makeRepo({
      'yard.toml': toml(1),
      'compose.yaml': web(['    volumes:', '      - ./www:/srv/www']),
      '.gitignore': 'yard.local.toml\n',
    })
    const env = podmanEnv()
    const run = async (...args: string[]) => yard(args, {cwd: repo, env})
    const added = await run('worktree', 'add', 'pr-1', '--untrusted', '--no-fetch')
    expect(added.exitCode, added.stderr).to.equal(0)
    // The native backend makes no machine: the output says where it runs instead.
    expect(added.stdout).to.include("untrusted: its stack and box run on this host's podman")
    expect(added.stdout).to.not.include(`machine yard-${PREFIX}1-pr-1`)
    const worktree = path.join(`${repo}-worktrees`, 'pr-1')
    const common = path.join(repo, '.git')

    const box = await run('box', 'up', '--worktree', 'pr-1')
    expect(box.exitCode, box.stderr).to.equal(0)
    const mounts = JSON.parse(podman('inspect', '--format', '{{json .Mounts}}', `${PREFIX}1-pr-1-box`)) as Array<{
      Source: string
      RW: boolean
    }>
    expect(mounts.map((mount) => [mount.Source, mount.RW]).sort()).to.deep.equal(
      [
        [common, false],
        [worktree, true],
      ].sort(),
    )
    const exec = await run('exec', 'pr-1', '--', 'sh', '-c', `echo x >> ${path.join(common, 'hooks', 'pre-commit')}`)
    expect(exec.exitCode).to.not.equal(0)
    expect(exec.stderr).to.include("note: worktree pr-1 is untrusted: its box runs on the host's podman")

    // A bind inside the worktree is fine.
    const up = await run('up', '--worktree', 'pr-1')
    expect(up.exitCode, up.stderr).to.equal(0)
    expect(projectObjects(`${PREFIX}1-pr-1`).containers).to.have.length(1)
    expect((await run('down', '--worktree', 'pr-1')).exitCode).to.equal(0)

    // A host path, and a link in the worktree that points at one.
    writeFile(worktree, 'compose.yaml', web(['    volumes:', '      - /etc:/host-etc:ro']))
    const host = await run('up', '--worktree', 'pr-1')
    expect(host.exitCode, host.stderr).to.equal(3)
    expect(host.stderr).to.include(
      'worktree pr-1 is untrusted, and its stack reaches beyond it: service web binds /etc',
    )
    symlinkSync('/root', path.join(worktree, 'home'))
    writeFile(worktree, 'compose.yaml', web(['    volumes:', '      - ./home:/r']))
    const link = await run('up', '--worktree', 'pr-1')
    expect(link.exitCode, link.stderr).to.equal(3)
    expect(link.stderr).to.include(`its stack reaches beyond it: service web binds ${path.join(worktree, 'home')}`)
    // Privileges and host namespaces, a volume binding a host path through driver options, and an
    // env_file yard would read on the host.
    writeFile(worktree, 'compose.yaml', web(['    env_file: [/etc/os-release]']))
    const envFile = await run('up', '--worktree', 'pr-1')
    expect(envFile.exitCode, envFile.stderr).to.equal(3)
    expect(envFile.stderr).to.include('service web reads env_file /etc/os-release')
    writeFile(
      worktree,
      'compose.yaml',
      web([
        '    privileged: true',
        '    pid: host',
        '    volumes:',
        '      - data:/d',
        'volumes:',
        '  data:',
        '    driver_opts: {type: none, o: bind, device: /root}',
      ]),
    )
    const grants = await run('up', '--worktree', 'pr-1')
    expect(grants.exitCode, grants.stderr).to.equal(3)
    for (const finding of [
      'service web is privileged (privileged: true)',
      'service web sets pid: "host"',
      'volume data sets driver_opts',
    ])
      expect(grants.stderr).to.include(finding)
    expect(projectObjects(`${PREFIX}1-pr-1`).containers).to.deep.equal([])
    // A trusted worktree keeps today's rule: such a bind is a warning, not a refusal.
    expect((await run('worktree', 'add', 'feat', '--no-fetch')).exitCode).to.equal(0)
    writeFile(
      path.join(`${repo}-worktrees`, 'feat'),
      'compose.yaml',
      web(['    volumes:', '      - /etc/hostname:/h:ro']),
    )
    const trusted = await run('up', '--worktree', 'feat')
    expect(trusted.exitCode, trusted.stderr).to.equal(0)
    expect((await run('down', '--worktree', 'feat')).exitCode).to.equal(0)
  })

  it('worktree trust flips the record; --untrusted is refused (exit 3) while its box runs with the shared mounts; unknown worktrees and missing flags are exit 2', async () => {
    const repo = makeRepo({'yard.toml': toml(2), '.gitignore': 'yard.local.toml\n'})
    const env = podmanEnv()
    const run = async (...args: string[]) => yard(args, {cwd: repo, env})
    expect((await run('worktree', 'add', 'pr-2', '--no-fetch')).exitCode).to.equal(0)
    expect((await run('box', 'up', '--worktree', 'pr-2')).exitCode).to.equal(0)

    const refused = await run('worktree', 'trust', 'pr-2', '--untrusted')
    expect(refused.exitCode, refused.stderr).to.equal(3)
    expect(refused.stderr).to.include(`${PREFIX}2-pr-2-box`)
    expect(refused.stderr).to.include('yard down --worktree pr-2 && yard box down --worktree pr-2')
    expect((await run('box', 'down', '--worktree', 'pr-2')).exitCode).to.equal(0)

    const untrusted = await run('worktree', 'trust', 'pr-2', '--untrusted')
    expect(untrusted.exitCode, untrusted.stderr).to.equal(0)
    expect(untrusted.stdout).to.include(
      "worktree pr-2 is now untrusted: its stack and box run on this host's podman (the native backend has no machine to give it)",
    )
    expect(localToml(repo)).to.include('[worktrees.pr-2]\ntrust = "untrusted"\n')
    const list = await run('worktree', 'list', '--json')
    expect((list.json as Array<{name: string; trust: string}>).find((row) => row.name === 'pr-2')?.trust).to.equal(
      'untrusted',
    )
    const text = await run('worktree', 'list')
    expect(text.stdout).to.match(/^pr-2 .*\buntrusted\b/m)
    const snapshot = await run('dashboard', '--json')
    expect(snapshot.exitCode, snapshot.stderr).to.equal(0)
    expect(
      (snapshot.json as {rows: Array<{name: string; trust: string}>}).rows.map((row) => [row.name, row.trust]),
    ).to.deep.equal([
      ['main', 'trusted'],
      ['pr-2', 'untrusted'],
    ])
    const screen = await run('dashboard')
    expect(screen.stdout).to.include('pr-2 !untrusted')
    const ports = await run('ports', '--worktree', 'pr-2', '--json')
    expect((ports.json as {trust: string}).trust).to.equal('untrusted')
    expect((await run('ports', '--all')).stdout).to.match(
      /^pr-2 \(yardtest-n2-pr-2\) offset \d+ \[hash\] {2}untrusted/m,
    )

    expect((await run('worktree', 'trust', 'pr-2', '--untrusted')).stdout).to.include('is already untrusted')
    const trusted = await run('worktree', 'trust', 'pr-2', '--trusted')
    expect(trusted.exitCode, trusted.stderr).to.equal(0)
    expect(localToml(repo)).to.not.include('pr-2')

    expect((await run('worktree', 'trust', 'nosuch', '--untrusted')).exitCode).to.equal(2)
    expect((await run('worktree', 'trust', 'pr-2')).exitCode).to.equal(2)
    expect((await run('machine', 'rm', '--worktree', 'pr-2', '--yes')).exitCode).to.equal(2)
  })

  it('a worktree add --untrusted that fails takes its record back', async () => {
    const repo = makeRepo({'yard.toml': toml(3), '.gitignore': 'yard.local.toml\n'})
    writeFile(repo, 'yard.local.toml', '# personal\n')
    // git worktree add fails when its post-checkout hook does: after the record was written.
    writeFile(repo, '.git/hooks/post-checkout', '#!/bin/sh\nexit 1\n')
    chmodSync(path.join(repo, '.git', 'hooks', 'post-checkout'), 0o755)
    const add = await yard(['worktree', 'add', 'pr-3', '--untrusted', '--no-fetch'], {cwd: repo, env: podmanEnv()})
    expect(add.exitCode, add.stderr).to.not.equal(0)
    expect(add.stderr).to.include('deleted the untrusted record of pr-3')
    expect(localToml(repo)).to.equal('# personal\n')
  })
})
