/** The dashboard's data (DESIGN.md §6): rows, details and actions; the TUI renders them. */
export {createFromDashboard} from './create.js'
export {gatherCluster, gatherLocal, gatherSnapshot} from './dashboard.js'
export type {ClusterRow, DashboardMode, DashboardSnapshot, LocalRow, RunState} from './dashboard.js'
export {gatherDetails} from './details.js'
export type {CheckoutDetails} from './details.js'
export {dashboardTracer, traced} from './trace.js'
export type {Tracer} from './trace.js'
