/**
 * The first attach in a pod whose slots are all empty (a cold create's), on the podman runtime:
 * the steps of attach.ts in one `podman exec` instead of one per step — the host's git identity,
 * origin's fetch-through script, then per slot the `--shared` clone of the cache at `default/`,
 * the branch worktree from the same base, the push url and the uploadpack. Nothing exists yet, so
 * no clash can be found and nothing existing is kept: the result is what attachInPod makes.
 */
import type {SandboxAttachResult, SandboxSpec} from '../../sdk/sandbox.js'
import type {SandboxRuntime} from './runtime.js'

import {OperationError} from '../../sdk/errors.js'
import {FETCH_THROUGH_PATH, fetchThroughScript} from '../../sdk/fetch-through.js'
import {withoutCredentials} from '../../sdk/repo-url.js'
import {branchDirectory} from '../../sdk/sandbox-repos.js'
import {repoMountPath} from './manifest.js'

/**
 * `$1` the branch, then `SLOT CACHE DIR REF PUSHURL` quintuples (REF empty: origin/HEAD); the
 * identity and the fetch-through script come in the environment, never spliced into the line.
 * The base is attach.ts's baseOf; a local branch of that name (the clone's default branch) is
 * checked out as it is, as attach.ts does. Prints `gitmodules SLOT` for a slot whose checkouts
 * name submodules, which attach.ts's submodule step then handles.
 */
const FRESH_SCRIPT = `set -e
git config --global safe.directory '*'
[ -z "$YARD_GIT_NAME" ] || git config --global user.name "$YARD_GIT_NAME"
[ -z "$YARD_GIT_EMAIL" ] || git config --global user.email "$YARD_GIT_EMAIL"
mkdir -p "\${YARD_FT_PATH%/*}"
printf '%s' "$YARD_FETCH_THROUGH" > "$YARD_FT_PATH.tmp"
chmod 755 "$YARD_FT_PATH.tmp"
mv -f "$YARD_FT_PATH.tmp" "$YARD_FT_PATH"
branch=$1
shift
while [ $# -gt 0 ]; do
  home="/work/$1/default"
  target="/work/$1/$3"
  git clone --quiet --shared -- "$2" "$home"
  if [ -z "$4" ]; then base=origin/HEAD
  elif git -C "$home" rev-parse --verify --quiet "refs/remotes/origin/$4" >/dev/null; then base="refs/remotes/origin/$4"
  else base=$4
  fi
  if git -C "$home" rev-parse --verify --quiet "refs/heads/$branch" >/dev/null; then
    git -C "$home" worktree add --quiet "$target" "$branch"
  else
    git -C "$home" worktree add --quiet --no-track -b "$branch" "$target" "$base"
  fi
  git -C "$home" remote set-url --push origin "$5"
  git -C "$home" config remote.origin.uploadpack "$YARD_FT_PATH"
  if [ -f "$home/.gitmodules" ] || [ -f "$target/.gitmodules" ]; then echo "gitmodules $1"; fi
  shift 5
done`

/**
 * Attaches `request.branch` in every slot of a pod with no slot checked out yet, in one exec.
 * @returns the slots as attachInPod reports them (submodules not yet initialised) and the slots
 *   whose checkouts have a `.gitmodules`.
 * @throws OperationError (exit 1) with git's message when a step fails in the pod.
 */
export async function attachFresh(
  runtime: SandboxRuntime,
  pod: string,
  spec: SandboxSpec,
  request: {branch: string; gitIdentity: {name?: string; email?: string}; fetchThroughSeconds: number},
): Promise<{slots: SandboxAttachResult['slots']; withGitmodules: Set<string>}> {
  const directory = branchDirectory(request.branch)
  const args = spec.repos.flatMap((repo) => [
    repo.slot,
    repoMountPath(repo.key),
    directory,
    repo.ref ?? '',
    withoutCredentials(repo.url),
  ])
  const env = {
    YARD_GIT_NAME: request.gitIdentity.name ?? '',
    YARD_GIT_EMAIL: request.gitIdentity.email ?? '',
    YARD_FT_PATH: FETCH_THROUGH_PATH,
    YARD_FETCH_THROUGH: fetchThroughScript(request.fetchThroughSeconds, 'a yard exec or yard cache agent'),
  }
  const result = await runtime.run(pod, ['sh', '-c', FRESH_SCRIPT, 'sh', request.branch, ...args], {env})
  if (result.exitCode !== 0) {
    throw new OperationError(`attaching ${request.branch} in the sandbox pod ${pod} failed (exit ${result.exitCode})`, {
      why: result.stderr.trim() || undefined,
      fix: 'fix what git reports, then run the command again',
    })
  }

  const withGitmodules = new Set(
    result.stdout
      .split('\n')
      .filter((line) => line.startsWith('gitmodules '))
      .map((line) => line.slice('gitmodules '.length)),
  )
  const slots = spec.repos.map((repo) => ({
    slot: repo.slot,
    default: `/work/${repo.slot}/default`,
    path: `/work/${repo.slot}/${directory}`,
    created: true,
  }))
  return {slots, withGitmodules}
}
