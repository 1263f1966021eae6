/**
 * The resolved model as the text of a compose file a provider runs as is. Written as YAML 1.1
 * (PyYAML, which podman-compose uses, reads `22:22` as a base-60 number and `on`/`yes` as
 * booleans unless quoted; Go's YAML reads the quoted forms as the same strings), with every
 * `$` doubled, since the provider interpolates the file once more.
 */
import {stringify} from 'yaml'

import type {ComposeModelDocument} from './types.js'

import {escapeInterpolation} from './interpolate.js'

/** The compose file text of a resolved model (see the module comment for why it is so written). */
export function renderComposeFile(model: ComposeModelDocument): string {
  return stringify(escapeInterpolation(model), {version: '1.1', aliasDuplicateObjects: false, lineWidth: 0})
}
