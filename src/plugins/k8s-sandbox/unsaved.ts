/**
 * Unsaved work in a sandbox (DESIGN.md §5.2, `rm`): modified and untracked files per worktree,
 * and every ref holding commits the cache lacks — local branches, detached HEADs, stash entries —
 * found in one exec into the pod (each exec is a round trip; a clean `rm` makes exactly one).
 * "What the cache has" is what the clone borrows: the tips of its alternate (`--alternate-refs`,
 * the cache mounted at `/repos/<key>`) and origin's remote-tracking refs (a push updates those).
 */
import path from 'node:path'

import type {SandboxSpec, SandboxUnsaved, SandboxUnsavedRef, SandboxWorktree} from '../../sdk/sandbox.js'
import type {SandboxRuntime} from './runtime.js'

import {OperationError} from '../../sdk/errors.js'

/**
 * The revisions kept elsewhere in every count and bundle: what the cache has, and what
 * `yard sandbox pull` brought to the host (`refs/yard/pulled/<branch>`, markPulled).
 */
export const CACHE_HAS = ['--remotes=origin', '--alternate-refs', '--glob=refs/yard/pulled/*']

/** CACHE_HAS as words of a shell script, each single-quoted (the glob is git's, not the shell's). */
export const CACHE_HAS_SH = CACHE_HAS.map((word) => `'${word}'`).join(' ')

/**
 * Runs in the pod as `sh -c SCAN_SCRIPT sh SLOT…` (a fixed script; the slots are arguments, never
 * script text). Per present slot it prints tab-separated lines, in this order:
 * `slot S`; per worktree `worktree PATH HEAD REF` (REF empty when detached), then its `dirty LINE`s
 * (`git status --porcelain`), `lfs N` when it uses LFS (files still pointers: `-` in `git lfs
 * ls-files`) and, when detached, `detached N` (commits on no branch the cache
 * lacks); `ref REFNAME SHA N` per local branch with N > 0 such commits (only looked at when the
 * slot has any); `stash SHA SUBJECT` per stash entry, newest first; `pulled BRANCH SHA` per branch
 * `yard sandbox pull` recorded (markPulled).
 */
export const SCAN_SCRIPT = `
for slot do
  home="/work/$slot/default"
  [ -e "$home/.git" ] || continue
  printf 'slot\\t%s\\n' "$slot"
  list=$(git -C "$home" worktree list --porcelain) || exit 1
  printf '%s\\n\\n' "$list" | while IFS= read -r line; do
    case $line in
      'worktree '*) dir=\${line#worktree }; head=; branch= ;;
      'HEAD '*) head=\${line#HEAD } ;;
      'branch '*) branch=\${line#branch } ;;
      '')
        if [ -n "$dir" ] && [ -d "$dir" ]; then
          printf 'worktree\\t%s\\t%s\\t%s\\n' "$dir" "$head" "$branch"
          changes=$(git -C "$dir" status --porcelain --untracked-files=all) || exit 1
          [ -z "$changes" ] || printf '%s\\n' "$changes" | while IFS= read -r entry; do printf 'dirty\\t%s\\n' "$entry"; done
          if [ -f "$dir/.gitattributes" ] && grep -q 'filter=lfs' "$dir/.gitattributes" && command -v git-lfs >/dev/null; then
            printf 'lfs\\t%s\\n' "$(git -C "$dir" lfs ls-files 2>/dev/null | grep -c '^[0-9a-f]* - ')"
          fi
          if [ -z "$branch" ] && [ -n "$head" ]; then
            count=$(git -C "$dir" rev-list --count HEAD --not --branches ${CACHE_HAS_SH}) || exit 1
            printf 'detached\\t%s\\n' "$count"
          fi
        fi
        dir= ;;
    esac
  done || exit 1
  ahead=$(git -C "$home" rev-list --count --branches --not ${CACHE_HAS_SH}) || exit 1
  if [ "$ahead" != 0 ]; then
    heads=$(git -C "$home" for-each-ref --format='%(objectname) %(refname)' refs/heads) || exit 1
    printf '%s\\n' "$heads" | while read -r sha ref; do
      count=$(git -C "$home" rev-list --count "$sha" --not ${CACHE_HAS_SH}) || exit 1
      [ "$count" = 0 ] || printf 'ref\\t%s\\t%s\\t%s\\n' "$ref" "$sha" "$count"
    done || exit 1
  fi
  if git -C "$home" rev-parse --quiet --verify refs/stash >/dev/null; then
    stashes=$(git -C "$home" log -g --format='%H%x09%gs' refs/stash) || exit 1
    [ -n "$stashes" ] || stashes=$(git -C "$home" rev-parse refs/stash)
    printf '%s\\n' "$stashes" | while IFS= read -r entry; do printf 'stash\\t%s\\n' "$entry"; done
  fi
  git -C "$home" for-each-ref --format='pulled%09%(refname:strip=3)%09%(objectname)' refs/yard/pulled || exit 1
done
`

