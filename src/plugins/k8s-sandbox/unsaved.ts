/**
 * Unsaved work in a sandbox (DESIGN.md §5.2, `rm`): modified and untracked files per worktree,
 * commits not on origin per branch, and the bundle and patches `rm --force` keeps of them.
 */
import path from 'node:path'
import {promises as fs} from 'node:fs'

import type {SandboxSpec, SandboxWorktree} from '../../core/backend.js'
import {defaultCheckout, podGit, slotWorktrees} from './attach.js'
import type {SandboxRuntime} from './runtime.js'

/** Every worktree of every slot with its dirty files and unpushed branches. */
export async function podWorktrees(runtime: SandboxRuntime, pod: string, spec: SandboxSpec): Promise<SandboxWorktree[]> {
  // Slots and worktrees are asked at once: each question is a round trip into the pod.
  const slots = await Promise.all(spec.repos.map(async (repo) => {
    const home = defaultCheckout(repo.slot)
    if ((await runtime.run(pod, ['test', '-e', `${home}/.git`])).exitCode !== 0) return []
    return Promise.all((await slotWorktrees(runtime, pod, repo.slot)).map(async (worktree) => {
      const [status, count] = await Promise.all([
        podGit(runtime, pod, ['-C', worktree.path, 'status', '--porcelain', '--untracked-files=all']),
        worktree.branch === null ? Promise.resolve('0') : podGit(runtime, pod, ['-C', home, 'rev-list', '--count', `refs/heads/${worktree.branch}`, '--not', '--remotes=origin']),
      ])
      const ahead = Number(count.trim())
      const unpushed = ahead > 0 ? [`${worktree.branch} (${ahead} commit${ahead === 1 ? '' : 's'})`] : []
      return {slot: repo.slot, branch: worktree.branch, path: worktree.path, dirty: status.split('\n').filter((line) => line.trim() !== ''), unpushed}
    }))
  }))
  return slots.flat()
}

const SAVE_DIR = '/tmp/yard-save'

/**
 * Saves `<slot>.bundle` (every local branch: `git bundle create … --branches`, self-contained
 * although the clone borrows from the cache) and `<slot>-<dir>.patch` per dirty worktree (a
 * binary diff against HEAD, untracked files included, made with a scratch index so the
 * worktree's own index is untouched) into the host directory `dir`.
 * @returns the files written.
 */
export async function saveUnsaved(runtime: SandboxRuntime, pod: string, spec: SandboxSpec, dir: string): Promise<string[]> {
  await fs.mkdir(dir, {recursive: true})
  await runtime.run(pod, ['mkdir', '-p', SAVE_DIR])
  const written: string[] = []
  const worktrees = await podWorktrees(runtime, pod, spec)
  for (const repo of spec.repos) {
    if (!worktrees.some((worktree) => worktree.slot === repo.slot)) continue
    const bundle = `${SAVE_DIR}/${repo.slot}.bundle`
    await podGit(runtime, pod, ['-C', defaultCheckout(repo.slot), 'bundle', 'create', '--quiet', bundle, '--branches'])
    const hostBundle = path.join(dir, `${repo.slot}.bundle`)
    await runtime.copyOut(pod, bundle, hostBundle)
    written.push(hostBundle)
  }
  for (const worktree of worktrees.filter((row) => row.dirty.length > 0)) {
    const index = `${SAVE_DIR}/${worktree.slot}-${path.basename(worktree.path)}.index`
    const env = {GIT_INDEX_FILE: index}
    await podGit(runtime, pod, ['-C', worktree.path, 'read-tree', 'HEAD'], {env})
    await podGit(runtime, pod, ['-C', worktree.path, 'add', '--all'], {env})
    const patch = await podGit(runtime, pod, ['-C', worktree.path, 'diff', '--cached', '--binary', 'HEAD'], {env})
    const hostPatch = path.join(dir, `${worktree.slot}-${path.basename(worktree.path)}.patch`)
    await fs.writeFile(hostPatch, patch)
    written.push(hostPatch)
  }
  return written
}
