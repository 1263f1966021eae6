/**
 * The procfile-stack backend: a checkout's stack is the processes of its Procfile, run on the
 * host with the checkout's `[ports]` in their environment. No containers, and so no box.
 */
import {existsSync, mkdirSync, readFileSync, rmSync, statSync} from 'node:fs'

import {
  BackendContext,
  InputError,
  isPortFree,
  OperationError,
  RefusedError,
  StackBackend,
  StackContainer,
  StackSpec,
  Target,
} from '@yard-dev/cli/backend'

import {parseProcfile, portsNamed, ProcfileService} from './procfile.js'
import {clearState, isRunning, logFile, ProjectState, projectDir, readState, startProcess, startTicks, stopProcess, writeState} from './processes.js'

/** How long `up` watches new processes for an immediate exit, in milliseconds. */
const SETTLE_MS = 300

export class ProcfileStack implements StackBackend {
  readonly kind = 'stack' as const
  readonly id = 'procfile-stack'

  constructor(private readonly context: BackendContext) {}

  /**
   * Starts every Procfile service that does not run yet, with `spec.env` (the environment of
   * `yard env`, the `[ports]` keys among it). The Procfile is the first of `spec.files` (`[stack] files`).
   * @throws InputError (exit 2) for a malformed Procfile, before anything starts.
   * @throws RefusedError (exit 3) when another checkout's processes hold the project name, or a
   *   port a service names is busy.
   * @throws OperationError (exit 1) when a service exits at once (its log's end is shown).
   */
  async up(target: Target, spec: StackSpec): Promise<void> {
    const services = readProcfile(spec.files[0])
    const dir = projectDir(this.context.stateDir, target.project)
    const state = readState(dir)
    const running = state ? Object.entries(state.services).filter(([, record]) => isRunning(record)) : []
    if (state && state.owner !== target.owner && running.length > 0) {
      throw new RefusedError(`the project name ${target.project} is in use by another checkout (${state.checkout})`, {
        why: `its processes ${running.map(([name]) => name).join(', ')} run under this name, started by a checkout with another owner`,
        fix: 'set a distinct [project] prefix in yard.toml, or stop them first (`yard down` in that checkout)',
      })
    }
    const runningNames = new Set(running.map(([name]) => name))
    const toStart = services.filter((service) => !runningNames.has(service.name))
    if (toStart.length === 0) return
    await refuseBusyPorts(toStart, target)

    const next: ProjectState = {project: target.project, owner: target.owner, checkout: target.checkoutPath, services: Object.fromEntries(running)}
    const env = {...this.context.env, ...spec.env}
    mkdirSync(dir, {recursive: true})
    try {
      for (const service of toStart) {
        const pid = await startProcess(service.command, {cwd: target.checkoutPath, env, log: logFile(dir, service.name)})
        next.services[service.name] = {pid, command: service.command, started: new Date().toISOString(), startTicks: startTicks(pid), ports: portsNamed(service.command, target.ports)}
        writeState(dir, next)
      }
    } catch (error) {
      throw new OperationError(`could not start the processes of ${target.project}`, {why: String(error), fix: 'check that sh is on PATH, then run `yard up` again'})
    }
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS))
    const exited = toStart.filter((service) => !isRunning(next.services[service.name]))
    if (exited.length > 0) {
      throw new OperationError(`${exited.map((service) => service.name).join(', ')} exited right after starting`, {
        why: exited.map((service) => `${service.name} (${spec.files[0]}:${service.line}) logged: ${tail(logFile(dir, service.name))}`).join('; '),
        fix: 'fix the command, then run `yard up` again (`yard logs` shows the whole log)',
      })
    }
  }

  /** Stops every process of the project (its whole process group); returns what went. Logs stay. */
  async down(target: Target): Promise<string[]> {
    const dir = projectDir(this.context.stateDir, target.project)
    const state = readState(dir)
    if (!state) return []
    const gone: string[] = []
    for (const [name, record] of Object.entries(state.services)) {
      const running = isRunning(record)
      const killed = await stopProcess(record)
      if (running) gone.push(`process ${name} (pid ${record.pid}${killed ? ', killed after 10 s' : ''})`)
    }
    clearState(dir, state)
    return gone
  }

  /** `down`, then the project's logs and directory; with `dryRun`, only what would go. */
  async nuke(target: Target, options: {dryRun: boolean}): Promise<string[]> {
    const dir = projectDir(this.context.stateDir, target.project)
    const state = readState(dir)
    if (options.dryRun) {
      const processes = Object.entries(state?.services ?? {}).filter(([, record]) => isRunning(record)).map(([name, record]) => `process ${name} (pid ${record.pid})`)
      return existsSync(dir) ? [...processes, `logs and state ${dir}`] : processes
    }
    const gone = await this.down(target)
    if (existsSync(dir)) {
      rmSync(dir, {recursive: true, force: true})
      gone.push(`logs and state ${dir}`)
    }
    return gone
  }

  /** One row per started service: `container` is `pid <n>`, `ports` the `[ports]` its command names. */
  async ps(target: Target): Promise<StackContainer[]> {
    const state = readState(projectDir(this.context.stateDir, target.project))
    return Object.entries(state?.services ?? {}).map(([name, record]) => ({
      service: name,
      container: `pid ${record.pid}`,
      state: isRunning(record) ? 'running' : 'exited',
      ports: record.ports.map(({port}) => ({host: port, container: port})),
    }))
  }

  /**
   * Writes each service's log to stdout, every line prefixed `<service> | `; with `follow`, keeps
   * writing what is appended until yard is interrupted (Ctrl-C).
   * @throws InputError (exit 2) for a service that is neither in the Procfile nor started.
   */
  async logs(target: Target, spec: StackSpec, options: {services: string[]; follow: boolean}): Promise<void> {
    const dir = projectDir(this.context.stateDir, target.project)
    const known = [...new Set([...readProcfile(spec.files[0]).map((service) => service.name), ...Object.keys(readState(dir)?.services ?? {})])]
    const unknown = options.services.filter((name) => !known.includes(name))
    if (unknown.length > 0) {
      throw new InputError(`no process type ${unknown.join(', ')} in ${spec.files[0]}`, {fix: `name one of: ${known.join(', ')}`})
    }
    const names = options.services.length > 0 ? options.services : known
    const offsets = new Map<string, number>()
    const pending = new Map<string, string>()
    const flush = () => {
      for (const name of names) {
        const file = logFile(dir, name)
        if (!existsSync(file)) continue
        const size = statSync(file).size
        const from = offsets.get(name) ?? 0
        if (size <= from) continue
        const text = (pending.get(name) ?? '') + readFileSync(file).subarray(from, size).toString('utf8')
        offsets.set(name, size)
        const lines = text.split('\n')
        pending.set(name, lines.pop() ?? '')
        for (const line of lines) process.stdout.write(`${name} | ${line}\n`)
      }
    }
    flush()
    if (!options.follow) {
      for (const [name, rest] of pending) if (rest !== '') process.stdout.write(`${name} | ${rest}\n`)
      return
    }
    // Ends with the process: Ctrl-C (SIGINT) stops yard, as with `tail -f`.
    await new Promise<never>(() => setInterval(flush, 200))
  }
}

