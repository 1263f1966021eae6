/** The host: `yard doctor` and shell completion. */
export {completionCandidates} from './completion.js'
export type {CompletionCommand} from './completion.js'
export {runDoctor} from './doctor.js'
export type {CheckResult, DoctorReport} from './doctor.js'
