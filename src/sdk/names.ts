/** DNS-1123 label rule for names and prefixes (DESIGN.md §3.1): worktrees, sandboxes, slots. */
export const NAME_PATTERN = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/
