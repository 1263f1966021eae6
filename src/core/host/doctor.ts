/**
 * `yard doctor` (DESIGN.md §8): checks that what yard needs is present and works, each ✓ / ! / ✗
 * with a fix, and with `--fix` repairs what it can (today: writes yard's containers.conf).
 * Extensible: callers append their own `DoctorCheck`s (the project's config, a plugin's tools).
 */
import {constants, existsSync, promises as fs, realpathSync} from 'node:fs'
import path from 'node:path'

import type {YardContext} from '../kernel/context.js'

import {
  COMPOSE_PROVIDERS,
  type ComposeProviderId,
  describeProbes,
  detectComposeProvider,
  parseVersion,
} from '../../sdk/compose-provider.js'
import {InputError, YardError} from '../../sdk/errors.js'
import {shellCommand} from '../../sdk/shell.js'
import {packageRoot} from '../kernel/package-root.js'
import {containersConfPath, ensureStateDir, stateDir} from '../kernel/state.js'
import {describeWrite, inspectContainersConf, writeContainersConf} from '../machine/containers-conf.js'
import {probePodman} from '../machine/podman-probe.js'
import {findMainCheckout, openWorkspace} from '../workspace/workspace.js'

export type CheckLevel = 'ok' | 'warn' | 'fail'

/** What one check found. `fail` is a required check failing: doctor then exits 1. */
export interface CheckOutcome {
  level: CheckLevel
  detail: string
  /** What the user can do: a command when there is one. */
  fix?: string
  /** What `--fix` does about a failure; resolves to a sentence saying what it did. */
  repair?: () => Promise<string>
}

/** One check. `run` may also throw: a YardError becomes a failure carrying its fix. */
export interface DoctorCheck {
  name: string
  run: (context: YardContext) => Promise<CheckOutcome>
}

/** One line of the report (`yard doctor --json`: `{checks: [CheckResult…], ok}`). */
export interface CheckResult {
  name: string
  ok: boolean
  level: CheckLevel
  detail: string
  fix?: string
}

export interface RepairResult {
  name: string
  ok: boolean
  detail: string
}

export interface DoctorReport {
  checks: CheckResult[]
  /** False when any check failed. */
  ok: boolean
  /** With `--fix` only: what was repaired (empty when nothing needed it). */
  repaired?: RepairResult[]
}

export interface DoctorOptions {
  /** Repair what can be repaired, then check again. */
  fix?: boolean
  /** Checks run after the built-in ones, in order (e.g. the project's config). */
  extraChecks?: readonly DoctorCheck[]
  /** The root of the running yard package, to tell it from other `yard`s on PATH. */
  selfRoot?: string
  /** `[stack] provider` when known (default `auto`). */
  composeProvider?: 'auto' | ComposeProviderId
  /** A static busybox for the podman probe instead of searching for one. */
  busybox?: string
}

/** "sudo apt-get install git" on Debian-likes, "brew install git" on macOS. */
export function installHint(packages: string): string {
  if (process.platform === 'darwin') return `brew install ${packages}`
  return `sudo apt-get install ${packages} (Debian/Ubuntu; scripts/setup-system in yard's source does all of them)`
}

const atLeast = (version: string, minimum: [number, number]) => {
  const [major, minor] = version.split('.').map(Number)
  return major > minimum[0] || (major === minimum[0] && minor >= minimum[1])
}

export const gitCheck: DoctorCheck = {
  name: 'git',
  async run({runner}) {
    const result = await runner.git(['--version'], {allowFailure: true, timeoutMs: 15_000})
    if (result.exitCode === 127) return {level: 'fail', detail: 'git is not installed', fix: installHint('git')}
    const version = parseVersion(result.stdout)
    if (result.exitCode !== 0 || version === undefined)
      return {
        level: 'fail',
        detail: `git --version failed: ${result.stderr.trim() || result.stdout.trim()}`,
        fix: installHint('git'),
      }
    if (!atLeast(version, [2, 30]))
      return {
        level: 'fail',
        detail: `git ${version} is older than 2.30 (yard needs \`rev-parse --path-format\` and worktree fixes)`,
        fix: `upgrade git: ${installHint('git')}`,
      }
    return {level: 'ok', detail: `git ${version}`}
  },
}