const plural = (count: number) => `${count} commit${count === 1 ? '' : 's'}`

/** The ref a detached HEAD of worktree `dir` gets in the bundle. */
export const detachedRef = (slot: string, worktree: string) =>
  `refs/yard/sandbox/${slot}/detached-${path.posix.basename(worktree)}`
/** The ref `stash@{n}` gets in the bundle: `…/stash` for the newest. */
export const stashRef = (slot: string, index: number) =>
  `refs/yard/sandbox/${slot}/stash${index === 0 ? '' : `-${index}`}`

/** Reads SCAN_SCRIPT's output (see there). */
export function parseScan(stdout: string): SandboxUnsaved {
  const worktrees: SandboxWorktree[] = []
  const refs: SandboxUnsavedRef[] = []
  const pulled: NonNullable<SandboxUnsaved['pulled']> = []
  let slot = ''
  let stashes = 0
  let current: SandboxWorktree | undefined
  for (const line of stdout.split('\n')) {
    const [tag, ...fields] = line.split('\t')
    if (tag === 'slot') {
      slot = fields[0]
      stashes = 0
      current = undefined
    } else if (tag === 'worktree') {
      const [worktreePath, head, ref] = fields
      current = {
        slot,
        path: worktreePath,
        head: head || null,
        branch: ref ? ref.replace(/^refs\/heads\//, '') : null,
        dirty: [],
        unpushed: [],
      }
      worktrees.push(current)
    } else if (tag === 'dirty' && current) {
      current.dirty.push(fields.join('\t'))
    } else if (tag === 'lfs' && current) {
      current.lfsPointers = Number(fields[0]) || 0
    } else if (tag === 'detached' && current?.head) {
      const commits = Number(fields[0])
      if (!(commits > 0)) continue
      current.unpushed.push(`detached HEAD ${current.head.slice(0, 7)} (${plural(commits)})`)
      refs.push({
        slot,
        ref: detachedRef(slot, current.path),
        commit: current.head,
        commits,
        what: `${current.path}: detached HEAD ${current.head.slice(0, 7)} (${plural(commits)}) on no branch`,
      })
    } else if (tag === 'ref') {
      const [ref, commit, count] = fields
      const branch = ref.replace(/^refs\/heads\//, '')
      const commits = Number(count)
      const holder = worktrees.find((worktree) => worktree.slot === slot && worktree.branch === branch)
      holder?.unpushed.push(`${branch} (${plural(commits)})`)
      refs.push({
        slot,
        ref,
        commit,
        commits,
        what: `${holder?.path ?? `/work/${slot}`}: ${holder ? '' : 'branch '}${branch} (${plural(commits)})`,
      })
    } else if (tag === 'stash') {
      const [commit, ...subject] = fields
      const index = stashes++
      refs.push({
        slot,
        ref: stashRef(slot, index),
        commit,
        commits: 1,
        what: `/work/${slot}: stash@{${index}}${subject.length > 0 ? ` (${subject.join('\t')})` : ''}`,
      })
    } else if (tag === 'pulled') {
      const [branch, commit] = fields
      if (branch && /^[0-9a-f]{40,64}$/.test(commit ?? '')) pulled.push({slot, branch, commit})
    }
  }

  return {worktrees, refs, pulled}
}

/**
 * Every worktree of every slot with its dirty files, and every unsaved ref: one exec.
 * @throws OperationError (exit 1) when git fails in the pod, or the pod does not run the script.
 */
export async function podUnsaved(runtime: SandboxRuntime, pod: string, spec: SandboxSpec): Promise<SandboxUnsaved> {
  const result = await runtime.run(pod, ['sh', '-c', SCAN_SCRIPT, 'sh', ...spec.repos.map((repo) => repo.slot)])
  if (result.exitCode !== 0) {
    // The script fails with 1 (a git it runs failed); anything else is the engine or kubectl not
    // running it at all (podman exec: 125 and up; a container stopped under a running pod).
    const git = result.exitCode === 1
    const engine =
      runtime.id === 'podman'
        ? 'podman pod ps lists the pods, podman pod restart POD starts one again'
        : 'kubectl get pods shows their state'
    throw new OperationError(`looking for unsaved work in the sandbox pod ${pod} failed (exit ${result.exitCode})`, {
      why: result.stderr.trim() || undefined,
      fix: git
        ? 'fix what git reports (yard exec NAME/BRANCH -- git status), then run the command again'
        : `the pod's workspace container did not run the check: see that it runs (${engine}), then run the command again`,
    })
  }

  return parseScan(result.stdout)
}

/** Every worktree of every slot with its dirty files and unpushed branches. */
export async function podWorktrees(
  runtime: SandboxRuntime,
  pod: string,
  spec: SandboxSpec,
): Promise<SandboxWorktree[]> {
  return (await podUnsaved(runtime, pod, spec)).worktrees
}
