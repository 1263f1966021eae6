/**
 * The `yard.dev/*` labels yard puts on what it creates — stacks, boxes, sandbox pods (DESIGN.md
 * §3.1 "Ownership", §4.2, §5.2): one set of names for every backend, so an owner or a project is
 * found the same way whatever made it.
 */

/**
 * Hash of the repository root's real path: the main checkout, or the bare layout's parent of
 * `.bare` (`Target.owner`).
 */
export const OWNER_LABEL = 'yard.dev/owner'
/** The project name `<prefix>-<name>`. */
export const PROJECT_LABEL = 'yard.dev/project'
/** The worktree or sandbox name. */
export const NAME_LABEL = 'yard.dev/name'
/** The offset the identity had when created. */
export const OFFSET_LABEL = 'yard.dev/offset'
/** The project prefix, for listing every object of a project at once. */
export const PREFIX_LABEL = 'yard.dev/prefix'
/** What a container is for when it is not a compose service (`box`). */
export const ROLE_LABEL = 'yard.dev/role'