/**
 * How to run the host's podman by hand with yard's containers.conf (yard passes it to its own
 * podman calls only): `yard env` exports CONTAINERS_CONF, or the export line itself.
 */
export function byHand(confPath: string): string {
  return `to use podman by hand with it: eval "$(yard env)", or ${shellCommand(['export', `CONTAINERS_CONF=${confPath}`])}`
}

export function podmanCheck(options: DoctorOptions): DoctorCheck {
  return {
    name: 'podman',
    async run({runner, env}) {
      // podman refuses to start at all when CONTAINERS_CONF names no file: say that, not "install podman".
      const named = env.CONTAINERS_CONF
      if (named && !existsSync(named)) {
        const own = path.resolve(named) === path.resolve(containersConfPath(env))
        return {
          level: 'fail',
          detail: `CONTAINERS_CONF=${named} names no file, and podman does not start without the file it names`,
          fix: own
            ? "yard doctor --fix (it writes yard's containers.conf there)"
            : `unset CONTAINERS_CONF, or point it at an existing file (yard doctor --fix writes yard's to ${containersConfPath(env)})`,
          ...(own && {
            async repair() {
              const written = await writeContainersConf(env)
              return `${describeWrite(written)}; ${byHand(written.path)}`
            },
          }),
        }
      }

      const probe = await probePodman(runner, env, {busybox: options.busybox})
      if (!probe.installed)
        return {
          level: 'fail',
          detail: probe.error ?? 'podman is not installed',
          fix: installHint('podman runc busybox-static'),
        }
      const using =
        probe.conf.source === 'none' ? 'with no containers.conf from yard' : `with CONTAINERS_CONF=${probe.conf.path}`
      if (probe.skipped)
        return {
          level: 'warn',
          detail: `podman ${probe.version ?? '?'} is installed but was not probed: ${probe.skipped}`,
          fix: installHint('busybox-static'),
        }
      if (probe.runs)
        return {
          level: 'ok',
          detail: `podman ${probe.version ?? '?'} runs containers (${using})${probe.conf.source === 'yard' ? `; ${byHand(probe.conf.path!)}` : ''}`,
        }
      const detail = `podman ${probe.version ?? '?'} cannot run a container (${using}): ${probe.error}`
      if (probe.conf.source === 'env') {
        return {
          level: 'fail',
          detail,
          fix: `your CONTAINERS_CONF (${probe.conf.path}) is used: add the settings of \`yard doctor --fix\` to it, or unset CONTAINERS_CONF and run \`yard doctor --fix\``,
        }
      }

      const current = probe.conf.source === 'yard' ? await inspectContainersConf(probe.conf.path!) : undefined
      if (current && (current.state === 'current' || current.state === 'complete')) {
        return {
          level: 'fail',
          detail,
          fix: `${probe.conf.path} already has yard's settings, so the cause is elsewhere: see podman's error above and containers.conf(5)`,
        }
      }

      return {
        level: 'fail',
        detail,
        fix: 'yard doctor --fix',
        async repair() {
          const written = await writeContainersConf(env)
          return `${describeWrite(written)}; ${byHand(written.path)}`
        },
      }
    },
  }
}

export function composeCheck(options: DoctorOptions): DoctorCheck {
  return {
    name: 'compose',
    async run({runner}) {
      const detection = await detectComposeProvider(runner, {preference: options.composeProvider})
      const others = detection.probes.filter((probe) => probe.id !== detection.provider?.id)
      if (detection.provider) {
        const version = detection.provider.version ? ` ${detection.provider.version}` : ''
        const also = others.filter((probe) => probe.ok).map((probe) => probe.id)
        return {
          level: 'ok',
          detail: `${detection.provider.id}${version}${also.length > 0 ? ` (also answering: ${also.join(', ')})` : ''}`,
        }
      }

      const wanted =
        options.composeProvider && options.composeProvider !== 'auto'
          ? `the configured provider ${options.composeProvider}`
          : `none of ${COMPOSE_PROVIDERS.join(', ')}`
      return {
        level: 'fail',
        detail: `no compose provider answers (${wanted}): ${describeProbes(detection.probes)}`,
        fix: installHint('podman-compose'),
      }
    },
  }
}

