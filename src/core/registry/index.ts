/** The backend registry: plugins' `yard:backends` factories, sorted, checked and created. */
export {createBackends} from './backends.js'
export type {Backends} from './backends.js'
export {classifyPluginSource, consentToInstall} from './plugin-source.js'
export {loadRegistry} from './registry.js'
export type {BackendEntry} from './registry.js'
