/**
 * Can podman run a container here? (DESIGN.md §8). Runs `podman run --rm --rootfs <dir> true`
 * on a throwaway root filesystem holding only a static busybox, so no image and no registry are
 * needed, with the containers.conf yard would pass (context.ts `childEnv`).
 */
import {constants, promises as fs} from 'node:fs'
import os from 'node:os'
import path from 'node:path'

import type {ProcessRunner} from '../../sdk/process.js'

import {type ContainersConfInEffect, containersConfInEffect} from './containers-conf.js'

const PT_INTERP = 3

/**
 * True when `file` is an ELF executable without a program interpreter (statically linked, so
 * it runs alone in an empty root filesystem). False for anything else, never throws.
 */
export async function isStaticElf(file: string): Promise<boolean> {
  let handle: fs.FileHandle | undefined
  try {
    handle = await fs.open(file, 'r')
    const header = Buffer.alloc(64)
    await handle.read(header, 0, 64, 0)
    if (header.readUInt32BE(0) !== 0x7f_45_4c_46) return false
    const is64 = header[4] === 2
    const little = header[5] === 1
    const u16 = (buffer: Buffer, at: number) => (little ? buffer.readUInt16LE(at) : buffer.readUInt16BE(at))
    const u32 = (buffer: Buffer, at: number) => (little ? buffer.readUInt32LE(at) : buffer.readUInt32BE(at))
    const phoff = is64
      ? Number(little ? header.readBigUInt64LE(0x20) : header.readBigUInt64BE(0x20))
      : u32(header, 0x1c)
    const phentsize = u16(header, is64 ? 0x36 : 0x2a)
    const phnum = u16(header, is64 ? 0x38 : 0x2c)
    if (phnum === 0 || phentsize < 4) return false
    const table = Buffer.alloc(phentsize * phnum)
    await handle.read(table, 0, table.length, phoff)
    for (let index = 0; index < phnum; index++) {
      if (u32(table, index * phentsize) === PT_INTERP) return false
    }

    return true
  } catch {
    return false
  } finally {
    await handle?.close()
  }
}

/** The first statically linked `busybox` on PATH or in /bin, /usr/bin (Debian's busybox-static). */
export async function findStaticBusybox(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const directories = [...(env.PATH ?? '').split(path.delimiter).filter(Boolean), '/bin', '/usr/bin']
  for (const directory of new Set(directories)) {
    const candidate = path.join(directory, 'busybox')
    const executable = await fs.access(candidate, constants.X_OK).then(
      () => true,
      () => false,
    )
    if (executable && (await isStaticElf(candidate))) return candidate
  }

  return undefined
}

/** Builds `<dir>/bin/{busybox,sh,true}` from a static busybox: enough for `podman run … true`. */
export async function buildProbeRootfs(directory: string, busybox: string): Promise<void> {
  await fs.mkdir(path.join(directory, 'bin'), {recursive: true})
  await fs.copyFile(busybox, path.join(directory, 'bin', 'busybox'))
  await fs.chmod(path.join(directory, 'bin', 'busybox'), 0o755)
  for (const applet of ['sh', 'true']) await fs.symlink('busybox', path.join(directory, 'bin', applet))
}

export interface PodmanProbe {
  /** podman answered `podman --version`. */
  installed: boolean
  version?: string
  /** The probe container ran; undefined when it could not be tried (`skipped` says why). */
  runs?: boolean
  skipped?: string
  /** podman's error (its last stderr line) when the container did not run. */
  error?: string
  /** The containers.conf the probe ran with. */
  conf: ContainersConfInEffect
  /** The probe's argv with the throwaway directory, for "run it by hand" hints. */
  argv?: string[]
}

export interface PodmanProbeOptions {
  /** A static busybox to use instead of searching for one. */
  busybox?: string
  /** Budget of the probe run in ms (default 60 s: a first run initialises podman's storage). */
  timeoutMs?: number
}

function lastLine(text: string): string {
  const lines = text
    .trim()
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
  return (lines.at(-1) ?? '').replace(/^Error: /, '')
}

/**
 * Probes podman as yard would run it. Never throws for podman's failures; the throwaway root
 * filesystem is removed afterwards.
 */
export async function probePodman(
  runner: ProcessRunner,
  env: NodeJS.ProcessEnv,
  options: PodmanProbeOptions = {},
): Promise<PodmanProbe> {
  const conf = containersConfInEffect(env)
  const childEnv = {CONTAINERS_CONF: conf.path}
  const version = await runner.run('podman', ['--version'], {allowFailure: true, timeoutMs: 15_000, env: childEnv})
  if (version.exitCode !== 0) {
    return {
      installed: false,
      conf,
      error:
        version.exitCode === 127
          ? 'podman is not installed'
          : lastLine(version.stderr) || `podman --version exited ${version.exitCode}`,
    }
  }

  const podmanVersion = /(\d+\.\d+(?:\.\d+)?)/.exec(version.stdout)?.[1]
  const busybox = options.busybox ?? (await findStaticBusybox(env))
  if (busybox === undefined) {
    return {
      installed: true,
      version: podmanVersion,
      conf,
      skipped: "no statically linked busybox was found to build the probe's root filesystem",
    }
  }

  const rootfs = await fs.mkdtemp(path.join(os.tmpdir(), 'yard-probe-'))
  try {
    await buildProbeRootfs(rootfs, busybox)
    const args = ['run', '--rm', '--rootfs', rootfs, 'true']
    const run = await runner.run('podman', args, {
      allowFailure: true,
      timeoutMs: options.timeoutMs ?? 60_000,
      budget: 'podman probe',
      env: childEnv,
    })
    if (run.exitCode === 0)
      return {installed: true, version: podmanVersion, runs: true, conf, argv: ['podman', ...args]}
    const error = run.timedOut
      ? `the probe container did not finish within ${(options.timeoutMs ?? 60_000) / 1000} s`
      : lastLine(run.stderr) || `exit code ${run.exitCode}`
    return {installed: true, version: podmanVersion, runs: false, error, conf, argv: ['podman', ...args]}
  } finally {
    await fs.rm(rootfs, {recursive: true, force: true}).catch(() => undefined)
  }
}
