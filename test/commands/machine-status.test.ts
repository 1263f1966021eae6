/** `yard machine status` with the native backend (DESIGN.md §4.3, Appendix A). */
import {expect} from 'chai'

import type {BackendEntry} from '../../src/core/registry/registry.js'

import {podmanEnv} from '../support/podman.js'
import {cleanupTemp, makeRepo} from '../support/repo.js'
import {yard} from '../support/yard.js'

describe('yard machine status (native, DESIGN.md §4.3)', () => {
  after(cleanupTemp)

  it("reports the host's podman as the running native machine, in the Appendix A shape", async () => {
    const repo = makeRepo()
    const status = await yard(['machine', 'status', '--json'], {cwd: repo, env: podmanEnv()})
    expect(status.exitCode, status.stderr).to.equal(0)
    const json = status.json as Record<string, unknown>
    expect(Object.keys(json)).to.deep.equal([
      'backend',
      'name',
      'state',
      'socket',
      'mounts',
      'cpus',
      'memoryMiB',
      'diskGiB',
    ])
    expect(json).to.deep.include({
      backend: 'native',
      name: 'native',
      state: 'running',
      socket: null,
      mounts: [],
      diskGiB: null,
    })
    const text = await yard(['machine', 'status'], {cwd: repo, env: podmanEnv()})
    expect(text.stdout).to.match(/^backend +native \(no VM: the host's podman\)$/m)
  })

  it('--worktree of a worktree that is not untrusted says where it runs; of one that does not exist, that too', async () => {
    const repo = makeRepo()
    const gone = await yard(['machine', 'status', '--worktree', 'pr-9'], {cwd: repo, env: podmanEnv()})
    expect(gone.exitCode).to.equal(2)
    expect(gone.stderr).to.include('worktree pr-9 is not untrusted, so it has no machine of its own')
    expect(gone.stderr).to.include("pr-9 does not exist; it would run on this host's podman")
    expect(gone.stderr).to.not.include('shared machine')
  })

  it('says unresponsive when podman cannot answer', async () => {
    const status = await yard(['machine', 'status', '--json'], {
      cwd: makeRepo(),
      env: {...podmanEnv(), CONTAINERS_CONF: '/nonexistent/containers.conf'},
    })
    expect((status.json as {state: string}).state).to.equal('unresponsive')
  })

  it('yard backends lists the built-in native, podman-machine and compose-stack backends as ok', async () => {
    const listed = (await yard(['backends', '--json'])).json as BackendEntry[]
    const builtIn = listed.filter(
      (entry) => entry.plugin === '@yard-dev/cli' && (entry.kind === 'machine' || entry.kind === 'stack'),
    )
    expect(builtIn.map((entry) => [entry.id, entry.kind, entry.status])).to.deep.equal([
      ['native', 'machine', 'ok'],
      ['podman-machine', 'machine', 'ok'],
      ['compose-stack', 'stack', 'ok'],
    ])
  })
})
