/**
 * Fixtures of the stack benches: the tests' containers.conf in the scratch state dir, a
 * busybox service image (podman import, no registry), and a 2-service compose file.
 */
import {execFile} from 'node:child_process'
import {chmod, copyFile, mkdir, symlink, writeFile} from 'node:fs/promises'
import {join} from 'node:path'
import {promisify} from 'node:util'

import {CONTAINERS_CONF_TEXT} from '../src/core/containers-conf.js'
import {findStaticBusybox} from '../src/core/podman-probe.js'
import {makeScratchDir} from './lib.js'

const run = promisify(execFile)

export const BENCH_IMAGE = 'localhost/yardbench-busybox:1'

/** Writes yard's containers.conf into the state dir; returns its path (for CONTAINERS_CONF). */
export async function writeConf(stateDir: string): Promise<string> {
  const file = join(stateDir, 'containers.conf')
  await writeFile(file, CONTAINERS_CONF_TEXT)
  return file
}

/** Imports the busybox image when missing. */
export async function ensureBenchImage(conf: string): Promise<void> {
  const env = {...process.env, CONTAINERS_CONF: conf}
  const exists = await run('podman', ['image', 'exists', BENCH_IMAGE], {env}).then(() => true, () => false)
  if (exists) return
  const busybox = await findStaticBusybox(process.env)
  if (!busybox) throw new Error('needs a static busybox (scripts/setup-system installs busybox-static)')
  const dir = await makeScratchDir('rootfs')
  await mkdir(join(dir, 'rootfs', 'bin'), {recursive: true})
  await copyFile(busybox, join(dir, 'rootfs', 'bin', 'busybox'))
  await chmod(join(dir, 'rootfs', 'bin', 'busybox'), 0o755)
  for (const applet of ['sh', 'httpd', 'sleep', 'mkdir', 'echo']) await symlink('busybox', join(dir, 'rootfs', 'bin', applet))
  await run('tar', ['-C', join(dir, 'rootfs'), '-cf', join(dir, 'rootfs.tar'), '.'])
  await run('podman', ['import', join(dir, 'rootfs.tar'), BENCH_IMAGE], {env})
}

/** A web service on `${WEB_PORT}` and a service with a named volume; both stop at once on SIGTERM. */
export const COMPOSE_YAML = `services:
  web:
    image: ${BENCH_IMAGE}
    command: ["sh", "-c", "trap 'exit 0' TERM; mkdir -p /www; echo hello > /www/index.html; httpd -f -p 8080 -h /www & wait"]
    ports:
      - "\${WEB_PORT:-39000}:8080"
  store:
    image: ${BENCH_IMAGE}
    command: ["sh", "-c", "trap 'exit 0' TERM; sleep 100000 & wait"]
    volumes:
      - data:/data
volumes:
  data:
`

/** Removes every container, volume and network whose name starts with `prefix` (untimed cleanup). */
export async function sweepPrefix(conf: string, prefix: string): Promise<void> {
  const env = {...process.env, CONTAINERS_CONF: conf}
  const names = async (args: string[]) => (await run('podman', args, {env})).stdout.split('\n').map((line) => line.trim()).filter((name) => name.startsWith(prefix))
  const containers = await names(['ps', '--all', '--format', '{{.Names}}'])
  if (containers.length > 0) await run('podman', ['rm', '--force', '--time', '0', ...containers], {env})
  const volumes = await names(['volume', 'ls', '--format', '{{.Name}}'])
  if (volumes.length > 0) await run('podman', ['volume', 'rm', '--force', ...volumes], {env})
  for (const network of await names(['network', 'ls', '--format', '{{.Name}}'])) await run('podman', ['network', 'rm', '--force', network], {env}).catch(() => undefined)
}

export async function scratchDir(label: string): Promise<string> {
  return makeScratchDir(label)
}
