/** The kernel: the command context (warnings, runner, state dirs), atomic writes, units. */
export {createContext} from './context.js'
export type {YardContext} from './context.js'
export {ensureStateDir} from './state.js'
export {formatAge, formatBytes} from './units.js'
