/**
 * What `rm --force` keeps of a sandbox (DESIGN.md §5.2): per slot with unsaved refs one bundle of
 * exactly those refs and the objects the cache lacks (`git bundle create … --not <what the cache
 * has>`, git-bundle(1)), and a patch per dirty worktree — made in one exec, then copied out.
 */
import {promises as fs} from 'node:fs'
import path from 'node:path'

import type {SandboxRecord, SandboxSaved, SandboxSpec, SandboxUnsaved} from '../../sdk/sandbox.js'
import type {SandboxRuntime} from './runtime.js'

import {InputError, OperationError} from '../../sdk/errors.js'
import {checkBranchDirectory} from '../../sdk/sandbox-repos.js'
import {defaultCheckout} from './attach.js'
import {CACHE_HAS_SH} from './unsaved.js'

const SAVE_DIR = '/tmp/yard-save'

/**
 * Runs in the pod as `sh -c SAVE_SCRIPT sh STEP…` (a fixed script; every path and ref is an
 * argument). Steps: `ref HOME REF SHA` points REF at SHA (a detached HEAD or a stash entry gets a
 * name to bundle); `bundle HOME SLOT FILE` bundles the branches and `refs/yard/sandbox/SLOT/*`
 * without what the cache has (branches the cache has whole drop out); `patch DIR FILE` writes a
 * binary diff of DIR against HEAD, untracked files included, through a scratch index so the
 * worktree's own index is untouched.
 */
export const SAVE_SCRIPT = `
rm -rf ${SAVE_DIR} && mkdir -p ${SAVE_DIR} || exit 1
while [ $# -gt 0 ]; do
  case $1 in
    ref) git -C "$2" update-ref "$3" "$4" || exit 1; shift 4 ;;
    bundle) git -C "$2" bundle create --quiet "$4" --branches --glob="refs/yard/sandbox/$3/*" --not ${CACHE_HAS_SH} || exit 1; shift 4 ;;
    patch)
      GIT_INDEX_FILE="$3.index" git -C "$2" read-tree HEAD && GIT_INDEX_FILE="$3.index" git -C "$2" add --all && GIT_INDEX_FILE="$3.index" git -C "$2" diff --cached --binary HEAD >"$3" || exit 1
      rm -f "$3.index"; shift 3 ;;
    *) echo "unknown step $1" >&2; exit 2 ;;
  esac
done
`

/**
 * Saves `work` (podUnsaved) into the host directory `dir`, created when something is saved:
 * `<slot>.bundle` per slot with unsaved refs, `<slot>-<dir>.patch` per dirty worktree.
 * @throws OperationError (exit 1) when git or a copy fails; nothing is removed then.
 */
export async function saveUnsaved(
  runtime: SandboxRuntime,
  pod: string,
  spec: SandboxSpec,
  work: SandboxUnsaved,
  dir: string,
): Promise<SandboxSaved> {
  const steps: string[] = []
  const bundles: SandboxSaved['bundles'] = []
  const patches: SandboxSaved['patches'] = []
  for (const repo of spec.repos) {
    const refs = work.refs.filter((ref) => ref.slot === repo.slot)
    if (refs.length === 0) continue
    const home = defaultCheckout(repo.slot)
    for (const ref of refs.filter((entry) => !entry.ref.startsWith('refs/heads/')))
      steps.push('ref', home, ref.ref, ref.commit)
    const file = `${repo.slot}.bundle`
    steps.push('bundle', home, repo.slot, `${SAVE_DIR}/${file}`)
    bundles.push({slot: repo.slot, file: path.join(dir, file), refs: refs.map((ref) => ref.ref)})
  }

  for (const worktree of work.worktrees.filter((row) => row.dirty.length > 0 && row.head)) {
    const file = `${worktree.slot}-${path.posix.basename(worktree.path)}.patch`
    steps.push('patch', worktree.path, `${SAVE_DIR}/${file}`)
    patches.push({
      slot: worktree.slot,
      worktree: worktree.path,
      branch: worktree.branch,
      head: worktree.head!,
      file: path.join(dir, file),
    })
  }

  if (steps.length === 0) return {files: [], bundles, patches}
  const result = await runtime.run(pod, ['sh', '-c', SAVE_SCRIPT, 'sh', ...steps])
  if (result.exitCode !== 0) {
    throw new OperationError(
      `saving the unsaved work of the sandbox pod ${pod} failed (exit ${result.exitCode}); nothing was removed`,
      {
        why: result.stderr.trim() || undefined,
        fix: 'fix what git reports (yard exec NAME/BRANCH -- git status), then run yard sandbox rm --force again',
      },
    )
  }

  await fs.mkdir(dir, {recursive: true})
  const files = [...bundles, ...patches].map((entry) => entry.file)
  await Promise.all(files.map(async (file) => runtime.copyOut(pod, `${SAVE_DIR}/${path.basename(file)}`, file)))
  return {files, bundles, patches}
}