export const kubectlCheck: DoctorCheck = {
  name: 'kubectl',
  async run({runner}) {
    const result = await runner.run('kubectl', ['version', '--client', '--output=json'], {
      allowFailure: true,
      timeoutMs: 15_000,
    })
    const optional = 'optional: only [cluster] runtime = "kubernetes" uses it'
    if (result.exitCode === 127)
      return {
        level: 'warn',
        detail: `kubectl is not installed (${optional})`,
        fix: 'install kubectl when you use a Kubernetes cluster: https://kubernetes.io/docs/tasks/tools/',
      }
    let version: string | undefined
    try {
      version = (JSON.parse(result.stdout) as {clientVersion?: {gitVersion?: string}}).clientVersion?.gitVersion
    } catch {
      version = parseVersion(result.stdout)
    }

    if (result.exitCode !== 0 && version === undefined)
      return {
        level: 'warn',
        detail: `kubectl version --client failed (${optional}): ${result.stderr.trim().split('\n', 1)[0]}`,
      }
    return {level: 'ok', detail: `kubectl ${version ?? '(unknown version)'} (${optional})`}
  },
}

export const stateDirCheck: DoctorCheck = {
  name: 'state-dir',
  async run({env}) {
    const directory = stateDir(env)
    const probe = path.join(directory, `.doctor-${process.pid}-${Math.random().toString(16).slice(2)}`)
    try {
      ensureStateDir(env)
      await fs.writeFile(probe, '', {flag: 'wx'})
      await fs.rm(probe, {force: true})
      return {level: 'ok', detail: `${directory} is writable`}
    } catch (error) {
      // A YardError's code is its exit code: its why names the errno.
      const code =
        error instanceof YardError
          ? (error.why ?? error.message)
          : ((error as NodeJS.ErrnoException).code ?? (error as Error).message)
      return {
        level: 'fail',
        detail: `${directory} is not writable (${code})`,
        fix: `fix the permissions of ${directory}, or set YARD_STATE_DIR to a writable directory`,
      }
    }
  },
}

const real = (file: string) => {
  try {
    return realpathSync(file)
  } catch {
    return path.resolve(file)
  }
}

/** Every executable `yard` on PATH, in PATH order, without repeats. */
export async function yardsOnPath(env: NodeJS.ProcessEnv): Promise<string[]> {
  const found: string[] = []
  for (const directory of new Set((env.PATH ?? '').split(path.delimiter).filter(Boolean))) {
    const candidate = path.join(path.resolve(directory), 'yard')
    const stat = await fs.stat(candidate).catch(() => undefined)
    if (!stat?.isFile()) continue
    if (
      !(await fs.access(candidate, constants.X_OK).then(
        () => true,
        () => false,
      ))
    )
      continue
    if (found.every((other) => !(real(other) === real(candidate)))) found.push(candidate)
  }

  return found
}

async function describeOther(file: string): Promise<string> {
  const head = await fs.readFile(file, {encoding: 'latin1'}).then(
    (text) => text.slice(0, 200),
    () => '',
  )
  return /ruby/i.test(head.split('\n', 1)[0] ?? '')
    ? `${file} (Ruby's YARD documentation tool, Debian package yard)`
    : file
}

