/**
 * References to containers by name in a worktree's rendered file (compose specification,
 * `network_mode: container:X` and `volumes_from: [container:X[:mode]]`): `container_name: X`
 * becomes `<project>-X` there (isolate.ts), so a reference to X follows it; so does one to main's
 * default container name of a service (`<prefix>_web_1`, `<prefix>-web-1`). `service:X` and a
 * plain service name refer to a service key, which does not change. A container that is not the
 * project's stays what it is and is shared by every checkout: joining its network namespace
 * cannot be isolated (refused unless `[stack] allow-shared` lists the service, like
 * `network_mode: host`); its volumes are shared (a "shared" entry).
 */
import type {Target} from '../../sdk/target.js'
import type {ComposeModelDocument} from './compose/types.js'
import type {IsolationSettings} from './isolate.js'

import {ALLOW_SHARED, type ReportEntry} from './isolation-report.js'

/**
 * What `container_name: name` is called in a worktree whose project is `project`: `<project>-name`,
 * unless it holds the project name already (`${COMPOSE_PROJECT_NAME}-db`, interpolated per
 * checkout), as fixed volume and network names are left.
 */
export function worktreeContainerName(name: string, project: string): string {
  return name.includes(project) ? name : `${project}-${name}`
}

/** The project's containers by the names a file may use, and what each is called in the worktree. */
function projectContainers(compose: ComposeModelDocument, target: Target): Map<string, string> {
  const names = new Map<string, string>()
  for (const [service, body] of Object.entries(compose.services)) {
    if (typeof body.container_name === 'string')
      names.set(body.container_name, worktreeContainerName(body.container_name, target.project))
    // docker compose v1 / podman-compose (`_`) and v2 (`-`) default names, index 1.
    names.set(`${target.prefix}_${service}_1`, `${target.project}_${service}_1`)
    names.set(`${target.prefix}-${service}-1`, `${target.project}-${service}-1`)
  }

  return names
}

/**
 * Rewrites the container references of `compose` (a worktree's, in place, before its
 * `container_name`s are renamed) and reports each rewrite, refusal and shared container.
 */
export function rewriteContainerReferences(
  compose: ComposeModelDocument,
  target: Target,
  settings: IsolationSettings,
): ReportEntry[] {
  const names = projectContainers(compose, target)
  const report: ReportEntry[] = []
  for (const [name, service] of Object.entries(compose.services)) {
    const mode = service.network_mode
    if (typeof mode === 'string' && mode.startsWith('container:')) {
      const container = mode.slice('container:'.length)
      const renamed = names.get(container)
      if (renamed !== undefined) {
        service.network_mode = `container:${renamed}`
        report.push({
          kind: 'rewrite',
          service: name,
          detail: `network_mode: container:${container}`,
          action: `joins container:${renamed}, this worktree's own`,
        })
      } else if (settings.allowShared.includes(name)) {
        report.push({
          kind: 'shared',
          service: name,
          detail: `network_mode: container:${container}`,
          action: `shares the network of container ${container}, which is not the project's, with every checkout ([stack] allow-shared); its ports do not move`,
        })
      } else {
        report.push({
          kind: 'refused',
          service: name,
          detail: `network_mode: container:${container} joins a container that is not the project's, so every checkout would share its network and ports`,
          action: `use network_mode: service:<service> for a service of the project, or allow it: ${ALLOW_SHARED}`,
        })
      }
    }

    if (!Array.isArray(service.volumes_from)) continue
    service.volumes_from = service.volumes_from.map((entry: unknown) => {
      if (typeof entry !== 'string' || !entry.startsWith('container:')) return entry
      const [container, ...mode] = entry.slice('container:'.length).split(':')
      const renamed = names.get(container)
      if (renamed === undefined) {
        report.push({
          kind: 'shared',
          service: name,
          detail: `volumes_from container:${container}`,
          action: `shared by every checkout: container ${container} is not the project's, so every worktree mounts the same volumes`,
        })
        return entry
      }

      const rewritten = ['container', renamed, ...mode].join(':')
      report.push({
        kind: 'rewrite',
        service: name,
        detail: `volumes_from ${entry}`,
        action: `mounts from ${rewritten}, this worktree's own`,
      })
      return rewritten
    })
  }

  return report
}
