/**
 * Attach (DESIGN.md §5.2), run inside the pod with git called without a shell: the host user's
 * git identity, then per slot a `--shared` clone of the read-only cache at `default/` and the
 * branch worktree beside it, each with its submodules from their caches (attach-submodules.ts);
 * an existing `default/` first fetches from the cache (catchUp), so a new branch starts from what
 * the cache holds now. Idempotent: what exists is kept as it is, uncommitted work included.
 */
import type {SandboxAttachResult, SandboxSpec} from '../../sdk/sandbox.js'
import type {SandboxRuntime} from './runtime.js'

import {InputError, OperationError} from '../../sdk/errors.js'
import {FETCH_THROUGH_PATH, fetchThroughScript} from '../../sdk/fetch-through.js'
import {withoutCredentials} from '../../sdk/repo-url.js'
import {branchDirectory} from '../../sdk/sandbox-repos.js'
import {attachFresh} from './attach-fresh.js'
import {initPodSubmodules, type PodSubmodules, rewriteSubmoduleUrls} from './attach-submodules.js'
import {repoMountPath} from './manifest.js'

/** `/work/<slot>/default`: the slot's checkout of the default branch. */
export const defaultCheckout = (slot: string) => `/work/${slot}/default`

/** git inside the pod; throws the command's stderr as an OperationError (exit 1). */
export async function podGit(
  runtime: SandboxRuntime,
  pod: string,
  args: string[],
  options: {env?: Record<string, string>} = {},
): Promise<string> {
  const result = await runtime.run(pod, ['git', ...args], options)
  if (result.exitCode !== 0) {
    throw new OperationError(`git ${args.join(' ')} failed in the sandbox pod ${pod} (exit ${result.exitCode})`, {
      why: result.stderr.trim() || undefined,
      fix: 'fix what git reports, then run the command again',
    })
  }

  return result.stdout
}

export interface PodWorktree {
  path: string
  branch: string | null
}

/** `git worktree list --porcelain` of a slot's default checkout (default first). */
export async function slotWorktrees(runtime: SandboxRuntime, pod: string, slot: string): Promise<PodWorktree[]> {
  const text = await podGit(runtime, pod, ['-C', defaultCheckout(slot), 'worktree', 'list', '--porcelain'])
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split('\n')
      const branch = lines.find((line) => line.startsWith('branch '))?.slice('branch refs/heads/'.length) ?? null
      return {path: lines[0].slice('worktree '.length), branch}
    })
}

async function exists(runtime: SandboxRuntime, pod: string, podPath: string): Promise<boolean> {
  return (await runtime.run(pod, ['test', '-e', podPath])).exitCode === 0
}

/**
 * Attaches `branch` in every slot of the pod of the sandbox named `request.sandbox` (the name its
 * hints give to yard exec). Clashes are checked in every present slot before anything is made,
 * so a refusal changes nothing.
 * @throws InputError (exit 2) when a branch directory holds a different branch, naming both.
 * @throws OperationError (exit 1) when git fails in the pod.
 */
