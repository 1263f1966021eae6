/**
 * The labels yard puts on everything a stack creates (DESIGN.md §3.1 "Ownership", §4.2), and the
 * override file that adds them through the compose provider.
 */
import type {Target} from '../../core/backend.js'
import {OWNER_LABEL, PROJECT_LABEL} from '../../core/labels.js'
import type {ComposeModel} from './compose-model.js'

export {OWNER_LABEL, PROJECT_LABEL, ROLE_LABEL} from '../../core/labels.js'
/** Set by every compose provider on containers, volumes and networks. */
export const COMPOSE_PROJECT_LABEL = 'com.docker.compose.project'
export const COMPOSE_SERVICE_LABEL = 'com.docker.compose.service'
export const COMPOSE_WORKING_DIR_LABEL = 'com.docker.compose.project.working_dir'

/** yard's own labels for a target. */
export function yardLabels(target: Target): Record<string, string> {
  return {[OWNER_LABEL]: target.owner, [PROJECT_LABEL]: target.project}
}

/** Labels of a volume or network yard creates itself, as the provider would plus yard's. */
export function resourceLabels(target: Target): Record<string, string> {
  return {[COMPOSE_PROJECT_LABEL]: target.project, 'io.podman.compose.project': target.project, ...yardLabels(target)}
}

export interface LabelPlan {
  /** The override file's content: yard's labels on every service, volume and network it can carry. */
  override: Record<string, unknown>
  /** Project volumes and networks (full names) declared bare, which yard creates with its labels first. */
  create: {volumes: string[]; networks: string[]}
}

/**
 * Plans how yard's labels reach every service, volume and network of the project. Labels are
 * written in the form the files use (podman-compose 1.0.3 cannot merge a list with a map, nor a
 * bare `data:` with a body): when `bareInOverride` is false, bare volumes and networks are not in
 * the override but listed to be created beforehand, which the provider then reuses.
 * External volumes and networks are not the project's and get nothing.
 */
export function planLabels(model: ComposeModel, target: Target, options: {bareInOverride: boolean}): LabelPlan {
  const labels = yardLabels(target)
  const asForm = (form: 'list' | 'map' | undefined) => (form === 'list' ? Object.entries(labels).map(([key, value]) => `${key}=${value}`) : {...labels})
  const override: Record<string, Record<string, unknown>> = {services: {}}
  const create = {volumes: [] as string[], networks: [] as string[]}
  for (const service of model.services) override.services[service.name] = {labels: asForm(service.labelsForm)}
  for (const [section, resources] of [['volumes', model.volumes], ['networks', model.networks]] as const) {
    for (const resource of resources) {
      if (resource.external) continue
      if (resource.bare && !options.bareInOverride) {
        create[section].push(`${target.project}_${resource.name}`)
        continue
      }
      override[section] ??= {}
      override[section][resource.name] = {labels: asForm(resource.labelsForm)}
    }
  }
  const declaresDefault = model.networks.some((network) => network.name === 'default')
  if (!declaresDefault && model.services.some((service) => service.usesDefaultNetwork)) {
    override.networks ??= {}
    override.networks.default = {labels: asForm(undefined)}
  }
  return {override, create}
}
