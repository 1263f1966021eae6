/**
 * Runs yard commands in-process through @oclif/test, from the TypeScript sources, with a
 * chosen working directory and environment. The oclif manifest is ignored so tests never
 * depend on a build (DESIGN.md §9).
 */
import {type Config, run} from '@oclif/core'
import {captureOutput} from '@oclif/test'

import {loadTestConfig} from './oclif-config.js'

export {projectRoot} from './oclif-config.js'

const cached = new Map<string, Promise<Config>>()

type CommandIds = Map<{id: string; aliases?: string[]}, {id: string; aliases?: string[]}>
const originalIds = new WeakMap<Config, CommandIds>()

/**
 * The CLI's oclif Config from src/ (no manifest, no user plugins), with the named fixture
 * plugins of test/fixtures/plugins/ linked; loaded once per set of plugins.
 */
export async function testConfig(fixturePlugins: string[] = []): Promise<Config> {
  const key = fixturePlugins.join(',')
  if (!cached.has(key))
    cached.set(
      key,
      loadTestConfig(fixturePlugins).then((config) => {
        originalIds.set(config, new Map(commandsOf(config).map((command) => [command, {...command}])))
        return config
      }),
    )
  return cached.get(key)!
}

/** Every command object the config holds: its index and each plugin's list. */
function commandsOf(config: Config): Array<{id: string; aliases?: string[]}> {
  return [...new Set([...config.commands, ...[...config.plugins.values()].flatMap((plugin) => plugin.commands)])]
}

/**
 * Puts back the ids and aliases oclif's help rewrote with the topic separator in the shared
 * config's command objects (@oclif/core help/index.js formatCommand and formatCommands write
 * `command.id` in place): harmless in a CLI that prints help and exits, but a later run in this
 * process would then look `box up` up as `box up`, not `box:up`, and miss it.
 */
function restoreIds(config: Config): void {
  for (const [command, original] of originalIds.get(config) ?? []) {
    command.id = original.id
    if (original.aliases) command.aliases = original.aliases
  }
}

export interface YardRun {
  stdout: string
  stderr: string
  exitCode: number
  /** Parsed stdout when it is JSON. */
  json?: unknown
}

/**
 * Runs `yard <args>` with `cwd` and `env` (merged over process.env; undefined deletes a
 * variable), restoring both afterwards; `plugins` links fixture plugins (see `testConfig`).
 */
export async function yard(
  args: string[],
  options: {cwd?: string; env?: Record<string, string | undefined>; plugins?: string[]} = {},
): Promise<YardRun> {
  const config = await testConfig(options.plugins)
  const savedCwd = process.cwd()
  const savedEnv = {...process.env}
  const savedExitCode = process.exitCode
  try {
    if (options.cwd) process.chdir(options.cwd)
    for (const [key, value] of Object.entries(options.env ?? {})) {
      if (value === undefined) delete process.env[key]
      else process.env[key] = value
    }

    // Not @oclif/test's runCommand: it joins and re-splits argv on spaces, losing "" and 'a b'.
    const result = await captureOutput(async () => run(args, config))
    const {error} = result
    const exitCode = error ? (error.oclif?.exit ?? 1) : 0
    let json: unknown
    try {
      json = JSON.parse(result.stdout)
    } catch {
      json = undefined
    }

    return {
      stdout: result.stdout,
      // oclif prints a thrown error's message, but not the ExitError of `this.exit(n)` ("EEXIT: n").
      stderr: result.stderr + (printsMessage(error, exitCode, result.stderr) ? error!.message : ''),
      exitCode,
      json,
    }
  } finally {
    restoreIds(config)
    process.chdir(savedCwd)
    for (const key of Object.keys(process.env)) if (!(key in savedEnv)) delete process.env[key]
    Object.assign(process.env, savedEnv)
    process.exitCode = savedExitCode
  }
}

/** Whether oclif's error handler would print `error`'s message: a failure not already said and not an exit. */
function printsMessage(error: (Error & {code?: string}) | undefined, exitCode: number, stderr: string): boolean {
  return error !== undefined && exitCode !== 0 && error.code !== 'EEXIT' && !stderr.includes(error.message)
}
