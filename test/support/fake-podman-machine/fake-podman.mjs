/**
 * A FAKE `podman` for tests: podman machine VMs cannot boot on the test hosts (and `podman
 * machine` refuses root), so this emulates `podman machine list | inspect | init | start | stop |
 * rm` in podman 5's JSON shapes, validating the argv it receives, and runs the real podman for
 * every other subcommand.
 *
 * - FAKE_PODMAN_MACHINE_DIR (required): machine state. `machine/applehv/<name>.json` is the
 *   on-disk config podman keeps (with `Mounts`), `run/<name>.json` the fake's run state.
 * - Every call is appended to `calls.jsonl` as {argv, CONTAINER_HOST, DOCKER_HOST}.
 * - A started machine is a real `podman system service` on `run/<name>-api.sock`, so clients
 *   given CONTAINER_HOST reach a real engine, as they would reach the VM's.
 * - FAKE_PODMAN_REAL: the real podman (default /usr/bin/podman).
 */
import {spawn, spawnSync} from 'node:child_process'
import {
  appendFileSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import path from 'node:path'

const REAL = process.env.FAKE_PODMAN_REAL || '/usr/bin/podman'
const DIR = process.env.FAKE_PODMAN_MACHINE_DIR
const args = process.argv.slice(2)

function fail(message, code = 125) {
  process.stderr.write(`Error: ${message}\n`)
  process.exit(code)
}

if (!DIR) fail('fake podman: FAKE_PODMAN_MACHINE_DIR is not set')
appendFileSync(
  path.join(DIR, 'calls.jsonl'),
  JSON.stringify({
    argv: args,
    CONTAINER_HOST: process.env.CONTAINER_HOST ?? null,
    DOCKER_HOST: process.env.DOCKER_HOST ?? null,
  }) + '\n',
)

if (args[0] !== 'machine') {
  const result = spawnSync(REAL, args, {stdio: 'inherit'})
  if (result.signal) process.kill(process.pid, result.signal)
  process.exit(result.status ?? 125)
}

const CONFIG_DIR = path.join(DIR, 'machine', 'applehv')
const RUN_DIR = path.join(DIR, 'run')
mkdirSync(CONFIG_DIR, {recursive: true})
mkdirSync(RUN_DIR, {recursive: true})
const NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/
const configFile = (name) => path.join(CONFIG_DIR, `${name}.json`)
const runFile = (name) => path.join(RUN_DIR, `${name}.json`)
const socketPath = (name) => path.join(RUN_DIR, `${name}-api.sock`)
const exists = (name) => existsSync(configFile(name))
const readJson = (file, fallback) => (existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : fallback)
const config = (name) => readJson(configFile(name), undefined)
const run = (name) => readJson(runFile(name), {state: 'stopped', pid: null})
const names = () =>
  readdirSync(CONFIG_DIR)
    .filter((file) => file.endsWith('.json'))
    .map((file) => file.slice(0, -5))
    .sort()
const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
const alive = (pid) => {
  if (!pid) return false
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Splits argv into flags (validated against `known`: name → takes a value) and positionals. */
function parse(rest, known) {
  const flags = {}
  const positional = []
  for (let index = 0; index < rest.length; index++) {
    const word = rest[index]
    if (!word.startsWith('-')) {
      positional.push(word)
      continue
    }

    const [flag, inline] = word.split(/=(.*)/s, 2)
    if (!(flag in known)) fail(`unknown flag: ${flag}\nSee 'podman machine ${args[1]} --help'`)
    const value = known[flag] ? (inline ?? rest[++index]) : true
    if (value === undefined) fail(`flag needs an argument: ${flag}`)
    ;(flags[flag] ??= []).push(value)
  }

  return {flags, positional}
}

function oneName(positional) {
  if (positional.length > 1) fail(`accepts at most 1 arg(s), received ${positional.length}`)
  const name = positional[0] ?? 'podman-machine-default'
  if (!NAME.test(name)) fail(`invalid name "${name}": names must match [a-zA-Z0-9][a-zA-Z0-9_.-]*: invalid argument`)
  return name
}

function integer(flag, value) {
  if (!/^[0-9]+$/.test(value))
    fail(`invalid argument "${value}" for "${flag}" flag: strconv.ParseUint: parsing "${value}": invalid syntax`)
  return Number(value)
}

function inspectInfo(name) {
  const machine = config(name)
  const {state} = run(name)
  return {
    ConfigDir: {Path: CONFIG_DIR},
    ConnectionInfo: {PodmanSocket: {Path: socketPath(name)}, PodmanPipe: null},
    Created: machine.Created,
    LastUp: machine.LastUp,
    Name: name,
    Resources: machine.Resources,
    Rootful: false,
    Rosetta: false,
    SSHConfig: machine.SSH,
    State: state,
    UserModeNetworking: false,
  }
}

function listReporter(name) {
  const machine = config(name)
  const {state} = run(name)
  return {
    Name: name,
    Default: name === 'podman-machine-default',
    Created: machine.Created,
    Running: state === 'running',
    Starting: false,
    LastUp: machine.LastUp,
    Stream: 'testing',
    VMType: 'applehv',
    CPUs: machine.Resources.CPUs,
    Memory: String(machine.Resources.Memory * 1024 * 1024),
    DiskSize: String(machine.Resources.DiskSize * 1024 * 1024 * 1024),
    Port: machine.SSH.Port,
    RemoteUsername: machine.SSH.RemoteUsername,
    IdentityPath: machine.SSH.IdentityPath,
    UserModeNetworking: false,
  }
}

function startService(name) {
  const socket = socketPath(name)
  rmSync(socket, {force: true})
  const env = {...process.env}
  // The service is the "VM's" engine: it must run locally, not as a client of itself.
  for (const key of ['CONTAINER_HOST', 'DOCKER_HOST', 'CONTAINER_CONNECTION']) delete env[key]
  const log = openSync(path.join(RUN_DIR, `${name}-service.log`), 'a')
  const child = spawn(REAL, ['system', 'service', '--time=0', `unix://${socket}`], {
    detached: true,
    stdio: ['ignore', log, log],
    env,
  })
  child.unref()
  closeSync(log)
  for (let waited = 0; waited < 10_000 && !existsSync(socket); waited += 50) sleep(50)
  if (!existsSync(socket)) fail(`fake podman: the service for ${name} did not create ${socket}`)
  return child.pid
}

function stopService(name) {
  const {pid} = run(name)
  if (alive(pid)) {
    process.kill(pid, 'SIGTERM')
    for (let waited = 0; waited < 5000 && alive(pid); waited += 50) sleep(50)
    if (alive(pid)) process.kill(pid, 'SIGKILL')
  }

  rmSync(socketPath(name), {force: true})
}

const [, verb, ...rest] = args
switch (verb) {
  case 'list':
  case 'ls': {
    const {flags, positional} = parse(rest, {'--format': true, '--all-providers': false, '--noheading': false})
    if (positional.length > 0 || flags['--format']?.[0] !== 'json')
      fail('the fake answers only `podman machine list --format json`')
    process.stdout.write(JSON.stringify(names().map(listReporter), null, 2) + '\n')
    break
  }

  case 'inspect': {
    const {positional} = parse(rest, {})
    const wanted = positional.length > 0 ? positional : ['podman-machine-default']
    const missing = wanted.find((name) => !exists(name))
    if (missing) fail(`${missing}: VM does not exist`)
    process.stdout.write(JSON.stringify(wanted.map(inspectInfo), null, 4) + '\n')
    break
  }

  case 'init': {
    const {flags, positional} = parse(rest, {
      '--cpus': true,
      '--memory': true,
      '-m': true,
      '--disk-size': true,
      '--volume': true,
      '-v': true,
      '--now': false,
      '--rootful': false,
    })
    const name = oneName(positional)
    if (exists(name)) fail(`${name}: VM already exists`)
    const volumes = [...(flags['--volume'] ?? []), ...(flags['-v'] ?? [])]
    const mounts = volumes.map((volume, index) => {
      const [source, target, options] = volume.split(':', 3)
      if (!source?.startsWith('/') || !target?.startsWith('/'))
        fail(`invalid volume "${volume}": SOURCE and TARGET must be absolute paths`)
      // A VM can share only a directory that exists.
      if (!existsSync(source)) fail(`stat ${source}: no such file or directory`)
      return {
        ReadOnly: options === 'ro',
        Source: source,
        Tag: `vol${index}`,
        Target: target,
        Type: 'virtiofs',
        OriginalInput: volume,
      }
    })
    // podman mounts the home directory when no --volume is given.
    if (volumes.length === 0)
      mounts.push({
        ReadOnly: false,
        Source: process.env.HOME,
        Tag: 'vol0',
        Target: process.env.HOME,
        Type: 'virtiofs',
        OriginalInput: `${process.env.HOME}:${process.env.HOME}`,
      })
    const now = new Date().toISOString()
    writeFileSync(
      configFile(name),
      JSON.stringify(
        {
          Name: name,
          Created: now,
          LastUp: '0001-01-01T00:00:00Z',
          Mounts: mounts,
          Resources: {
            CPUs: integer('--cpus', flags['--cpus']?.[0] ?? '5'),
            DiskSize: integer('--disk-size', flags['--disk-size']?.[0] ?? '100'),
            Memory: integer('--memory', flags['--memory']?.[0] ?? flags['-m']?.[0] ?? '2048'),
            USBs: [],
          },
          SSH: {
            IdentityPath: path.join(DIR, 'machine', `${name}-key`),
            Port: 50_000 + names().length,
            RemoteUsername: 'core',
          },
        },
        null,
        2,
      ),
    )
    process.stdout.write(`Machine init complete\nTo start your machine run:\n\n\tpodman machine start ${name}\n\n`)
    break
  }

  case 'start': {
    const {positional} = parse(rest, {'--quiet': false, '-q': false, '--no-info': false})
    const name = oneName(positional)
    if (!exists(name)) fail(`${name}: VM does not exist`)
    if (run(name).state === 'running')
      fail(`unable to start "${name}": machine ${name}: VM already running or starting`)
    const other = names().find((candidate) => candidate !== name && run(candidate).state === 'running')
    if (other) fail(`unable to start "${name}": machine ${other}: VM already running or starting`)
    const pid = startService(name)
    writeFileSync(runFile(name), JSON.stringify({state: 'running', pid}))
    writeFileSync(configFile(name), JSON.stringify({...config(name), LastUp: new Date().toISOString()}, null, 2))
    process.stdout.write(`Starting machine "${name}"\nMachine "${name}" started successfully\n`)
    break
  }

  case 'stop': {
    const {positional} = parse(rest, {})
    const name = oneName(positional)
    if (!exists(name)) fail(`${name}: VM does not exist`)
    stopService(name)
    writeFileSync(runFile(name), JSON.stringify({state: 'stopped', pid: null}))
    process.stdout.write(`Machine "${name}" stopped successfully\n`)
    break
  }

  case 'rm': {
    const {flags, positional} = parse(rest, {
      '--force': false,
      '-f': false,
      '--save-image': false,
      '--save-ignition': false,
    })
    const name = oneName(positional)
    if (!exists(name)) fail(`${name}: VM does not exist`)
    if (!flags['--force'] && !flags['-f']) fail('the fake has no terminal to ask on: pass --force')
    stopService(name)
    rmSync(runFile(name), {force: true})
    rmSync(configFile(name), {force: true})
    break
  }

  default: {
    fail(`fake podman: \`podman machine ${verb ?? ''}\` is not emulated`)
  }
}
