/**
 * Dashboard services over rows kept in memory, for the screen's tests (ink-testing-library and the
 * tmux pane of test/support/dashboard-pane.tsx): what the screen asks for is recorded in `calls`.
 */
import type {ClusterRow, DashboardMode, LocalRow} from '../../src/core/dashboard/dashboard.js'
import type {DashboardServices} from '../../src/tui/dashboard-app.js'

import {nameProblem} from '../../src/core/identity/identity.js'

export function localRow(name: string, offset: number): LocalRow {
  return {
    name,
    branch: name === 'main' ? 'main' : `wt/${name}`,
    path: `/src/app-worktrees/${name}`,
    head: 'a'.repeat(40),
    base: null,
    offset,
    offsetSource: name === 'main' ? 'main' : 'hash',
    project: name === 'main' ? 'app' : `app-${name}`,
    dirty: {modified: 0, untracked: 0},
    ahead: 0,
    behind: 0,
    missing: false,
    locked: false,
    ports: {WEB_PORT: 3000 + offset},
    clashesWith: [],
    stack: {state: 'absent', running: 0, total: 0},
    box: {state: 'running', running: 1, total: 1},
    trust: 'trusted',
  }
}

export function sandboxRow(name: string, offset: number): ClusterRow {
  return {
    name,
    project: `app-${name}`,
    runtime: 'podman',
    phase: 'Running',
    node: null,
    offset,
    offsetSource: 'label',
    ports: {WEB_PORT: 3000 + offset},
    repos: [
      {
        slot: 'app',
        identity: '/up/app',
        key: 'app-12345678',
        stale: false,
        lastFetched: new Date().toISOString(),
        lastError: null,
        worktrees: [{branch: `wt/${name}`, path: `/work/app/${name}`, dirty: false}],
      },
    ],
    clashesWith: [],
    lastFetched: {'app-12345678': new Date().toISOString()},
  }
}

/** A plan long enough to need three lines at 80 columns (the volumes a teardown deletes). */
export const LONG_PLAN = `remove w2 (wt/w2): directory removed; ${Array.from({length: 6}, (_, index) => `volume app-w2_data${index}`).join(', ')} deleted; branch kept`

/** A refusal longer than the status line's three lines at 80 columns, ending with its fix. */
export const LONG_REFUSAL = `w10 has unsaved work: ${Array.from({length: 12}, (_, index) => `src/module-${index}/file.ts modified`).join(', ')} — fix: commit or stash them, or run yard worktree remove w10 --force`

/**
 * Rows main, w10, w2, w1 (out of order, as a backend may give them); sandboxes `sbx` (or none
 * with `emptyCluster`). `x` on w2 plans LONG_PLAN, on w10 refuses with LONG_REFUSAL.
 */
export function memoryServices(options: {emptyCluster?: boolean} = {}, overrides: Partial<DashboardServices> = {}) {
  const calls: string[] = []
  const local = [localRow('main', 0), localRow('w10', 10), localRow('w2', 2), localRow('w1', 1)]
  const cluster = options.emptyCluster ? [] : [sandboxRow('sbx', 12)]
  const services: DashboardServices = {
    load: async (mode: DashboardMode) => ({
      rows: mode === 'local' ? local.map((row) => ({...row})) : cluster.map((row) => ({...row})),
      notes: [],
    }),
    up: async (name) => `${name} is up`,
    down: async (name) => `${name} is down`,
    async planRemove(name, mode = 'local') {
      if (name === 'w10') throw Object.assign(new Error(LONG_REFUSAL), {})
      if (mode === 'cluster') {
        if (name === 'dirty') throw new Error(`the sandbox ${name} holds unsaved work: app/wt-dirty: 1 modified`)
        return `remove sandbox ${name}: pod app-${name}, lease sandbox app-${name} on the cache app-12345678`
      }

      return name === 'w2' ? LONG_PLAN : `remove ${name} (wt/${name}): directory removed; branch kept`
    },
    async remove(name, mode = 'local') {
      calls.push(`remove ${mode} ${name}`)
      const rows = mode === 'local' ? local : cluster
      rows.splice(
        rows.findIndex((row) => row.name === name),
        1,
      )
      return mode === 'local' ? `removed ${name}; its branch is kept` : `removed sandbox ${name}`
    },
    async boxUp(name) {
      calls.push(`box up ${name}`)
      return `the box of ${name} is up`
    },
    checkName: nameProblem,
    async create(mode, name) {
      calls.push(`create ${mode} ${name}`)
      if (mode === 'local') local.push(localRow(name, 33))
      else cluster.push(sandboxRow(name, 33))
      return `created ${mode === 'local' ? 'worktree' : 'sandbox'} ${name}`
    },
    details: async (name) => ({name, containers: [], logs: [], git: [`## wt/${name}`], gitMore: 0, notes: []}),
    ...overrides,
  }
  return {services, calls}
}