export function pathCheck(options: DoctorOptions): DoctorCheck {
  return {
    name: 'path',
    async run({env}) {
      const root = real(options.selfRoot ?? packageRoot()) + path.sep
      const isOurs = (file: string) => real(file).startsWith(root)
      const yards = await yardsOnPath(env)
      const ours = yards.find(isOurs)
      if (yards.length === 0)
        return {
          level: 'warn',
          detail: `no \`yard\` on PATH (this one runs from ${root.slice(0, -1)})`,
          fix: `npm install -g @yard-dev/cli, or \`npm link\` in ${root.slice(0, -1)}`,
        }
      if (isOurs(yards[0])) {
        const later = yards.slice(1)
        return {
          level: 'ok',
          detail: `${yards[0]} is this yard${later.length > 0 ? ` (other yards later on PATH: ${later.join(', ')})` : ''}`,
        }
      }

      const other = await describeOther(yards[0])
      return {
        level: 'warn',
        detail: `another yard comes first on PATH: ${other}; typing \`yard\` runs it, not this one`,
        fix: ours
          ? `put ${path.dirname(ours)} before ${path.dirname(yards[0])} in PATH`
          : `install this yard ahead of it on PATH (npm install -g @yard-dev/cli), or remove the other one${other.includes('Ruby') ? ' (sudo apt-get remove yard)' : ''}`,
      }
    },
  }
}

/** The built-in checks, in report order. */
/**
 * The project's config (DESIGN.md §3.2): yard.toml, yard.local.toml and env overrides load and
 * validate. Outside a repository there is nothing to check, which is fine.
 */
export const configCheck: DoctorCheck = {
  name: 'config',
  async run(context) {
    try {
      await findMainCheckout(context)
    } catch (error) {
      if (error instanceof InputError)
        return {level: 'ok', detail: `no project here (${error.message}): nothing to check`}
      throw error
    }

    const workspace = await openWorkspace(context)
    const ports = Object.keys(workspace.config.ports).length
    return {
      level: 'ok',
      detail: `valid for ${workspace.mainPath} (prefix ${workspace.prefix}, ${ports} [ports] key${ports === 1 ? '' : 's'})`,
    }
  },
}

export function builtinChecks(options: DoctorOptions = {}): DoctorCheck[] {
  return [
    gitCheck,
    podmanCheck(options),
    composeCheck(options),
    kubectlCheck,
    configCheck,
    stateDirCheck,
    pathCheck(options),
  ]
}

async function runCheck(check: DoctorCheck, context: YardContext): Promise<CheckOutcome> {
  try {
    return await check.run(context)
  } catch (error) {
    if (error instanceof YardError)
      return {level: 'fail', detail: error.why ? `${error.message}: ${error.why}` : error.message, fix: error.fix}
    return {level: 'fail', detail: `the check itself failed: ${(error as Error).message}`}
  }
}

const toResult = (name: string, outcome: CheckOutcome): CheckResult => ({
  name,
  ok: outcome.level !== 'fail',
  level: outcome.level,
  detail: outcome.detail,
  ...(!(outcome.fix === undefined) && {fix: outcome.fix}),
})

/**
 * Runs every check at once (built-ins, then `extraChecks`); with `fix`, runs the repair of each
 * failed check that has one, then that check again. Never throws for a failing check.
 */
export async function runDoctor(context: YardContext, options: DoctorOptions = {}): Promise<DoctorReport> {
  const checks = [...builtinChecks(options), ...(options.extraChecks ?? [])]
  const outcomes = await Promise.all(checks.map(async (check) => runCheck(check, context)))
  let repaired: RepairResult[] | undefined
  if (options.fix) {
    repaired = []
    for (const [index, outcome] of outcomes.entries()) {
      if (outcome.level !== 'fail' || !outcome.repair) continue
      try {
        repaired.push({name: checks[index].name, ok: true, detail: await outcome.repair()})
      } catch (error) {
        const detail = error instanceof YardError ? error.render() : (error as Error).message
        repaired.push({name: checks[index].name, ok: false, detail})
      }

      outcomes[index] = await runCheck(checks[index], context)
    }

    // A repair can mend other checks too (compose needs the containers.conf podman needed).
    if (repaired.length > 0)
      await Promise.all(
        outcomes.map(async (outcome, index) => {
          if (outcome.level === 'fail' && !outcome.repair) outcomes[index] = await runCheck(checks[index], context)
        }),
      )
  }

  const results = checks.map((check, index) => toResult(check.name, outcomes[index]))
  return {checks: results, ok: results.every((result) => result.ok), ...(!(repaired === undefined) && {repaired})}
}