function readProcfile(file: string | undefined): ProcfileService[] {
  if (file === undefined || !existsSync(file)) {
    throw new InputError(`no Procfile${file ? ` at ${file}` : ''}`, {
      why: 'procfile-stack runs the processes of the first file of [stack] files',
      fix: 'set [stack] files = ["Procfile"] in yard.toml and write one `name: command` line per process',
    })
  }
  const {services, problems} = parseProcfile(readFileSync(file, 'utf8'))
  if (problems.length > 0) {
    throw new InputError(`${file} is not a valid Procfile`, {
      why: problems.map((problem) => `line ${problem.line}: ${problem.message}`).join('; '),
      fix: 'write one `name: command` line per process; lines starting with # are comments',
    })
  }
  return services
}

/** Refuses (exit 3) when a port a service names cannot be bound, before anything starts. */
async function refuseBusyPorts(services: ProcfileService[], target: Target): Promise<void> {
  for (const service of services) {
    for (const {key, port} of portsNamed(service.command, target.ports)) {
      if (!(await isPortFree(port))) {
        throw new RefusedError(`port ${port} (${key}) is busy, so ${service.name} cannot listen on it`, {
          why: `[ports] ${key} is ${port} for ${target.name === 'main' ? 'main' : `worktree ${target.name}`}, and another process listens there`,
          fix: `stop what holds port ${port} (\`ss -ltnp 'sport = :${port}'\` names it), or change [ports] ${key}; then run \`yard up\` again`,
        })
      }
    }
  }
}

/** The last line of a log, or a note that it is empty. */
function tail(file: string): string {
  const lines = existsSync(file) ? readFileSync(file, 'utf8').trimEnd().split('\n') : []
  const last = lines.at(-1)
  return last ? JSON.stringify(last) : 'nothing'
}
