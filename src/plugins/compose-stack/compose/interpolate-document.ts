import type {LoadContext} from './loader.js'
import type {Mapping} from './types.js'
import type {ComposeDocument} from './yaml.js'

import {interpolateModel} from './interpolate.js'

/** Interpolates a document's model (in place) with the context's environment. */
export function interpolateDocument(document: ComposeDocument, file: string, context: LoadContext): Mapping {
  return interpolateModel(document.value, context.env, file, (key, name) =>
    context.session.unsetVariable(file, key, name),
  ) as Mapping
}
