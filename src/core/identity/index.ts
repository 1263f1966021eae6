/** Identity (DESIGN.md §3): names, offsets, ports, pins and the one offset allocator. */
export {nameProblem} from './identity.js'
export {allPorts, implicitPortEnv, sandboxPorts, stackImplicitPorts, targetPorts} from './ports.js'
export type {PortsReport} from './ports.js'
