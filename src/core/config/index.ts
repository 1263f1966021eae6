/** Configuration (DESIGN.md §6): yard.toml and yard.local.toml, `.env`, `yard init`. */
export {targetConfigReport} from './config-report.js'
export type {ConfigReport} from './config-report.js'
export {ENV_FORMATS, renderEnv, stackEnv} from './env.js'
export {initProject} from './init.js'
export type {InitResult} from './init.js'
