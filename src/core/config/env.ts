/**
 * The environment a stack command gets (DESIGN.md §3.5) and its renderings for shells.
 */
import type {Target} from '../../sdk/target.js'

import {singleQuote} from '../../sdk/shell.js'
import {childEnv, type YardContext} from '../kernel/context.js'

/**
 * Builds the environment of one target: `MAIN_REPO`, `WORKTREE` (absent for main, so
 * `${WORKTREE:-main}` works with every compose provider), `YARD_CHECKOUT`,
 * `COMPOSE_PROJECT_NAME`, `PODMAN_PROJECT`, every `[ports]` key, `CONTAINERS_CONF` (the user's
 * own, else yard's file when it exists) and the machine's engine socket variables.
 */
export function stackEnv(
  target: Target,
  context: YardContext,
  socketEnv: Record<string, string> = {},
): Record<string, string> {
  const env: Record<string, string> = {MAIN_REPO: target.mainPath}
  if (!target.isMain) env.WORKTREE = target.name
  Object.assign(env, {
    YARD_CHECKOUT: target.checkoutPath,
    COMPOSE_PROJECT_NAME: target.project,
    PODMAN_PROJECT: target.project,
  })
  for (const [key, port] of Object.entries(target.ports)) env[key] = String(port)
  Object.assign(env, childEnv(context.env), socketEnv)
  return env
}

export const ENV_FORMATS = ['sh', 'fish', 'json'] as const
export type EnvFormat = (typeof ENV_FORMATS)[number]

const fishQuote = (value: string) => `'${value.replaceAll('\\', '\\\\').replaceAll("'", String.raw`\'`)}'`

/** Renders `env` for `eval "$(yard env)"` (sh) or `yard env --format fish | source`. */
export function renderEnv(
  env: Record<string, string>,
  format: Exclude<EnvFormat, 'json'>,
  unset: string[] = [],
): string {
  const lines = Object.entries(env).map(([key, value]) =>
    format === 'sh' ? `export ${key}=${singleQuote(value)}` : `set -gx ${key} ${fishQuote(value)}`,
  )
  for (const key of unset) lines.push(format === 'sh' ? `unset ${key}` : `set -e ${key}`)
  return lines.join('\n')
}
