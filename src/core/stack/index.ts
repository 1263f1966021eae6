/** Stacks (DESIGN.md §4.2): one checkout's compose project, up, down, ps, logs. */
export {stackIsolationCheck} from './doctor-stack.js'
export {describeRunState, psAllCheckouts} from './stack-all.js'
export type {CheckoutContainers} from './stack-all.js'
export {describeSharedStop, describeTarget, stackDown, stackLogs, stackNuke, stackPs, stackUp} from './stack.js'
