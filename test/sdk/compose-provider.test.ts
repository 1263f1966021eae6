import {expect} from 'chai'
import {chmodSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {detectComposeProvider, parseVersion, requireComposeProvider} from '../../src/sdk/compose-provider.js'
import {OperationError} from '../../src/sdk/errors.js'
import {ProcessRunner} from '../../src/sdk/process.js'
import {cleanupTemp, tempDir} from '../support/repo.js'

/**
 * A fake `docker` client (no docker daemon can run here, DESIGN.md §8): `docker compose version`
 * answers when `plugin` is set; `docker version` answers for the server only when `daemon` is.
 */
function fakeDockerBin(options: {plugin: boolean; daemon: boolean}): string {
  const bin = tempDir('fake-docker-bin')
  const script = `#!/bin/sh
# fake docker client for compose-provider tests
if [ "$1" = compose ] && [ "$2" = version ]; then
  ${options.plugin ? 'echo "Docker Compose version v2.29.1"; exit 0' : 'echo "docker: unknown command: docker compose" >&2; exit 1'}
fi
if [ "$1" = version ]; then
  ${options.daemon ? 'echo "27.3.1"; exit 0' : 'echo "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?" >&2; exit 1'}
fi
echo "fake docker: unexpected arguments: $*" >&2
exit 2
`
  writeFileSync(path.join(bin, 'docker'), script)
  chmodSync(path.join(bin, 'docker'), 0o755)
  return bin
}

const runnerWithPath = (first: string) =>
  new ProcessRunner({env: {PATH: `${first}${path.delimiter}${process.env.PATH}`}})

describe('detectComposeProvider (DESIGN.md §4.2)', () => {
  afterEach(cleanupTemp)

  it('finds podman-compose on this machine; podman 4.3 has no `podman compose`', async () => {
    const detection = await detectComposeProvider(new ProcessRunner())
    expect(detection.provider).to.deep.equal({
      id: 'podman-compose',
      command: ['podman-compose'],
      engine: 'podman',
      version: '1.0.3',
    })
    expect(detection.probes.map((probe) => probe.id)).to.deep.equal([
      'podman compose',
      'podman-compose',
      'docker compose',
      'docker-compose',
    ])
    expect(detection.probes[0]).to.deep.include({ok: false})
    expect(detection.probes[0].reason).to.include('unrecognized command')
  })

  it('does not count a docker client whose compose plugin answers but whose daemon does not', async () => {
    const runner = runnerWithPath(fakeDockerBin({plugin: true, daemon: false}))
    const detection = await detectComposeProvider(runner, {preference: 'docker compose'})
    expect(detection.provider).to.equal(undefined)
    expect(detection.probes).to.have.length(1)
    expect(detection.probes[0]).to.deep.include({id: 'docker compose', ok: false, version: '2.29.1'})
    expect(detection.probes[0].reason).to.match(/^no docker engine answers: Cannot connect to the Docker daemon/)
  })

  it('does not count a docker client without the compose plugin', async () => {
    const runner = runnerWithPath(fakeDockerBin({plugin: false, daemon: true}))
    const detection = await detectComposeProvider(runner, {preference: 'docker compose'})
    expect(detection.provider).to.equal(undefined)
    expect(detection.probes[0].reason).to.include('unknown command: docker compose')
  })

  it('counts docker compose when both answer, and auto still prefers podman-compose', async () => {
    const runner = runnerWithPath(fakeDockerBin({plugin: true, daemon: true}))
    const only = await detectComposeProvider(runner, {preference: 'docker compose'})
    expect(only.provider).to.deep.equal({
      id: 'docker compose',
      command: ['docker', 'compose'],
      engine: 'docker',
      version: '2.29.1',
    })
    const auto = await detectComposeProvider(runner)
    expect(auto.provider?.id).to.equal('podman-compose')
    expect(auto.probes.filter((probe) => probe.ok).map((probe) => probe.id)).to.deep.equal([
      'podman-compose',
      'docker compose',
    ])
  })

  it('requireComposeProvider names every probe and the install command when none answers', async () => {
    const runner = new ProcessRunner({env: {PATH: tempDir('empty-path')}})
    let error: unknown
    try {
      await requireComposeProvider(runner)
    } catch (error_) {
      error = error_
    }

    expect(error).to.be.instanceOf(OperationError)
    expect((error as OperationError).message).to.equal('no compose provider answers')
    expect((error as OperationError).why).to.equal(
      'podman compose: podman is not installed; podman-compose: podman-compose is not installed; docker compose: docker is not installed; docker-compose: docker-compose is not installed',
    )
    expect((error as OperationError).fix).to.include('apt-get install podman-compose')
  })

  it('parses the versions providers print', () => {
    expect(parseVersion('podman-composer version  1.0.3')).to.equal('1.0.3')
    expect(parseVersion('Docker Compose version v2.29.1')).to.equal('2.29.1')
    expect(parseVersion('docker-compose version 1.29.2, build 5becea4c')).to.equal('1.29.2')
    expect(parseVersion('no digits')).to.equal(undefined)
  })
})
