/**
 * The Pod of a warm pool (docs/sandboxes.md, "Warm pool"), the same for every runtime: the sandbox
 * Pod of manifest.ts without a name, offset or published port, labelled with its pool instead of
 * an identity.
 */
import {randomBytes} from 'node:crypto'

import type {PoolOwner} from '../../sdk/sandbox-pool.js'
import type {SandboxAttachResult, SandboxRecord, SandboxSpec} from '../../sdk/sandbox.js'
import type {Target} from '../../sdk/target.js'
import type {SandboxRuntime} from './runtime.js'

import {OperationError} from '../../sdk/errors.js'
import {withoutCredentials} from '../../sdk/repo-url.js'
import {branchDirectory} from '../../sdk/sandbox-repos.js'
import {initPodSubmodules} from './attach-submodules.js'
import {defaultCheckout} from './attach.js'
import {MANAGED_BY_LABEL, OWNER_LABEL, podManifest, PREFIX_LABEL} from './manifest.js'
import {POOL_LABEL, POOL_SPEC_LABEL} from './pool-labels.js'

/**
 * A new pool pod's name: `<prefix>.pool-<pool id>-<6 hex>`, a `.` no sandbox name can hold, so it
 * never clashes with a project name (and it is a DNS subdomain, as a Kubernetes Pod name must be).
 */
export const poolPodName = (pool: PoolOwner): string =>
  `${pool.prefix}.pool-${pool.id}-${randomBytes(3).toString('hex')}`

/**
 * The pool pod `name` of `pool` made from `spec` (its branch empty): every cache mounted
 * read-only, no port, labelled managed-by, prefix, owner, pool and the spec's fingerprint.
 */
export function poolPodManifest(
  pool: PoolOwner,
  name: string,
  spec: SandboxSpec,
  fingerprint: string,
): Record<string, unknown> {
  const manifest = podManifest(
    {project: name, name, owner: pool.owner, offset: 0, prefix: pool.prefix, ports: {}} as unknown as Target,
    {...spec, portBases: {}},
  )
  const metadata = manifest.metadata as {labels: Record<string, string>}
  metadata.labels = {
    [MANAGED_BY_LABEL]: 'yard',
    [PREFIX_LABEL]: pool.prefix,
    [OWNER_LABEL]: pool.owner,
    [POOL_LABEL]: pool.id,
    [POOL_SPEC_LABEL]: fingerprint,
  }
  return manifest
}

/**
 * Prepares a pool pod: `$@` is `SLOT KEY` pairs; `YARD_FETCH_THROUGH` the uploadpack script.
 * Besides `default/`, each slot gets a worktree checked out detached at origin/HEAD in
 * `/work/<slot>/.pool` (`.pool` is no branch directory: a ref component cannot start with a dot),
 * which the claim turns into the branch worktree: checking out the files is the longest part of
 * an attach, and it does not depend on the sandbox's name.
 */
export const PREPARE_SCRIPT = `set -e
git config --global safe.directory '*'
mkdir -p "\${YARD_FT_PATH%/*}"
printf '%s' "$YARD_FETCH_THROUGH" > "$YARD_FT_PATH"
chmod 755 "$YARD_FT_PATH"
while [ $# -gt 0 ]; do
  git clone --quiet --shared -- "/repos/$2" "/work/$1/default"
  git -C "/work/$1/default" config remote.origin.uploadpack "$YARD_FT_PATH"
  git -C "/work/$1/default" worktree add --quiet --detach "/work/$1/.pool" origin/HEAD
  shift 2
done`

/**
 * Attaches in a claimed pod: `$1` the branch, then `SLOT DIR REF PUSHURL` quadruples (REF empty:
 * origin/HEAD). The same steps and bases as attach.ts, for checkouts that are all new but
 * `default/`, which fetches from the cache (plain upload-pack: the host fetched it just now). The
 * prepared `.pool` worktree becomes the branch worktree: `checkout --no-track -B BRANCH BASE`
 * (only files that differ from origin/HEAD change) and `worktree move` to the branch directory,
 * the same branch, base, files and path as `worktree add --no-track -b`. When BASE is the commit
 * the `.pool` worktree already has (the cache did not move since the pod was prepared), the
 * branch is made at it and HEAD pointed at it with git's own reflog messages (`update-ref`,
 * `symbolic-ref`): checkout would only re-read an index that already matches (~15 ms for 5,000
 * files, more in a busy pod).
 */
