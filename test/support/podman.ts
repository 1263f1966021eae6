/**
 * Real podman for tests (DESIGN.md §8): a containers.conf of the tests' own (CONTAINERS_CONF_TEXT
 * in a temp state dir), a test prefix on every container, volume, network and pod, a sweep of
 * that prefix's leftovers at the start of the run, and small service images made from the
 * host's static busybox (no registry).
 */
import {execFileSync, spawnSync} from 'node:child_process'
import {chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import os from 'node:os'
import path from 'node:path'

import {createContext} from '../../src/core/kernel/context.js'
import {CONTAINERS_CONF_TEXT} from '../../src/core/machine/containers-conf.js'
import {buildDefaultImage} from '../../src/core/machine/image.js'
import {findStaticBusybox} from '../../src/core/machine/podman-probe.js'
import {tempDir} from './repo.js'

/** Every podman object the stack tests make starts with this (project prefixes included). */
export const STACK_TEST_PREFIX = 'yardtest-s'

/** The service image the stack tests use: a static busybox, nothing else. */
export const BUSYBOX_IMAGE = 'localhost/yardtest-s-busybox:1'

let confDir: string | undefined

/** A state directory holding the tests' containers.conf; the env yard gets in tests. */
export function podmanStateDir(): string {
  const dir = tempDir('yard-state')
  writeFileSync(path.join(dir, 'containers.conf'), CONTAINERS_CONF_TEXT)
  return dir
}

/** `{YARD_STATE_DIR, CONTAINERS_CONF: undefined}` for `yard(args, {env})`: yard passes the conf itself. */
export function podmanEnv(state = podmanStateDir()): Record<string, string | undefined> {
  return {
    YARD_STATE_DIR: state,
    CONTAINERS_CONF: undefined,
    YARD_WORKTREE: undefined,
    WT_OFFSET: undefined,
    YARD_PREFIX: undefined,
    WORKTREE: undefined,
  }
}

function conf(): string {
  if (!confDir) {
    // Not a tempDir(): cleanupTemp() after one describe must not take it from the next.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'yard-podman-conf-'))
    writeFileSync(path.join(dir, 'containers.conf'), CONTAINERS_CONF_TEXT)
    process.once('exit', () => rmSync(dir, {recursive: true, force: true}))
    confDir = dir
  }

  return path.join(confDir, 'containers.conf')
}

/** Runs podman with the tests' containers.conf; returns trimmed stdout (throws on failure). */
export function podman(...args: string[]): string {
  return execFileSync('podman', args, {
    encoding: 'utf8',
    env: {...process.env, CONTAINERS_CONF: conf()},
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim()
}

/** Like `podman`, never throws: the exit code and output. */
export function podmanTry(...args: string[]): {status: number; stdout: string; stderr: string} {
  const result = spawnSync('podman', args, {encoding: 'utf8', env: {...process.env, CONTAINERS_CONF: conf()}})
  return {status: result.status ?? 1, stdout: result.stdout.trim(), stderr: result.stderr.trim()}
}

const lines = (text: string) =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)

/** Removes every container, pod, volume and network whose name starts with `prefix`. */
export function sweep(prefix = STACK_TEST_PREFIX): void {
  const mine = (names: string) => lines(names).filter((name) => name.startsWith(prefix))
  // Pods first: `pod rm` takes their containers, infra included, even one a killed run left
  // half-stopped, where `rm` of the containers one by one can spin (podman 4.3).
  const pods = mine(podmanTry('pod', 'ps', '--format', '{{.Name}}').stdout)
  if (pods.length > 0) podmanTry('pod', 'rm', '--force', '--time', '0', ...pods)
  const containers = mine(podmanTry('ps', '--all', '--format', '{{.Names}}').stdout)
  if (containers.length > 0) podmanTry('rm', '--force', '--time', '0', ...containers)
  const volumes = mine(podmanTry('volume', 'ls', '--format', '{{.Name}}').stdout)
  if (volumes.length > 0) podmanTry('volume', 'rm', '--force', ...volumes)
  for (const network of mine(podmanTry('network', 'ls', '--format', '{{.Name}}').stdout))
    podmanTry('network', 'rm', '--force', network)
}

let swept = false

/** The sweep of leftovers of an earlier run, once per run, and the busybox service image. */
export async function prepareStackTests(): Promise<void> {
  if (!swept) {
    sweep()
    swept = true
  }

  await ensureBusyboxImage()
}

/** The busybox service image of the tests (`podman import` of a tiny rootfs), built when missing. */
export async function ensureBusyboxImage(image = BUSYBOX_IMAGE): Promise<void> {
  if (podmanTry('image', 'exists', image).status === 0) return
  const busybox = await findStaticBusybox(process.env)
  if (!busybox) throw new Error('the stack tests need a static busybox (scripts/setup-system installs busybox-static)')
  const rootfs = path.join(tempDir('yardtest-rootfs'), 'rootfs')
  mkdirSync(path.join(rootfs, 'bin'), {recursive: true})
  copyFileSync(busybox, path.join(rootfs, 'bin', 'busybox'))
  chmodSync(path.join(rootfs, 'bin', 'busybox'), 0o755)
  for (const applet of ['sh', 'httpd', 'sleep', 'cat', 'echo', 'mkdir', 'ls', 'stty', 'wc'])
    symlinkSync('busybox', path.join(rootfs, 'bin', applet))
  mkdirSync(path.join(rootfs, 'tmp'))
  const tarball = path.join(path.dirname(rootfs), 'rootfs.tar')
  execFileSync('tar', ['-C', rootfs, '-cf', tarball, '.'])
  podman('import', tarball, image)
}

/** yard's default image (DESIGN.md §8), built once per machine and reused: its tag. */
export async function ensureDefaultImage(): Promise<string> {
  const state = podmanStateDir()
  const context = createContext({env: {...process.env, YARD_STATE_DIR: state, CONTAINERS_CONF: undefined}})
  return (await buildDefaultImage(context)).image
}

/** A web service serving `<text>` on container port 8080 that stops at once on SIGTERM. */
export function webService(text: string, published: string): string {
  return [
    `    image: ${BUSYBOX_IMAGE}`,
    String.raw`    command: ["sh", "-c", "trap 'exit 0' TERM; mkdir -p /www; echo \"${text}\" > /www/index.html; echo \"serving ${text}\"; httpd -f -p 8080 -h /www & wait"]`,
    '    ports:',
    `      - "${published}"`,
  ].join('\n')
}

/** A service keeping `/data` in the named volume `volume`, stopping at once on SIGTERM. */
export function dataService(volume: string): string {
  return [
    `    image: ${BUSYBOX_IMAGE}`,
    `    command: ["sh", "-c", "trap 'exit 0' TERM; sleep 100000 & wait"]`,
    '    volumes:',
    `      - ${volume}:/data`,
  ].join('\n')
}

/** The body of a page over HTTP (Node's fetch), with a short budget. */
export async function fetchText(port: number): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}/`, {signal: AbortSignal.timeout(5000)})
  return (await response.text()).trim()
}

/** Names of the containers, volumes and networks carrying `com.docker.compose.project=<project>`. */
export function projectObjects(project: string): {containers: string[]; volumes: string[]; networks: string[]} {
  const filter = `label=com.docker.compose.project=${project}`
  return {
    containers: lines(podman('ps', '--all', '--filter', filter, '--format', '{{.Names}}')).sort(),
    volumes: lines(podman('volume', 'ls', '--filter', filter, '--format', '{{.Name}}')).sort(),
    networks: lines(podman('network', 'ls', '--filter', filter, '--format', '{{.Name}}')).sort(),
  }
}
