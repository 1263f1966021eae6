/**
 * Git LFS objects of a cache (DESIGN.md §5.1): with `[cache] lfs = "all"` — the default when
 * the default branch's `.gitattributes` names `filter=lfs` — a clone or fetch also runs `git lfs
 * fetch --all origin`, so the objects of every ref land in the cache's own `lfs/objects`, which
 * nothing prunes (yard never runs `git lfs prune`). A clone made from the cache (`clone
 * --shared`, as a sandbox's) then reads them from there with no remote reachable: its origin is
 * the cache path, which git-lfs reads through its local-file transfer.
 */
import type {ProcessRunner} from '../../sdk/process.js'
import type {CacheBudgets} from './repository.js'

/** `[cache] lfs`: fetch every ref's LFS objects, or none; undefined is "all" when the repository uses LFS. */
export type LfsMode = 'all' | 'off'

/** Whether `.gitattributes` at the default branch (`HEAD`) routes any path through the lfs filter. */
export async function usesLfs(runner: ProcessRunner, repo: string): Promise<boolean> {
  const attributes = await runner.git(['cat-file', 'blob', 'HEAD:.gitattributes'], {cwd: repo, allowFailure: true})
  return attributes.exitCode === 0 && /(^|\s)filter=lfs(\s|$)/m.test(attributes.stdout)
}

/**
 * Fetches the LFS objects of every ref into the cache when `mode` (or, undefined, the
 * repository) asks for them. A failure (git-lfs missing, the LFS server unreachable) is returned,
 * not thrown: the git objects are fetched, and the cache stays usable.
 * @returns null when nothing was to be done or it succeeded, else why it failed.
 */
export async function fetchLfs(
  runner: ProcessRunner,
  repo: string,
  mode: LfsMode | undefined,
  budgets: CacheBudgets,
): Promise<string | null> {
  if (mode === 'off' || (mode === undefined && !(await usesLfs(runner, repo)))) return null
  const fetched = await runner.git(['lfs', 'fetch', '--all', 'origin'], {
    cwd: repo,
    allowFailure: true,
    timeoutMs: budgets.cloneMs,
    budget: 'lfs fetch',
  })
  if (fetched.exitCode === 0) return null
  if (fetched.stderr.includes('is not a git command'))
    return 'git-lfs is not installed (scripts/setup-system installs it)'
  return fetched.stderr.trim().split('\n').filter(Boolean).at(-1) ?? `git lfs fetch exited ${fetched.exitCode}`
}
