/**
 * What an untrusted worktree's own files cannot make yard do on the host (docs/worktrees.md,
 * "Untrusted worktrees"), checked with `yard up --dry-run`, which renders and checks everything
 * `up` would and starts nothing: its yard.toml is not read, its compose project reads no file
 * outside it and interpolates nothing from the host's environment, and every truthy privilege
 * or outside namespace is refused.
 */
import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {cleanupTemp, git, makeRepo, tempDir, writeFile} from '../support/repo.js'
import {yard} from '../support/yard.js'

const toml = '[project]\nprefix = "yardtest-uc"\n\n[machine]\nbackend = "native"\n\n[ports]\nWEB_PORT = 38900\n'
const web = (extra: string[] = []) =>
  ['services:', '  web:', '    image: localhost/yardtest-uc:1', '    ports: ["${WEB_PORT}:80"]', ...extra, ''].join(
    '\n',
  )

describe('an untrusted worktree reaches nothing through yard on the host', function () {
  this.timeout(60_000)
  let repo: string
  let worktree: string
  let secret: string
  const env = {YARD_STATE_DIR: '', QA_HOST_TOKEN: 'ghp_from_the_host'}
  const run = async (...args: string[]) => yard(args, {cwd: repo, env})

  before(async () => {
    env.YARD_STATE_DIR = tempDir('uc-state')
    repo = makeRepo({'yard.toml': toml, 'compose.yaml': web(), '.gitignore': 'yard.local.toml\n'})
    const added = await run('worktree', 'add', 'pr-1', '--untrusted', '--no-fetch')
    expect(added.exitCode, added.stderr).to.equal(0)
    worktree = path.join(`${repo}-worktrees`, 'pr-1')
    secret = path.join(tempDir('uc-outside'), 'secret.env')
    writeFileSync(secret, 'SECRET=hunter2\n')
  })

  after(cleanupTemp)

  const dryRun = async (compose: string[]) => {
    writeFile(worktree, 'compose.yaml', web(compose))
    const result = await run('up', '--worktree', 'pr-1', '--dry-run', '--json')
    // With --json a refusal is the JSON's error; said is everything the user sees.
    return {...result, said: `${result.stdout}\n${result.stderr}`}
  }

  it('refuses privileged set to anything but false, and namespaces outside the project', async () => {
    for (const value of ['1', 'yes', '"on"', '2']) {
      const result = await dryRun([`    privileged: ${value}`])
      expect(result.exitCode, `privileged: ${value}: ${result.stderr}`).to.equal(3)
      expect(result.said).to.include('service web is privileged')
    }

    expect((await dryRun(['    privileged: false'])).exitCode).to.equal(0)
    for (const [key, value] of [
      ['network_mode', 'ns:/proc/1/ns/net'],
      ['pid', 'host'],
      ['ipc', 'container:other'],
      ['network_mode', '/run/netns/x'],
    ]) {
      const result = await dryRun([`    ${key}: "${value}"`])
      expect(result.exitCode, `${key}: ${value}: ${result.stderr}`).to.equal(3)
      expect(result.said).to.include(String.raw`service web sets ${key}: \"${value}\"`)
    }

    expect((await dryRun(['    network_mode: bridge'])).exitCode).to.equal(0)
  })

  it('refuses a Dockerfile outside the worktree, however the path reaches it', async () => {
    for (const dockerfile of ['/etc/passwd', '../../outside/Dockerfile', 'sub/../../../Dockerfile']) {
      const result = await dryRun(['    build:', '      context: .', `      dockerfile: ${dockerfile}`])
      expect(result.exitCode, `dockerfile: ${dockerfile}: ${result.stderr}`).to.equal(3)
      expect(result.said).to.include(`service web builds with the Dockerfile ${dockerfile}`)
    }

    const inside = await dryRun(['    build:', '      context: .', '      dockerfile: docker/Dockerfile.dev'])
    expect(inside.exitCode, inside.stderr).to.equal(0)
  })

  it("refuses a default build file that links outside, a log file, an init binary, the host engine's secrets, the host's loopback", async () => {
    const outside = path.join(path.dirname(secret), 'Containerfile')
    writeFileSync(outside, 'FROM scratch\n')
    mkdirSync(path.join(worktree, 'ctx'), {recursive: true})
    symlinkSync(outside, path.join(worktree, 'ctx', 'Containerfile'))
    const linked = await dryRun(['    build: ./ctx'])
    expect(linked.exitCode, linked.said).to.equal(3)
    expect(linked.said).to.include(`builds with ${path.join(worktree, 'ctx', 'Containerfile')}, a link to ${outside}`)
    rmSync(path.join(worktree, 'ctx', 'Containerfile'))
    writeFileSync(path.join(worktree, 'ctx', 'Containerfile'), 'FROM scratch\n')
    expect((await dryRun(['    build: ./ctx'])).exitCode).to.equal(0)

    for (const [lines, said] of [
      [['    logging: {driver: k8s-file, options: {path: /root/.bashrc}}'], 'service web writes its log to'],
      [['    logging: {driver: k8s-file, options: {PATH: /root/.bashrc}}'], 'service web writes its log to'],
      [['    logging: {driver: k8s-file, options: {Path: "/x/${WEB_PORT}"}}'], 'service web writes its log to'],
      [['    logging: {driver: k8s-file, options: {"path=/root/.bashrc": x}}'], 'service web writes its log to'],
      [['    init: true', '    init-path: /usr/bin/id'], 'service web runs a host file as its init'],
      [['    secrets: [token]', 'secrets:', '  token: {external: true}'], 'secret token is external'],
      [['    secrets: [token]', 'secrets:', '  token: {environment: GITHUB_TOKEN}'], 'reads the environment variable'],
      [['    network_mode: "slirp4netns:allow_host_loopback=true"'], 'sets network_mode'],
      [['    network_mode: "pasta:-T,3000"'], 'sets network_mode'],
      [['    pod: other-project-pod'], 'service web joins the pod'],
    ] as Array<[string[], string]>) {
      const result = await dryRun(lines)
      expect(result.exitCode, `${lines.join(' ')}: ${result.said}`).to.equal(3)
      expect(result.said).to.include(said)
    }

    for (const mode of ['slirp4netns', 'slirp4netns:mtu=1500,allow_host_loopback=false', 'pasta'])
      expect((await dryRun([`    network_mode: "${mode}"`])).exitCode, mode).to.equal(0)
    expect((await dryRun(['    logging: {driver: k8s-file, options: {max-size: 10m}}'])).exitCode).to.equal(0)
  })

  it('reads no file outside the worktree: an interpolated env_file, an extends file, an include', async () => {
    const interpolated = await dryRun([`    env_file: "\${NOPE:-${secret}}"`])
    expect(interpolated.exitCode, interpolated.stderr).to.equal(3)
    expect(interpolated.said).to.include(`reads the env file ${secret}`)
    expect(interpolated.stdout + interpolated.stderr).not.to.include('hunter2')
    writeFileSync(
      path.join(path.dirname(secret), 'base.yaml'),
      `services:\n  base:\n    image: x\n    env_file: [${secret}]\n`,
    )
    const extended = await dryRun([
      `    extends: {file: ${path.join(path.dirname(secret), 'base.yaml')}, service: base}`,
    ])
    expect(extended.exitCode, extended.said).to.equal(3)
    expect(extended.said).to.include('reads the compose file').and.include('base.yaml')
    expect(extended.stdout + extended.stderr).not.to.include('hunter2')
    // A path outside that does not exist is refused the same way: no answer tells what the host has.
    const missing = path.join(path.dirname(secret), 'no-such', 'x.env')
    for (const lines of [[`    env_file: [${missing}]`], [`    env_file: [${secret}]`]]) {
      const refused = await dryRun(lines)
      expect(refused.exitCode, refused.said).to.equal(3)
      expect(refused.said).to.include('outside')
    }
  })

  it("interpolates from yard's variables only, never the host's environment", async () => {
    const result = await dryRun(['    environment:', '      LEAK: ${QA_HOST_TOKEN}'])
    expect(result.exitCode, result.stderr).to.equal(0)
    expect(result.stdout).not.to.include('ghp_from_the_host')
    expect(result.json).to.have.nested.property('compose.services.web.environment.LEAK', '')
    // A trusted checkout still reads the shell, as compose does.
    writeFile(repo, 'compose.yaml', web(['    environment:', '      LEAK: ${QA_HOST_TOKEN}']))
    const main = await run('up', '--dry-run', '--json')
    expect(main.json).to.have.nested.property('compose.services.web.environment.LEAK', 'ghp_from_the_host')
    writeFile(repo, 'compose.yaml', web())
  })

  it("does not read the worktree's yard.toml: no backend, sharing or trust table of its own", async () => {
    writeFile(
      worktree,
      'yard.toml',
      `${toml}\n[stack]\nbackend = "procfile-stack"\nexternal = "shared"\n\n[worktrees.pr-1]\ntrust = "trusted"\n`,
    )
    const result = await dryRun(['    volumes: [shared:/data]', 'volumes:', '  shared:', '    external: true'])
    expect(result.exitCode, result.stderr).to.equal(3)
    expect(result.stderr).to.include('is not read').and.include('pr-1 is untrusted')
    expect(result.said).to.include('external')
    const list = await run('worktree', 'list', '--json')
    expect(list.exitCode, list.stderr).to.equal(0)
    expect((list.json as Array<{name: string; trust: string}>).find((row) => row.name === 'pr-1')).to.include({
      trust: 'untrusted',
    })
    writeFile(worktree, 'yard.toml', toml)
  })

  it("runs no git where the box re-pointed the worktree's .git, and says how to put it back", async () => {
    const marker = path.join(tempDir('uc-marker'), 'ran')
    const link = path.join(worktree, '.git')
    const original = readFileSync(link, 'utf8')
    mkdirSync(path.join(worktree, '.evil'), {recursive: true})
    writeFileSync(path.join(worktree, '.evil', 'HEAD'), 'ref: refs/heads/main\n')
    writeFileSync(
      path.join(worktree, '.evil', 'config'),
      `[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "touch ${marker}"\n`,
    )
    mkdirSync(path.join(worktree, '.evil', 'objects'), {recursive: true})
    mkdirSync(path.join(worktree, '.evil', 'refs'), {recursive: true})
    writeFileSync(link, 'gitdir: .evil\n')
    try {
      const list = await run('worktree', 'list', '--json')
      expect(list.exitCode, list.stderr).to.equal(0)
      expect(list.stderr).to.include('the git link of untrusted worktree pr-1 was changed')
      expect((list.json as Array<{name: string; dirty: unknown}>).find((row) => row.name === 'pr-1')).to.include({
        dirty: null,
      })
      const remove = await run('worktree', 'remove', 'pr-1', '--dry-run')
      expect(remove.exitCode, remove.stderr).to.equal(3)
      expect(remove.stderr).to.include('the git link of untrusted worktree pr-1 was changed')
      const up = await run('up', 'pr-1', '--dry-run')
      expect(up.exitCode, up.stderr).to.equal(3)
      // Marked trusted again, host git would obey that directory's config.
      const trusted = await run('worktree', 'trust', 'pr-1', '--trusted')
      expect(trusted.exitCode, trusted.stderr).to.equal(3)
      expect(trusted.stderr).to.include('the git link of untrusted worktree pr-1 was changed')
      expect(existsSync(marker), 'git ran with the config the box wrote').to.equal(false)
      // The printed fix puts the link back.
      const fix = /put the link back: (.*)$/m.exec(remove.stderr)?.[1]
      expect(fix, remove.stderr).to.be.a('string')
      expect(spawnSync('sh', ['-c', fix!]).status).to.equal(0)
      expect(readFileSync(link, 'utf8')).to.equal(original)
    } finally {
      writeFileSync(link, original)
    }

    const again = await run('worktree', 'list', '--json')
    expect(again.stderr).not.to.include('was changed')
    expect(existsSync(marker)).to.equal(false)
  })

  it('run from inside the worktree, takes the repository recorded for it, never a .git the box planted there', async () => {
    const marker = path.join(tempDir('uc-inside-marker'), 'ran')
    const link = path.join(worktree, '.git')
    const original = readFileSync(link, 'utf8')
    /** A repository of the box's own at `dir`, whose fsmonitor would run on the host. */
    const plant = (dir: string) => {
      for (const sub of ['objects', 'refs']) mkdirSync(path.join(dir, sub), {recursive: true})
      writeFileSync(path.join(dir, 'HEAD'), 'ref: refs/heads/main\n')
      writeFileSync(
        path.join(dir, 'config'),
        `[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = "touch ${marker}; false"\n`,
      )
    }

    const inside = async (cwd: string, ...args: string[]) => yard(args, {cwd, env})
    try {
      // The top-level .git replaced by a directory, and one planted in a subdirectory.
      rmSync(link)
      plant(link)
      plant(path.join(worktree, 'src', '.git'))
      for (const cwd of [worktree, path.join(worktree, 'src')]) {
        const list = await inside(cwd, 'worktree', 'list', '--json')
        expect(list.exitCode, list.stderr).to.equal(0)
        const rows = list.json as Array<{name: string; path: string}>
        expect(rows.find((row) => row.name === 'main')?.path, cwd).to.equal(realpathSync(repo))
        expect(rows.map((row) => row.name)).to.include('pr-1')
        const up = await inside(cwd, 'up', '--dry-run')
        expect(up.exitCode, up.stderr).to.equal(3)
        expect(up.stderr).to.include('the git link of untrusted worktree pr-1 was changed')
      }

      // Through a link the box made to a directory elsewhere (its container's layer on the host):
      // the shell's path is inside the worktree, the real one is not.
      const elsewhere = path.join(tempDir('uc-layer'), 'evil')
      plant(path.join(elsewhere, '.git'))
      writeFileSync(path.join(elsewhere, 'yard.toml'), '[project]\nprefix = "yardtest-uc"\n')
      symlinkSync(elsewhere, path.join(worktree, 'lnk'))
      const shell = path.join(worktree, 'lnk')
      const through = await yard(['worktree', 'list', '--json'], {cwd: shell, env: {...env, PWD: shell}})
      expect(through.exitCode, through.stderr).to.equal(0)
      expect((through.json as Array<{name: string; path: string}>).find((row) => row.name === 'main')?.path).to.equal(
        realpathSync(repo),
      )
      rmSync(shell)
      expect(existsSync(marker), 'git ran with the config of a .git the box planted').to.equal(false)
    } finally {
      rmSync(link, {recursive: true, force: true})
      rmSync(path.join(worktree, 'src'), {recursive: true, force: true})
      writeFileSync(link, original)
    }
  })

  it('records the worktree outside the checkout at add, and again at worktree trust --untrusted of one already marked', async () => {
    const registry = path.join(env.YARD_STATE_DIR, 'untrusted-checkouts.json')
    const recorded = () =>
      (JSON.parse(readFileSync(registry, 'utf8')) as {checkouts: Array<{checkout: string}>}).checkouts.map(
        (entry) => entry.checkout,
      )
    expect(recorded()).to.include(realpathSync(worktree))
    // A worktree marked before the record existed.
    rmSync(registry)
    const again = await run('worktree', 'trust', 'pr-1', '--untrusted')
    expect(again.exitCode, again.stderr).to.equal(0)
    expect(recorded()).to.deep.equal([realpathSync(worktree)])
  })

  it('runs no git in a submodule whose .git the box made (a gitlink on its branch): list, dashboard, remove', async () => {
    // A contributor's branch carries a gitlink; the box fills its directory with a repository of its own.
    git(repo, 'checkout', '-q', '-b', 'contributor/sub')
    git(repo, 'update-index', '--add', '--cacheinfo', `160000,${git(repo, 'rev-parse', 'HEAD')},vendor/lib`)
    git(repo, 'commit', '-q', '-m', 'vendor lib')
    git(repo, 'checkout', '-q', 'main')
    const added = await run('worktree', 'add', 'pr-sub', 'contributor/sub', '--untrusted', '--no-fetch')
    expect(added.exitCode, added.stderr).to.equal(0)
    const sub = path.join(`${repo}-worktrees`, 'pr-sub', 'vendor', 'lib')
    const marker = path.join(tempDir('uc-sub-marker'), 'ran')
    for (const dir of ['objects', 'refs']) mkdirSync(path.join(sub, '.git', dir), {recursive: true})
    writeFileSync(path.join(sub, '.git', 'HEAD'), 'ref: refs/heads/x\n')
    writeFileSync(
      path.join(sub, '.git', 'config'),
      `[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = "touch ${marker}; false"\n`,
    )
    writeFileSync(path.join(sub, 'file.txt'), 'box\n')

    const list = await run('worktree', 'list', '--json')
    expect(list.exitCode, list.stderr).to.equal(0)
    expect((list.json as Array<{name: string; trust: string}>).find((row) => row.name === 'pr-sub')).to.include({
      trust: 'untrusted',
    })
    expect(existsSync(marker), 'worktree list ran the fsmonitor the box wrote').to.equal(false)
    const snapshot = await run('dashboard', '--json')
    expect(snapshot.exitCode, snapshot.stderr).to.equal(0)
    expect(existsSync(marker), 'the dashboard ran the fsmonitor the box wrote').to.equal(false)
    const planned = await run('worktree', 'remove', 'pr-sub', '--dry-run')
    expect(planned.exitCode, planned.stderr).to.equal(3)
    expect(planned.stderr).to.include('repository vendor/lib/ (not inspected')
    const removed = await run('worktree', 'remove', 'pr-sub', '--force', '--yes')
    expect(removed.exitCode, removed.stderr).to.equal(0)
    expect(existsSync(marker), 'git ran the fsmonitor the box wrote').to.equal(false)
  })
})