/**
 * Bundles the branch checked out in `/work/<slot>/<directory>` (its whole history: the host
 * fetching it may lack what the cache has) into the pod's `/tmp`, then copies it to `file`.
 * @throws InputError (exit 2) when there is no such worktree or its HEAD is detached;
 *   OperationError (exit 1) when git or the copy fails.
 */
export async function bundleBranch(
  runtime: SandboxRuntime,
  sandbox: SandboxRecord,
  place: {slot: string; directory: string},
  file: string,
): Promise<{branch: string; commit: string}> {
  const pod = sandbox.project
  const dir = `/work/${place.slot}/${checkBranchDirectory(place.directory)}`
  const head = await runtime.run(pod, ['git', '-C', dir, 'symbolic-ref', '--quiet', 'HEAD'])
  if (head.exitCode !== 0 || !head.stdout.trimStart().startsWith('refs/heads/')) {
    const missing = (await runtime.run(pod, ['test', '-d', dir])).exitCode !== 0
    throw new InputError(
      missing
        ? `the sandbox ${sandbox.name} has no ${dir}`
        : `${dir} in the sandbox ${sandbox.name} is on no branch (detached HEAD)`,
      {
        why: 'yard sandbox pull NAME/BRANCH fetches the branch checked out in /work/<slot>/<branch with "/" → "-">',
        fix: missing
          ? `name a branch yard sandbox list shows for ${sandbox.name}`
          : `check a branch out there first (yard exec ${sandbox.name}/${place.directory} -- git switch -c BRANCH)`,
      },
    )
  }

  const ref = head.stdout.trim()
  // Its own name: two pulls from one pod at once do not share a file.
  const bundle = `/tmp/yard-pull-${process.pid}-${Date.now()}.bundle`
  const made = await runtime.run(pod, ['git', '-C', dir, 'bundle', 'create', '--quiet', bundle, ref])
  const commit = await runtime.run(pod, ['git', '-C', dir, 'rev-parse', '--verify', `${ref}^{commit}`])
  if (made.exitCode !== 0 || commit.exitCode !== 0) {
    throw new OperationError(`could not bundle ${ref} in the sandbox pod ${pod}`, {
      why: (made.stderr || commit.stderr).trim() || undefined,
      fix: `check the branch (yard exec ${sandbox.name}/${place.directory} -- git log -1), then run yard sandbox pull again`,
    })
  }

  await runtime.copyOut(pod, bundle, file)
  await runtime.run(pod, ['rm', '-f', bundle])
  return {branch: ref.slice('refs/heads/'.length), commit: commit.stdout.trim()}
}

/**
 * Records in the pod that `commit` of `branch` is kept on the host (refs/yard/pulled/<branch>,
 * one of CACHE_HAS), after `yard sandbox pull` fetched it there; `null` deletes that record.
 * @throws OperationError (exit 1) when git in the pod cannot write the ref.
 */
export async function markPulled(
  runtime: SandboxRuntime,
  sandbox: SandboxRecord,
  place: {slot: string; directory: string},
  branch: string,
  commit: string | null,
): Promise<void> {
  const dir = `/work/${place.slot}/${checkBranchDirectory(place.directory)}`
  const ref = `refs/yard/pulled/${branch}`
  const marked = await runtime.run(sandbox.project, [
    'git',
    '-C',
    dir,
    'update-ref',
    ...(commit === null ? ['-d', ref] : [ref, commit]),
  ])
  if (marked.exitCode !== 0)
    throw new OperationError(`could not record the pull of ${branch} in the sandbox ${sandbox.name}`, {
      why: marked.stderr.trim() || undefined,
      fix: 'the commits are on the host all the same; yard sandbox rm counts them as unsaved until the next pull records them',
    })
}
