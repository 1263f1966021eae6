import type {YardContext} from '../kernel/context.js'
/**
 * `yard config` (DESIGN.md §3.2, Appendix A): every effective value of the targeted checkout's
 * config with its origin.
 */
import type {Origin, ProjectConfig} from './config.js'

import {openWorkspace, targetName, worktreePath} from '../workspace/workspace.js'
import {knownKeys} from './config-schema.js'
import {configCachePath, loadConfig} from './config.js'

export type ConfigReport = Record<string, {value: unknown; origin: Origin}>

/** Flattens a config into `table.key` → {value, origin}, sorted by key. */
export function reportConfig(config: ProjectConfig): ConfigReport {
  const report: ConfigReport = {}
  const tables: Record<string, Record<string, unknown>> = {
    project: config.project,
    worktrees: config.worktrees,
    machine: config.machine,
    stack: config.stack,
    box: config.box,
    cache: config.cache,
    cluster: config.cluster,
    ports: config.ports,
    'worktree-offsets': Object.fromEntries(
      Object.entries(config.pins).map(([name, value]) => [name, typeof value === 'bigint' ? Number(value) : value]),
    ),
  }
  for (const [table, values] of Object.entries(tables)) {
    for (const [key, value] of Object.entries(values))
      report[`${table}.${key}`] = {value, origin: config.origins[`${table}.${key}`] ?? 'default'}
  }

  for (const table of Object.keys(tables)) {
    for (const key of knownKeys(table)) report[`${table}.${key}`] ??= {value: null, origin: 'default'}
  }

  return Object.fromEntries(Object.entries(report).sort(([a], [b]) => a.localeCompare(b)))
}

/**
 * The config of the targeted checkout (DESIGN.md §3.3) with origins.
 * @throws InputError (exit 2) for invalid config.
 */
export async function targetConfigReport(context: YardContext, flag?: string): Promise<ConfigReport> {
  const workspace = await openWorkspace(context)
  const {name, isMain} = targetName(workspace, context, flag)
  const config = isMain
    ? workspace.config
    : await loadConfig({
        mainPath: workspace.mainPath,
        cache: configCachePath(context.env, workspace.commonDir),
        checkout: {path: worktreePath(workspace, name), name},
        env: context.env,
        warn: context.warn,
      })
  return reportConfig(config)
}
