/**
 * What every core use case receives instead of reaching for globals (STYLE.md: streams and
 * environment are injected): the environment, the working directory, the process runner and
 * a warning sink.
 */
import {existsSync} from 'node:fs'

import type {ProgressPort} from '../../sdk/progress.js'

import {terminalSafe} from '../../sdk/errors.js'
import {ProcessRunner} from '../../sdk/process.js'
import {containersConfPath} from './state.js'

export interface YardContext {
  env: NodeJS.ProcessEnv
  cwd: string
  runner: ProcessRunner
  /** Warnings and notes for the user (stderr); never data. */
  warn: (message: string) => void
  /** Where long use cases report their steps (progress.ts); absent: nothing is reported. */
  progress?: ProgressPort
}

/**
 * The environment every external command gets: `CONTAINERS_CONF` is the user's own when set,
 * else yard's file of DESIGN.md §8 when it exists.
 */
export function childEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  if (env.CONTAINERS_CONF) return {CONTAINERS_CONF: env.CONTAINERS_CONF}
  const own = containersConfPath(env)
  return existsSync(own) ? {CONTAINERS_CONF: own} : {}
}

/** Builds a context for the current process. */
export function createContext(
  options: {
    verbose?: boolean
    env?: NodeJS.ProcessEnv
    cwd?: string
    warn?: (message: string) => void
    progress?: ProgressPort
    log?: (line: string) => void
  } = {},
): YardContext {
  const env = options.env ?? process.env
  const warn = options.warn ?? ((message: string) => process.stderr.write(message + '\n'))
  return {
    env,
    cwd: options.cwd ?? process.cwd(),
    runner: new ProcessRunner({
      verbose: options.verbose,
      env: {...env, ...childEnv(env)},
      log: options.log ?? ((line) => process.stderr.write(terminalSafe(line) + '\n')),
    }),
    warn,
    ...(options.progress && {progress: options.progress}),
  }
}