export async function attachInPod(
  runtime: SandboxRuntime,
  pod: string,
  spec: SandboxSpec,
  request: {
    branch: string
    gitIdentity: {name?: string; email?: string}
    sandbox: string
    fetchThroughSeconds?: number
  },
): Promise<SandboxAttachResult> {
  const {branch} = request
  const directory = branchDirectory(branch)
  const present = await Promise.all(
    spec.repos.map(async (repo) => exists(runtime, pod, `${defaultCheckout(repo.slot)}/.git`)),
  )
  // A pod with nothing checked out (a cold create's) on podman: the same steps in one exec.
  if (runtime.id === 'podman' && present.every((found) => !found)) return attachEmpty(runtime, pod, spec, request)
  const known = await Promise.all(
    spec.repos.map(async (repo, index) =>
      present[index] ? slotWorktrees(runtime, pod, repo.slot) : Promise.resolve([]),
    ),
  )
  for (const [index, repo] of spec.repos.entries()) {
    const holder = known[index].find((worktree) => worktree.path === `/work/${repo.slot}/${directory}`)
    if (holder && holder.branch !== branch) {
      throw new InputError(
        `the directory ${holder.path} already holds the branch ${holder.branch ?? '(detached)'}, not ${branch}`,
        {
          why: `a branch worktree's directory is the branch with "/" → "-", so ${holder.branch ?? 'that checkout'} and ${branch} would share it`,
          fix: `use the branch ${holder.branch ?? 'checked out there'} (yard exec ${request.sandbox}/${directory} …), or choose a branch whose directory is free`,
        },
      )
    }
  }

  await podGit(runtime, pod, ['config', '--global', 'safe.directory', '*'])
  if (request.gitIdentity.name)
    await podGit(runtime, pod, ['config', '--global', 'user.name', request.gitIdentity.name])
  if (request.gitIdentity.email)
    await podGit(runtime, pod, ['config', '--global', 'user.email', request.gitIdentity.email])

  await rewriteSubmoduleUrls(runtime, pod, spec.repos)
  // Fetch-through (sdk/fetch-through.ts): on podman a yard exec or yard cache agent answers, on a
  // cluster the node's cache agent.
  const fetchThrough = runtime.id === 'podman' || runtime.id === 'kubernetes'
  if (fetchThrough)
    await writeFetchThrough(
      runtime,
      pod,
      request.fetchThroughSeconds ?? 10,
      runtime.id === 'podman' ? 'a yard exec or yard cache agent' : "the node's cache agent",
    )
  const slots: SandboxAttachResult['slots'] = []
  for (const [index, repo] of spec.repos.entries()) {
    const home = defaultCheckout(repo.slot)
    const target = `/work/${repo.slot}/${directory}`
    // Submodules only in checkouts made now: an existing one is kept as it is (its submodules too).
    const submodules: PodSubmodules = {initialised: [], failed: []}
    const addSubmodules = async (checkout: string) => {
      const done = await initPodSubmodules(runtime, pod, checkout, repo)
      submodules.initialised.push(...done.initialised.map((sub) => `${checkout}/${sub}`))
      submodules.failed.push(...done.failed.map((failure) => ({...failure, path: `${checkout}/${failure.path}`})))
    }

    if (present[index]) {
      await catchUp(runtime, pod, home)
    } else {
      await podGit(runtime, pod, ['clone', '--quiet', '--shared', '--', repoMountPath(repo.key), home])
      await addSubmodules(home)
    }

    let created = false
    if (known[index].every((worktree) => !(worktree.path === target))) {
      // `worktree add` takes no `--`: the branch was checked (no leading "-"), the path is absolute.
      const local = await runtime.run(pod, [
        'git',
        '-C',
        home,
        'rev-parse',
        '--verify',
        '--quiet',
        `refs/heads/${branch}`,
      ])
      if (local.exitCode === 0) {
        await podGit(runtime, pod, ['-C', home, 'worktree', 'add', '--quiet', target, branch])
      } else {
        await podGit(runtime, pod, [
          '-C',
          home,
          'worktree',
          'add',
          '--quiet',
          '--no-track',
          '-b',
          branch,
          target,
          await baseOf(runtime, pod, home, repo.ref),
        ])
      }

      created = true
      await addSubmodules(target)
    }

    await podGit(runtime, pod, ['-C', home, 'remote', 'set-url', '--push', 'origin', withoutCredentials(repo.url)])
    if (fetchThrough) await podGit(runtime, pod, ['-C', home, 'config', 'remote.origin.uploadpack', FETCH_THROUGH_PATH])
    slots.push({
      slot: repo.slot,
      default: home,
      path: target,
      created,
      ...(submodules.initialised.length + submodules.failed.length > 0 && {submodules}),
    })
  }

  return {branch, slots}
}

