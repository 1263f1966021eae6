import {expect} from 'chai'
import {chmodSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {parse} from 'smol-toml'

import {builtinChecks, type DoctorCheck, pathCheck, runDoctor, stateDirCheck} from '../../../src/core/host/doctor.js'
import {createContext} from '../../../src/core/kernel/context.js'
import {
  CONTAINERS_CONF_TEXT,
  inspectContainersConf,
  writeContainersConf,
} from '../../../src/core/machine/containers-conf.js'
import {findStaticBusybox, isStaticElf} from '../../../src/core/machine/podman-probe.js'
import {InputError, OperationError} from '../../../src/sdk/errors.js'
import {ProcessRunner} from '../../../src/sdk/process.js'
import {cleanupTemp, tempDir} from '../../support/repo.js'
import {projectRoot} from '../../support/yard.js'

/** An environment with its own state dir and no CONTAINERS_CONF (never the real state dir). */
function isolatedEnv(stateDirectory: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {...process.env, YARD_STATE_DIR: stateDirectory, ...extra}
  delete env.CONTAINERS_CONF
  return env
}

const contextFor = (env: NodeJS.ProcessEnv) => createContext({env, warn: () => undefined})
const check = (report: {checks: Array<{name: string}>}, name: string) =>
  report.checks.find((entry) => entry.name === name)

describe('doctor (DESIGN.md §8)', () => {
  let savedContainersConf: string | undefined

  before(() => {
    savedContainersConf = process.env.CONTAINERS_CONF
    delete process.env.CONTAINERS_CONF
  })

  after(() => {
    if (savedContainersConf !== undefined) process.env.CONTAINERS_CONF = savedContainersConf
  })

  afterEach(cleanupTemp)

  describe('the podman probe, for real', () => {
    it('fails without a containers.conf, with the fix `yard doctor --fix`; --fix writes it and podman then runs', async () => {
      const state = tempDir('yard-state')
      const env = isolatedEnv(state)
      const before = await runDoctor(contextFor(env))
      const podman = check(before, 'podman')
      expect(podman, JSON.stringify(before)).to.deep.include({ok: false, level: 'fail', fix: 'yard doctor --fix'})
      expect(podman)
        .to.have.property('detail')
        .that.matches(/^podman \d+\.\d+\.\d+ cannot run a container \(with no containers\.conf from yard\): .*rlimit/)
      expect(before.ok).to.equal(false)
      expect(before).not.to.have.property('repaired')
      expect(existsSync(path.join(state, 'containers.conf'))).to.equal(false)

      const fixed = await runDoctor(contextFor(env), {fix: true})
      expect(fixed.repaired).to.deep.equal([
        {
          name: 'podman',
          ok: true,
          detail: `wrote ${path.join(state, 'containers.conf')}; to use podman by hand with it: eval "$(yard env)", or export CONTAINERS_CONF=${path.join(state, 'containers.conf')}`,
        },
      ])
      expect(check(fixed, 'podman')).to.deep.include({ok: true, level: 'ok'})
      expect(check(fixed, 'podman'))
        .to.have.property('detail')
        .that.includes(`CONTAINERS_CONF=${path.join(state, 'containers.conf')}`)
      expect(readFileSync(path.join(state, 'containers.conf'), 'utf8')).to.equal(CONTAINERS_CONF_TEXT)
      expect(fixed.ok, JSON.stringify(fixed.checks)).to.equal(true)

      const again = await runDoctor(contextFor(env), {fix: true})
      expect(again.repaired).to.deep.equal([])
      expect(check(again, 'podman')).to.deep.include({ok: true})
    })

    it('reports a failed repair when the state dir cannot be written, and the check stays failed', async () => {
      const blocker = path.join(tempDir('yard-state'), 'a-file')
      writeFileSync(blocker, '')
      const env = isolatedEnv(path.join(blocker, 'state'))
      const report = await runDoctor(contextFor(env), {fix: true})
      expect(report.repaired).to.have.length(1)
      expect(report.repaired![0]).to.deep.include({name: 'podman', ok: false})
      expect(report.repaired![0].detail).to.match(/cannot write .*containers\.conf.*ENOTDIR[\s\S]*YARD_STATE_DIR/)
      expect(check(report, 'podman')).to.deep.include({ok: false, fix: 'yard doctor --fix'})
      expect(check(report, 'state-dir')).to.deep.include({ok: false, level: 'fail'})
      expect(report.ok).to.equal(false)
    })

    it("does not blame yard's settings when podman is missing from PATH", async () => {
      const emptyPath = tempDir('empty-path')
      const context = {
        ...contextFor(isolatedEnv(tempDir('yard-state'), {PATH: emptyPath})),
        runner: new ProcessRunner({env: {PATH: emptyPath}}),
      }
      const [git, podman] = await Promise.all(
        builtinChecks()
          .slice(0, 2)
          .map(async (entry) => entry.run(context)),
      )
      expect(git).to.deep.include({level: 'fail', detail: 'git is not installed'})
      expect(podman).to.deep.include({level: 'fail', detail: 'podman is not installed'})
      expect(podman.fix).to.include('apt-get install podman')
    })
  })

  describe('checks', () => {
    it('names git, podman, compose, kubectl, config, state-dir and path, then extra checks; a thrown YardError fails with its fix', async () => {
      const env = isolatedEnv(tempDir('yard-state'))
      const extra: DoctorCheck[] = [
        {
          name: 'extra',
          async run() {
            throw new InputError('yard.toml: unknown key [stack] provder', {
              why: 'known keys: provider',
              fix: 'rename provder to provider',
            })
          },
        },
        {name: 'plugin-tool', run: async () => ({level: 'warn', detail: 'optional tool missing'})},
      ]
      const report = await runDoctor(contextFor(env), {extraChecks: extra})
      expect(report.checks.map((entry) => entry.name)).to.deep.equal([
        'git',
        'podman',
        'compose',
        'kubectl',
        'config',
        'state-dir',
        'path',
        'extra',
        'plugin-tool',
      ])
      expect(check(report, 'git')).to.deep.include({ok: true, level: 'ok'})
      expect(check(report, 'compose')).to.deep.include({ok: true, level: 'ok'})
      expect(check(report, 'compose'))
        .to.have.property('detail')
        .that.matches(/^podman-compose 1\.0\.3/)
      expect(check(report, 'extra')).to.deep.equal({
        name: 'extra',
        ok: false,
        level: 'fail',
        detail: 'yard.toml: unknown key [stack] provder: known keys: provider',
        fix: 'rename provder to provider',
      })
      expect(check(report, 'plugin-tool')).to.deep.equal({
        name: 'plugin-tool',
        ok: true,
        level: 'warn',
        detail: 'optional tool missing',
      })
      expect(report.ok).to.equal(false)
      for (const entry of report.checks)
        expect(Object.keys(entry)).to.satisfy((keys: string[]) =>
          keys.every((key) => ['detail', 'fix', 'level', 'name', 'ok'].includes(key)),
        )
    })

    it('fails state-dir under a regular file (ENOTDIR) and passes in a fresh directory, creating it', async () => {
      const blocker = path.join(tempDir('yard-state'), 'a-file')
      writeFileSync(blocker, '')
      const bad = await stateDirCheck.run(contextFor(isolatedEnv(path.join(blocker, 'state'))))
      expect(bad).to.deep.include({level: 'fail'})
      expect(bad.detail).to.include('ENOTDIR')
      expect(bad.fix).to.include('YARD_STATE_DIR')
      const fresh = path.join(tempDir('yard-state'), 'new', 'state')
      const good = await stateDirCheck.run(contextFor(isolatedEnv(fresh)))
      expect(good).to.deep.equal({level: 'ok', detail: `${fresh} is writable`})
    })

    it("warns when another yard (Debian's Ruby one) comes first on PATH, and passes when this one does", async () => {
      const rubyBin = tempDir('ruby-bin')
      writeFileSync(path.join(rubyBin, 'yard'), '#!/usr/bin/ruby3.1\nputs "yardoc"\n')
      chmodSync(path.join(rubyBin, 'yard'), 0o755)
      const ourBin = tempDir('our-bin')
      symlinkSync(path.join(projectRoot, 'bin', 'run.js'), path.join(ourBin, 'yard'))
      const run = async (PATH: string) =>
        pathCheck({selfRoot: projectRoot}).run(contextFor(isolatedEnv(tempDir('yard-state'), {PATH})))

      const shadowed = await run(`${rubyBin}:${ourBin}`)
      expect(shadowed.level).to.equal('warn')
      expect(shadowed.detail).to.include(`${path.join(rubyBin, 'yard')} (Ruby's YARD documentation tool`)
      expect(shadowed.fix).to.equal(`put ${ourBin} before ${rubyBin} in PATH`)

      const first = await run(`${ourBin}:${rubyBin}`)
      expect(first).to.deep.equal({
        level: 'ok',
        detail: `${path.join(ourBin, 'yard')} is this yard (other yards later on PATH: ${path.join(rubyBin, 'yard')})`,
      })

      const only = await run(rubyBin)
      expect(only.fix).to.include('sudo apt-get remove yard')
      const none = await run(tempDir('empty-path'))
      expect(none.level).to.equal('warn')
      expect(none.detail).to.include('no `yard` on PATH')
    })

    it('finds the static busybox and tells static from dynamic executables', async () => {
      const busybox = await findStaticBusybox(process.env)
      expect(busybox).to.be.a('string')
      expect(await isStaticElf(busybox!)).to.equal(true)
      expect(await isStaticElf(process.execPath)).to.equal(false)
      expect(await isStaticElf(path.join(projectRoot, 'package.json'))).to.equal(false)
      expect(await isStaticElf('/no/such/file')).to.equal(false)
    })
  })

  describe('writeContainersConf', () => {
    const now = new Date('2026-11-29T10:20:30.456Z')

    it('puts default_ulimits in [containers] and runtime, cgroup_manager, events_logger in [engine]', () => {
      expect(parse(CONTAINERS_CONF_TEXT)).to.deep.equal({
        containers: {default_ulimits: ['nofile=1024:1024', 'nproc=4096:4096']},
        engine: {runtime: 'runc', cgroup_manager: 'cgroupfs', events_logger: 'file'},
      })
    })

    it('writes, then leaves its own file unchanged', async () => {
      const env = isolatedEnv(path.join(tempDir('yard-state'), 'nested'))
      const file = path.join(env.YARD_STATE_DIR!, 'containers.conf')
      expect(await writeContainersConf(env, now)).to.deep.equal({path: file, action: 'written'})
      expect(await writeContainersConf(env, now)).to.deep.equal({path: file, action: 'unchanged'})
      expect(readFileSync(file, 'utf8')).to.equal(CONTAINERS_CONF_TEXT)
    })

    it('keeps a differing user file that has every setting', async () => {
      const env = isolatedEnv(tempDir('yard-state'))
      const file = path.join(env.YARD_STATE_DIR!, 'containers.conf')
      const mine =
        '# mine\n[engine]\nevents_logger = "file"\ncgroup_manager = "cgroupfs"\nruntime = "runc"\n[containers]\ndefault_ulimits = ["nproc=4096:4096", "nofile=1024:1024", "core=0:0"]\n'
      writeFileSync(file, mine)
      expect(await inspectContainersConf(file)).to.deep.include({state: 'complete', missing: []})
      expect(await writeContainersConf(env, now)).to.deep.equal({path: file, action: 'kept'})
      expect(readFileSync(file, 'utf8')).to.equal(mine)
    })

    it('merges the missing settings into a user file, keeping its other keys and a backup', async () => {
      const env = isolatedEnv(tempDir('yard-state'))
      const file = path.join(env.YARD_STATE_DIR!, 'containers.conf')
      const mine =
        '[containers]\ndefault_ulimits = ["nofile=65536:65536", "core=0:0"]\nlog_size_max = 1000\n[engine]\nruntime = "crun"\n'
      writeFileSync(file, mine)
      const result = await writeContainersConf(env, now)
      expect(result).to.deep.equal({
        path: file,
        action: 'updated',
        backup: `${file}.bak-20261129T102030Z`,
        missing: [
          'containers.default_ulimits nofile=1024:1024',
          'containers.default_ulimits nproc=4096:4096',
          'engine.runtime',
          'engine.cgroup_manager',
          'engine.events_logger',
        ],
      })
      expect(readFileSync(result.backup!, 'utf8')).to.equal(mine)
      expect(parse(readFileSync(file, 'utf8'))).to.deep.equal({
        containers: {default_ulimits: ['core=0:0', 'nofile=1024:1024', 'nproc=4096:4096'], log_size_max: 1000},
        engine: {runtime: 'runc', cgroup_manager: 'cgroupfs', events_logger: 'file'},
      })
      expect(await inspectContainersConf(file)).to.deep.include({state: 'complete'})
    })

    it('replaces an unparseable file with a backup, and fails with a fix when the state dir is not writable', async () => {
      const env = isolatedEnv(tempDir('yard-state'))
      const file = path.join(env.YARD_STATE_DIR!, 'containers.conf')
      writeFileSync(file, '[engine\nruntime = ')
      const result = await writeContainersConf(env, now)
      expect(result).to.deep.include({action: 'updated', backup: `${file}.bak-20261129T102030Z`})
      expect(readFileSync(file, 'utf8')).to.equal(CONTAINERS_CONF_TEXT)

      const blocker = path.join(tempDir('yard-state'), 'a-file')
      mkdirSync(path.dirname(blocker), {recursive: true})
      writeFileSync(blocker, '')
      let error: unknown
      try {
        await writeContainersConf(isolatedEnv(path.join(blocker, 'state')), now)
      } catch (error_) {
        error = error_
      }

      expect(error).to.be.instanceOf(OperationError)
      expect((error as OperationError).fix).to.include('YARD_STATE_DIR')
    })
  })
})