export const CLAIM_SCRIPT = `set -e
nl='
'
[ -z "$YARD_GIT_NAME" ] || git config --global user.name "$YARD_GIT_NAME"
[ -z "$YARD_GIT_EMAIL" ] || git config --global user.email "$YARD_GIT_EMAIL"
branch=$1
shift
while [ $# -gt 0 ]; do
  home="/work/$1/default"
  target="/work/$1/$2"
  git -C "$home" fetch --quiet --tags --upload-pack=git-upload-pack origin
  git -C "$home" merge --ff-only --quiet >/dev/null 2>&1 || true
  if [ -z "$3" ]; then base=origin/HEAD
  elif git -C "$home" rev-parse --verify --quiet "refs/remotes/origin/$3" >/dev/null; then base="refs/remotes/origin/$3"
  else base=$3
  fi
  if git -C "$home" rev-parse --verify --quiet "refs/heads/$branch" >/dev/null; then
    git -C "$home" worktree remove --force "/work/$1/.pool" 2>/dev/null || true
    git -C "$home" worktree add --quiet "$target" "$branch"
  elif [ -d "/work/$1/.pool" ]; then
    pair=$(git -C "/work/$1/.pool" rev-parse HEAD "$base^{commit}" 2>/dev/null || true)
    head=\${pair%%"$nl"*}
    if [ -n "$head" ] && [ "$pair" = "$head$nl$head" ]; then
      git -C "/work/$1/.pool" update-ref -m "branch: Created from $base" "refs/heads/$branch" "$head" ""
      git -C "/work/$1/.pool" symbolic-ref -m "checkout: moving from $head to $branch" HEAD "refs/heads/$branch"
    else
      git -C "/work/$1/.pool" checkout --quiet --no-track -B "$branch" "$base"
    fi
    git -C "$home" worktree move "/work/$1/.pool" "$target"
  else
    git -C "$home" worktree add --quiet --no-track -b "$branch" "$target" "$base"
  fi
  git -C "$home" remote set-url --push origin "$4"
  shift 4
done`

/** The sandbox a claim made of pod data and the create's Target and spec, as `get` will return it. */
export function claimedRecord(target: Target, spec: SandboxSpec): SandboxRecord {
  return {
    name: target.name,
    project: target.project,
    runtime: spec.runtime,
    phase: 'Running',
    offset: target.offset,
    owner: target.owner,
    spec,
    start: 'warm',
  }
}

/**
 * Runs CLAIM_SCRIPT in the claimed pod of `sandbox` for `request.branch` (git identity through
 * the environment); resolves the branch directory.
 * @throws OperationError (exit 1) with git's message when the script fails.
 */
export async function runClaimScript(
  runtime: Pick<SandboxRuntime, 'run'>,
  sandbox: SandboxRecord,
  request: {branch: string; gitIdentity: {name?: string; email?: string}},
): Promise<string> {
  const directory = branchDirectory(request.branch)
  const args = sandbox.spec.repos.flatMap((repo) => [
    repo.slot,
    directory,
    repo.ref ?? '',
    withoutCredentials(repo.url),
  ])
  const env = {YARD_GIT_NAME: request.gitIdentity.name ?? '', YARD_GIT_EMAIL: request.gitIdentity.email ?? ''}
  const result = await runtime.run(sandbox.project, ['sh', '-c', CLAIM_SCRIPT, 'sh', request.branch, ...args], {env})
  if (result.exitCode !== 0)
    throw new OperationError(
      `attaching ${request.branch} in the sandbox pod ${sandbox.project} failed (exit ${result.exitCode})`,
      {why: result.stderr.trim() || undefined, fix: 'fix what git reports, then run yard sandbox create again'},
    )
  return directory
}

/**
 * The slots of a just-claimed sandbox as attach reports them: per slot `default/` and the branch
 * worktree `/work/<slot>/<directory>`, whose submodules (the spec's, from their caches) are
 * initialised now (attach-submodules.ts).
 */
export async function claimedSlots(
  runtime: SandboxRuntime,
  sandbox: SandboxRecord,
  directory: string,
): Promise<SandboxAttachResult['slots']> {
  const slots: SandboxAttachResult['slots'] = []
  for (const repo of sandbox.spec.repos) {
    const target = `/work/${repo.slot}/${directory}`
    const done =
      (repo.submodules ?? []).length > 0
        ? await initPodSubmodules(runtime, sandbox.project, target, repo)
        : {initialised: [], failed: []}
    const submodules = {
      initialised: done.initialised.map((sub) => `${target}/${sub}`),
      failed: done.failed.map((failure) => ({...failure, path: `${target}/${failure.path}`})),
    }
    slots.push({
      slot: repo.slot,
      default: defaultCheckout(repo.slot),
      path: target,
      created: true,
      ...(submodules.initialised.length + submodules.failed.length > 0 && {submodules}),
    })
  }

  return slots
}
