/** The workspace: the repository and its checkouts as git sees them (DESIGN.md §2). */
export {openWorkspace, resolveTarget, worktreePath} from './workspace.js'
