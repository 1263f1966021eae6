/** Kept for existing importers; the implementation lives with the compose resolver. */
export {interpolate, interpolateDeep, MissingVariableError} from './compose/interpolate.js'
