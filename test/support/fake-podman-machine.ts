/**
 * Drives the FAKE `podman` of test/support/fake-podman-machine/ (DESIGN.md §8): a state
 * directory per test, the env that puts the fake first on PATH, the recorded calls, seeding
 * machines directly (another running machine, one whose socket is dead), and stopping the real
 * `podman system service` processes a started fake machine runs.
 */
import {existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {projectRoot} from './oclif-config.js'
import {tempDir} from './repo.js'

export const FAKE_PODMAN_BIN = path.join(projectRoot, 'test', 'support', 'fake-podman-machine')

export interface FakeCall {
  argv: string[]
  CONTAINER_HOST: string | null
  DOCKER_HOST: string | null
}

export class FakePodmanMachine {
  readonly dir = tempDir('yard-fake-machine')

  /** Env for `yard(args, {env})`: the fake first on PATH and its state directory. */
  get env(): Record<string, string> {
    return {PATH: `${FAKE_PODMAN_BIN}:${process.env.PATH}`, FAKE_PODMAN_MACHINE_DIR: this.dir}
  }

  /** Every podman call so far, in order. */
  calls(): FakeCall[] {
    const file = path.join(this.dir, 'calls.jsonl')
    if (!existsSync(file)) return []
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as FakeCall)
  }

  /** The argv (after `podman machine`) of every `podman machine VERB` call. */
  machineCalls(verb?: string): string[][] {
    return this.calls()
      .filter((call) => call.argv[0] === 'machine' && (verb === undefined || call.argv[1] === verb))
      .map((call) => call.argv.slice(1))
  }

  /**
   * Writes a machine as podman keeps it on disk, without the fake's `init`: `running` with no
   * service behind its socket path is a machine whose socket is dead.
   */
  seed(name: string, options: {running: boolean; mounts?: string[]}): void {
    const configDir = path.join(this.dir, 'machine', 'applehv')
    const runDir = path.join(this.dir, 'run')
    mkdirSync(configDir, {recursive: true})
    mkdirSync(runDir, {recursive: true})
    const mounts = (options.mounts ?? ['/Users/someone']).map((mount, index) => ({
      ReadOnly: false,
      Source: mount,
      Tag: `vol${index}`,
      Target: mount,
      Type: 'virtiofs',
      OriginalInput: `${mount}:${mount}`,
    }))
    const config = {
      Name: name,
      Created: '2026-11-01T10:00:00Z',
      LastUp: '2026-11-01T10:00:00Z',
      Mounts: mounts,
      Resources: {CPUs: 4, DiskSize: 100, Memory: 8192, USBs: []},
      SSH: {IdentityPath: '/nonexistent/key', Port: 50_999, RemoteUsername: 'core'},
    }
    writeFileSync(path.join(configDir, `${name}.json`), JSON.stringify(config))
    writeFileSync(
      path.join(runDir, `${name}.json`),
      JSON.stringify({state: options.running ? 'running' : 'stopped', pid: null}),
    )
    // A stale socket file: a path that exists but where nothing listens.
    if (options.running) writeFileSync(path.join(runDir, `${name}-api.sock`), '')
  }

  /** The socket path the fake reports for a machine. */
  socketPath(name: string): string {
    return path.join(this.dir, 'run', `${name}-api.sock`)
  }

  /** Stops every service a started fake machine runs (call in `after`, also on failure). */
  stopServices(): void {
    const runDir = path.join(this.dir, 'run')
    if (!existsSync(runDir)) return
    for (const file of readdirSync(runDir).filter((name) => name.endsWith('.json'))) {
      const {pid} = JSON.parse(readFileSync(path.join(runDir, file), 'utf8')) as {pid: number | null}
      if (!pid) continue
      try {
        process.kill(pid, 'SIGTERM')
      } catch {
        // already gone
      }
    }
  }
}
