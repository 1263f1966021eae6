/**
 * Telling podman's own exec failures from a command's lines that look like them
 * (src/sdk/engine-exec.ts confirmedExecFailure): the words, the engine's exit code, and for a
 * missing or stopped container what the engine says now.
 */
import {expect} from 'chai'

import {confirmedExecFailure, type ExecProbe} from '../../src/sdk/engine-exec.js'

const GONE = 'Error: no container with name or ID "app" found: no such container\n'
const STOPPED = 'Error: can only create exec sessions on running containers: container state improper\n'
const NO_DIR =
  'Error: runc: exec failed: unable to start container process: chdir to cwd ("/x") set in config.json failed: no such file or directory\n'

describe('confirmedExecFailure (one exec stands for inspect + exec)', () => {
  const probe = (state: 'absent' | 'running' | 'other') => {
    const asked: string[] = []
    const ask: ExecProbe = async () => {
      asked.push(state)
      return state
    }

    return {ask, asked}
  }

  it('confirms a missing or stopped container with the engine, and a missing directory from the exec alone', async () => {
    const absent = probe('absent')
    expect(await confirmedExecFailure({exitCode: 125, stderr: GONE}, absent.ask)).to.equal('no-container')
    expect(await confirmedExecFailure({exitCode: 255, stderr: STOPPED}, probe('other').ask)).to.equal('not-running')
    const running = probe('running')
    expect(await confirmedExecFailure({exitCode: 127, stderr: NO_DIR}, running.ask)).to.equal('no-directory')
    expect(running.asked, 'no probe for a missing directory').to.deep.equal([])
  })

  it("takes a command's own lines for its own: another exit code, or a container that is there and running", async () => {
    const never = probe('absent')
    expect(await confirmedExecFailure({exitCode: 1, stderr: GONE}, never.ask)).to.equal(undefined)
    expect(await confirmedExecFailure({exitCode: 1, stderr: NO_DIR}, never.ask)).to.equal(undefined)
    expect(never.asked, "no probe when the exit code is not the engine's").to.deep.equal([])
    expect(await confirmedExecFailure({exitCode: 125, stderr: GONE}, probe('running').ask)).to.equal(undefined)
    expect(await confirmedExecFailure({exitCode: 125, stderr: STOPPED}, probe('running').ask)).to.equal(undefined)
    expect(await confirmedExecFailure({exitCode: 0, stderr: ''}, probe('absent').ask)).to.equal(undefined)
    // Without a probe (a caller that only reports it): the words and the engine's code.
    expect(await confirmedExecFailure({exitCode: 125, stderr: GONE})).to.equal('no-container')
    expect(await confirmedExecFailure({exitCode: 3, stderr: GONE})).to.equal(undefined)
  })
})
