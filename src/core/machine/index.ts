/** The machine and the box (DESIGN.md §4.3, §4.2): the engine every stack runs on. */
export {boxDown, boxPs, boxUp, SHELL_ARGV} from './box.js'
export {buildDefaultImage} from './image.js'
export type {ImageBuild} from './image.js'
export {machineInit, machineRm, machineSocketEnv, machineStart, machineStatus, machineStop} from './machine.js'
export type {MachineOutcome} from './machine.js'