/** attachInPod in a pod with no slot checked out (attach-fresh.ts), then the submodules as attachInPod does. */
async function attachEmpty(
  runtime: SandboxRuntime,
  pod: string,
  spec: SandboxSpec,
  request: {branch: string; gitIdentity: {name?: string; email?: string}; fetchThroughSeconds?: number},
): Promise<SandboxAttachResult> {
  const fresh = await attachFresh(runtime, pod, spec, {
    branch: request.branch,
    gitIdentity: request.gitIdentity,
    fetchThroughSeconds: request.fetchThroughSeconds ?? 10,
  })
  await rewriteSubmoduleUrls(runtime, pod, spec.repos)
  const slots: SandboxAttachResult['slots'] = []
  for (const [index, slot] of fresh.slots.entries()) {
    if (!fresh.withGitmodules.has(slot.slot)) {
      slots.push(slot)
      continue
    }

    const submodules: PodSubmodules = {initialised: [], failed: []}
    for (const checkout of [slot.default, slot.path]) {
      const done = await initPodSubmodules(runtime, pod, checkout, spec.repos[index])
      submodules.initialised.push(...done.initialised.map((sub) => `${checkout}/${sub}`))
      submodules.failed.push(...done.failed.map((failure) => ({...failure, path: `${checkout}/${failure.path}`})))
    }

    slots.push({...slot, ...(submodules.initialised.length + submodules.failed.length > 0 && {submodules})})
  }

  return {branch: request.branch, slots}
}

/**
 * Brings an existing `default/` to what the cache holds now (its origin is `/repos/<key>`): a
 * fetch of origin's branches and tags (never `--prune`), then a fast-forward of its checked-out
 * branch to its upstream when that is possible — a default checkout with local commits or changes
 * in the way keeps them, and the branch stays where it is.
 * @throws OperationError when the fetch from the cache fails.
 */
async function catchUp(runtime: SandboxRuntime, pod: string, home: string): Promise<void> {
  // The host fetched the caches just now: plain upload-pack, no fetch-through ask.
  await podGit(runtime, pod, ['-C', home, 'fetch', '--quiet', '--tags', '--upload-pack=git-upload-pack', 'origin'])
  await runtime.run(pod, ['git', '-C', home, 'merge', '--ff-only', '--quiet'])
}

/**
 * Writes origin's uploadpack script (fetchThroughScript) to FETCH_THROUGH_PATH in the pod; the
 * script is passed as an argument, never spliced into the shell line.
 */
async function writeFetchThrough(runtime: SandboxRuntime, pod: string, seconds: number, server: string): Promise<void> {
  const dir = FETCH_THROUGH_PATH.slice(0, FETCH_THROUGH_PATH.lastIndexOf('/'))
  const line = `mkdir -p ${dir} && printf '%s' "$1" > ${FETCH_THROUGH_PATH}.tmp && chmod 755 ${FETCH_THROUGH_PATH}.tmp && mv -f ${FETCH_THROUGH_PATH}.tmp ${FETCH_THROUGH_PATH}`
  const result = await runtime.run(pod, ['sh', '-c', line, 'sh', fetchThroughScript(seconds, server)])
  if (result.exitCode !== 0)
    throw new OperationError(
      `writing ${FETCH_THROUGH_PATH} failed in the sandbox pod ${pod} (exit ${result.exitCode})`,
      {
        why: result.stderr.trim() || undefined,
        fix: 'check that /work is writable in the image, then run yard sandbox attach again',
      },
    )
}

/** `origin/HEAD`; for `#REF`, `refs/remotes/origin/<ref>` when it exists, else the ref verbatim. */
async function baseOf(runtime: SandboxRuntime, pod: string, home: string, ref: string | null): Promise<string> {
  if (ref === null) return 'origin/HEAD'
  const remote = `refs/remotes/origin/${ref}`
  const found = await runtime.run(pod, ['git', '-C', home, 'rev-parse', '--verify', '--quiet', remote])
  return found.exitCode === 0 ? remote : ref
}
