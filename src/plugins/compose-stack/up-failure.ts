/**
 * What `up` says when it fails part-way (DESIGN.md §4.2, docs/stacks.md "Ownership"): the
 * services it left running and stopped, what the provider said, and the way on.
 */
import type {Target} from '../../sdk/target.js'
import type {EngineContainer} from './engine.js'

import {OperationError} from '../../sdk/errors.js'
import {shellCommand} from '../../sdk/shell.js'
import {COMPOSE_SERVICE_LABEL} from './labels.js'

export const isRunning = (container: EngineContainer) => container.state === 'running'
export const worktreeFlag = (target: Target) => (target.isMain ? [] : ['--worktree', target.name])

/** "web, db (exited)": services of containers, with the state when it is not running. */
export function describeContainers(containers: readonly EngineContainer[]): string {
  return [
    ...new Set(
      containers.map(
        (container) =>
          `${container.labels[COMPOSE_SERVICE_LABEL] ?? container.name}${isRunning(container) ? '' : ` (${container.state})`}`,
      ),
    ),
  ]
    .sort()
    .join(', ')
}

/** Engine output that `yard doctor --fix` (yard's containers.conf, DESIGN.md §8) may cure. */
const HOST_SETUP = /OCI runtime|cgroup|crun|runc|ulimit|rlimit|inotify|permission denied/i

/**
 * Exit 1 for an `up` that failed part-way: what the provider said, the services it left running
 * and those it left stopped (both removed by `yard down`, after which `up` makes them afresh).
 * @param exited more on the services that ran and stopped (their exit codes and last lines), when known
 */
export function partWayError(
  target: Target,
  provider: string,
  outcome: {exitCode: number; stdout: string; stderr: string},
  missing: string[],
  after: EngineContainer[],
  exited = '',
): OperationError {
  const output = `${outcome.stdout}\n${outcome.stderr}`
  const said = output
    .split('\n')
    .filter((line) => /error|Error|refused|denied|in use|not found/.test(line))
    .slice(-6)
    .join('\n')
  const left = after.filter(isRunning)
  const stopped = after.filter((container) => !isRunning(container))
  const flag = worktreeFlag(target)
  const state = [
    left.length > 0 ? `left running: ${describeContainers(left)}` : 'nothing of it is running',
    ...(stopped.length > 0 ? [`left stopped: ${describeContainers(stopped)}`] : []),
  ].join('\n')
  const fix = [
    `see \`${shellCommand(['yard', 'logs', ...flag, ...missing])}\``,
    after.length > 0
      ? `\`${shellCommand(['yard', 'down', ...flag])}\` removes what it left (volumes stay), and the next \`yard up\` makes it afresh`
      : undefined,
    HOST_SETUP.test(output)
      ? 'if the engine cannot run containers on this host, `yard doctor` says why and `yard doctor --fix` writes the containers.conf it may need'
      : undefined,
    "run with --verbose for the provider's command",
  ].filter(Boolean)
  return new OperationError(
    missing.length > 0
      ? `${target.project}: ${missing.join(', ')} did not start`
      : `${provider} up failed with exit code ${outcome.exitCode}`,
    {
      why: `${[said, exited].filter(Boolean).join('\n') || `${provider} exited ${outcome.exitCode}`}\n${state}`,
      fix: fix.join('; '),
    },
  )
}
