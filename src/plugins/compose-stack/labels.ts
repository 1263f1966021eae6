/**
 * The labels yard puts on everything a stack creates (DESIGN.md §3.1 "Ownership", §4.2); the
 * rendered compose file carries them (isolate.ts).
 */
import type {Target} from '../../sdk/target.js'

import {OWNER_LABEL, PROJECT_LABEL} from '../../sdk/labels.js'

export {OWNER_LABEL, PROJECT_LABEL, ROLE_LABEL} from '../../sdk/labels.js'
/** Set by every compose provider on containers, volumes and networks. */
export const COMPOSE_PROJECT_LABEL = 'com.docker.compose.project'
export const COMPOSE_SERVICE_LABEL = 'com.docker.compose.service'
export const COMPOSE_WORKING_DIR_LABEL = 'com.docker.compose.project.working_dir'
/**
 * The checkout a stack container was started from: the provider's working_dir label names the
 * rendered file's directory (in the state directory), not the checkout.
 */
export const CHECKOUT_LABEL = 'yard.dev/checkout'
/**
 * A hash of the service's rendered definition (stack-plan.ts): `up` recreates a stopped
 * container whose hash is not the current one, instead of starting it as it was made.
 */
export const CONFIG_LABEL = 'yard.dev/config'

/** yard's own labels for a target. */
export function yardLabels(target: Target): Record<string, string> {
  return {[OWNER_LABEL]: target.owner, [PROJECT_LABEL]: target.project}
}

/** Labels of a volume or network yard creates itself, as the provider would plus yard's. */
export function resourceLabels(target: Target): Record<string, string> {
  return {[COMPOSE_PROJECT_LABEL]: target.project, 'io.podman.compose.project': target.project, ...yardLabels(target)}
}
