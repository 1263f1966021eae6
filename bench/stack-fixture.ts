/**
 * Fixtures of the stack benches: the tests' containers.conf in the scratch state dir, a
 * busybox service image (podman import, no registry), and a 2-service compose file.
 */
import {execFile} from 'node:child_process'
import {chmod, copyFile, mkdir, symlink, writeFile} from 'node:fs/promises'
import {join} from 'node:path'
import {promisify} from 'node:util'

import {CONTAINERS_CONF_TEXT} from '../src/core/machine/containers-conf.js'
import {findStaticBusybox} from '../src/core/machine/podman-probe.js'
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
  const exists = await run('podman', ['image', 'exists', BENCH_IMAGE], {env}).then(
    () => true,
    () => false,
  )
  if (exists) return
  const busybox = await findStaticBusybox(process.env)
  if (!busybox) throw new Error('needs a static busybox (scripts/setup-system installs busybox-static)')
  const dir = await makeScratchDir('rootfs')
  await mkdir(join(dir, 'rootfs', 'bin'), {recursive: true})
  await copyFile(busybox, join(dir, 'rootfs', 'bin', 'busybox'))
  await chmod(join(dir, 'rootfs', 'bin', 'busybox'), 0o755)
  for (const applet of ['sh', 'httpd', 'sleep', 'mkdir', 'echo'])
    await symlink('busybox', join(dir, 'rootfs', 'bin', applet))
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

/**
 * A 10-service project for `yard up --dry-run`: six services extending a base of another file
 * (itself extending one), sharing an `x-` fragment through a merge key; an override file; two
 * includes (short and long form) with three more services; literal ports close together.
 */
export const TEN_SERVICES: Record<string, string> = {
  'yard.toml': '[project]\nprefix = "yardbench-ten"\n',
  '.env': 'TAG=1.2\n',
  'compose.yaml': `x-service: &service
  restart: unless-stopped
  environment: {TZ: UTC}
include:
  - infra/db.yaml
  - path: [infra/queue.yaml]
services:
${Array.from(
  {length: 6},
  (_, index) => `  app${index}:
    <<: *service
    extends: {file: common/base.yaml, service: node}
    build: ./app${index}
    image: app${index}:\${TAG}
    container_name: app${index}
    ports: ["808${index}:80", "127.0.0.1:922${index}:9229"]
    volumes: ["./app${index}/src:/src", "/node_modules"]`,
).join('\n')}
  proxy:
    image: nginx
    ports: ["80:80", "443:443"]
`,
  'compose.override.yaml': 'services:\n  app0:\n    environment: {DEBUG: "1"}\n',
  'common/base.yaml': 'services:\n  runtime: {labels: [tier=app]}\n  node: {extends: runtime, image: node:20}\n',
  'infra/db.yaml':
    'services:\n  db: {image: postgres:16, ports: ["5432:5432"], volumes: [db-data:/var/lib/postgresql/data]}\nvolumes:\n  db-data: {}\n',
  'infra/queue.yaml':
    'services:\n  queue: {image: rabbitmq:3, ports: ["5672:5672"]}\n  worker: {extends: {file: ../common/base.yaml, service: node}, command: [worker]}\n',
}

/** Removes every container, volume and network whose name starts with `prefix` (untimed cleanup). */
export async function sweepPrefix(conf: string, prefix: string): Promise<void> {
  const env = {...process.env, CONTAINERS_CONF: conf}
  const names = async (args: string[]) =>
    (await run('podman', args, {env})).stdout
      .split('\n')
      .map((line) => line.trim())
      .filter((name) => name.startsWith(prefix))
  // Pods first: `pod rm` takes their containers, infra included, even one a killed run left
  // half-stopped, where `rm` of the containers one by one can spin (podman 4.3).
  const pods = await names(['pod', 'ps', '--format', '{{.Name}}'])
  if (pods.length > 0) await run('podman', ['pod', 'rm', '--force', '--time', '0', ...pods], {env})
  const containers = await names(['ps', '--all', '--format', '{{.Names}}'])
  if (containers.length > 0) await run('podman', ['rm', '--force', '--time', '0', ...containers], {env})
  const volumes = await names(['volume', 'ls', '--format', '{{.Name}}'])
  if (volumes.length > 0) await run('podman', ['volume', 'rm', '--force', ...volumes], {env})
  for (const network of await names(['network', 'ls', '--format', '{{.Name}}']))
    await run('podman', ['network', 'rm', '--force', network], {env}).catch(() => undefined)
}

export async function scratchDir(label: string): Promise<string> {
  return makeScratchDir(label)
}
