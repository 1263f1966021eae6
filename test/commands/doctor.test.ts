import {expect} from 'chai'
import {readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import type {DoctorReport} from '../../src/core/host/doctor.js'

import {CONTAINERS_CONF_TEXT} from '../../src/core/machine/containers-conf.js'
import {cleanupTemp, makeRepo, tempDir} from '../support/repo.js'
import {yard} from '../support/yard.js'

describe('yard doctor (DESIGN.md §8)', () => {
  afterEach(cleanupTemp)

  it('exits 1 naming the podman failure and `yard doctor --fix`; --fix writes the conf and everything required passes', async () => {
    const state = tempDir('yard-state')
    // Its own state dir, and no CONTAINERS_CONF: never the developer's real files.
    const env = {YARD_STATE_DIR: state, CONTAINERS_CONF: undefined}

    const broken = await yard(['doctor', '--json'], {env})
    expect(broken.exitCode, broken.stderr).to.equal(1)
    const report = broken.json as DoctorReport
    expect(report.ok).to.equal(false)
    expect(Object.keys(report)).to.deep.equal(['checks', 'ok'])
    const podman = report.checks.find((check) => check.name === 'podman')
    expect(podman).to.deep.include({ok: false, level: 'fail', fix: 'yard doctor --fix'})
    expect(podman?.detail).to.match(/cannot run a container .*rlimit/)

    const text = await yard(['doctor'], {env})
    expect(text.exitCode).to.equal(1)
    expect(text.stdout).to.match(/^✗ podman +podman .* cannot run a container/m)
    expect(text.stdout).to.match(/^ +fix: yard doctor --fix$/m)
    expect(text.stdout).to.match(/^✓ git +git \d/m)
    expect(text.stdout).to.include('1 required check failed')

    const fixed = await yard(['doctor', '--fix'], {env})
    expect(fixed.exitCode, fixed.stdout + fixed.stderr).to.equal(0)
    expect(fixed.stdout).to.include(`fixed podman: wrote ${path.join(state, 'containers.conf')}`)
    // How to run podman by hand with that file: yard env exports it, or the export line.
    expect(fixed.stdout).to.include(
      `to use podman by hand with it: eval "$(yard env)", or export CONTAINERS_CONF=${path.join(state, 'containers.conf')}`,
    )
    expect((await yard(['env'], {env, cwd: makeRepo()})).stdout).to.include(
      `CONTAINERS_CONF='${path.join(state, 'containers.conf')}'`,
    )
    expect(fixed.stdout).to.match(/^✓ podman +podman \S+ runs containers/m)
    expect(fixed.stdout).to.match(/^✓ compose +podman-compose/m)
    expect(fixed.stdout).to.match(/^✓ state-dir/m)
    expect(fixed.stdout).to.match(/^yard is ready/m)
    expect(readFileSync(path.join(state, 'containers.conf'), 'utf8')).to.equal(CONTAINERS_CONF_TEXT)

    const after = await yard(['doctor', '--json'], {env})
    expect(after.exitCode).to.equal(0)
    const ok = after.json as DoctorReport
    expect(ok.ok).to.equal(true)
    expect(ok.checks.every((check) => check.level !== 'fail')).to.equal(true)

    const again = await yard(['doctor', '--fix', '--json'], {env})
    expect(again.exitCode).to.equal(0)
    expect((again.json as DoctorReport).repaired).to.deep.equal([])
  })

  it('says CONTAINERS_CONF names no file (not "install podman"); when it is yard\'s own path, --fix writes it there', async () => {
    const state = tempDir('yard-state')
    const own = path.join(state, 'containers.conf')
    const env = {YARD_STATE_DIR: state, CONTAINERS_CONF: own}
    const broken = await yard(['doctor', '--json'], {env})
    expect(broken.exitCode, broken.stderr).to.equal(1)
    const podman = (broken.json as DoctorReport).checks.find((check) => check.name === 'podman')
    expect(podman).to.deep.include({level: 'fail', fix: "yard doctor --fix (it writes yard's containers.conf there)"})
    expect(podman?.detail).to.include(`CONTAINERS_CONF=${own} names no file`)
    const fixed = await yard(['doctor', '--fix', '--json'], {env})
    expect(fixed.exitCode, fixed.stdout + fixed.stderr).to.equal(0)
    expect(readFileSync(own, 'utf8')).to.equal(CONTAINERS_CONF_TEXT)

    const elsewhere = path.join(state, 'nowhere', 'mine.conf')
    const other = await yard(['doctor', '--fix', '--json'], {
      env: {YARD_STATE_DIR: tempDir('yard-state'), CONTAINERS_CONF: elsewhere},
    })
    expect(other.exitCode).to.equal(1)
    const check = (other.json as DoctorReport).checks.find((row) => row.name === 'podman')
    expect(check?.fix).to.include('unset CONTAINERS_CONF, or point it at an existing file')
  })

  it("uses the user's CONTAINERS_CONF when set and does not offer to overwrite yard's file", async () => {
    const state = tempDir('yard-state')
    const mine = path.join(tempDir('user-conf'), 'containers.conf')
    writeFileSync(mine, '[engine]\nevents_logger = "file"\n')
    const run = await yard(['doctor', '--fix', '--json'], {env: {YARD_STATE_DIR: state, CONTAINERS_CONF: mine}})
    expect(run.exitCode).to.equal(1)
    const report = run.json as DoctorReport
    expect(report.repaired).to.deep.equal([])
    const podman = report.checks.find((check) => check.name === 'podman')
    expect(podman?.detail).to.include(`with CONTAINERS_CONF=${mine}`)
    expect(podman?.fix).to.include('unset CONTAINERS_CONF and run `yard doctor --fix`')
  })

  it("checks the project's config: a bad key is ✗ with the fix, a valid one ✓", async () => {
    const repo = makeRepo({'yard.toml': '[stack]\nprovder = "podman-compose"\n'})
    const env = {YARD_STATE_DIR: tempDir('yard-state'), CONTAINERS_CONF: undefined}
    const bad = await yard(['doctor'], {cwd: repo, env})
    expect(bad.exitCode).to.equal(1)
    expect(bad.stdout).to.match(/^✗ config +.*unknown key \[stack\] provder — did you mean "provider"\?/m)
    expect(bad.stdout).to.match(/fix: rename provder to provider/)
    writeFileSync(path.join(repo, 'yard.toml'), '[ports]\nAPP_PORT = 3000\n')
    const good = await yard(['doctor', '--json'], {cwd: repo, env})
    const config = (good.json as DoctorReport).checks.find((check) => check.name === 'config')
    expect(config).to.deep.include({ok: true, level: 'ok', detail: `valid for ${repo} (prefix app, 1 [ports] key)`})
  })
})
