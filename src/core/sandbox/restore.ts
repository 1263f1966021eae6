/**
 * The commands that bring back what `yard sandbox rm --force` saved (DESIGN.md §5.2, `rm`). A
 * slot's bundle holds only what the cache lacked, so it is fetched into a clone of the repository
 * (which has the rest: the bundle's prerequisites, git-bundle(1)); each patch is applied on the
 * commit its worktree was at. Pure: argv built here, quoted for a POSIX shell by formatArgv.
 */
import path from 'node:path'

import type {SandboxRepo, SandboxSaved, SandboxUnsavedRef} from '../../sdk/sandbox.js'

import {formatArgv} from '../../sdk/process.js'

/**
 * Where `yard sandbox pull` keeps a slot's branches in the main checkout:
 * `refs/remotes/sandbox/<name>` for the sandbox's first slot, `refs/remotes/sandbox/<name>@<slot>`
 * for another (two slots may have a branch of the same name; sandbox names hold no `@`).
 */
export function pulledRefPrefix(name: string, repos: SandboxRepo[], slot: string): string {
  return `refs/remotes/sandbox/${name}${slot === repos[0]?.slot ? '' : `@${slot}`}`
}

/** How one slot comes back: run `command` in the directory that should hold `directory`. */
export interface SlotRestore {
  slot: string
  /** The clone it makes, relative to where it runs: `<sandbox>-<slot>`. */
  directory: string
  /** One shell line: clone, fetch the bundle, check out and apply the patches. */
  command: string
  /** Saved refs other than branches, with what they were and how to use them. */
  refs: Array<{ref: string; what: string; use: string}>
}

/**
 * Per slot that saved something, its restore (see the module comment). Branches come back under
 * their names (`+refs/heads/*`, into a `--no-checkout` clone, hence `--update-head-ok`), detached
 * HEADs and stash entries under `refs/yard/sandbox/<slot>/…`. A slot `yard sandbox pull` took
 * branches from (`pulled`: their slots, and the main checkout they went to) first fetches its
 * pulled refs (pulledRefPrefix) from that checkout: the bundle leaves out what was pulled (it is
 * kept there), though a patch or a later commit may rest on it.
 */
export function restoreCommands(
  name: string,
  repos: SandboxRepo[],
  saved: SandboxSaved,
  refs: SandboxUnsavedRef[],
  attachedBranch: string,
  pulled?: {mainPath: string; slots: string[]},
): SlotRestore[] {
  const restores: SlotRestore[] = []
  for (const repo of repos) {
    const bundle = saved.bundles.find((entry) => entry.slot === repo.slot)
    const patches = saved.patches.filter((entry) => entry.slot === repo.slot)
    if (!bundle && patches.length === 0) continue
    const directory = `${name}-${repo.slot}`
    const git = (...args: string[]) => ['git', '-C', directory, ...args]
    const steps: string[][] = [['git', 'clone', '--quiet', '--no-checkout', '--', repo.url, directory]]
    if (pulled?.slots.includes(repo.slot)) {
      const kept = pulledRefPrefix(name, repos, repo.slot)
      steps.push(git('fetch', '--quiet', '--', pulled.mainPath, `+${kept}/*:${kept}/*`))
    }

    if (bundle)
      steps.push(
        git(
          'fetch',
          '--quiet',
          '--update-head-ok',
          '--',
          bundle.file,
          '+refs/heads/*:refs/heads/*',
          '+refs/yard/*:refs/yard/*',
        ),
      )
    for (const [index, patch] of patches.entries()) {
      const at = patch.branch ? ['-B', patch.branch] : ['--detach']
      if (index === 0) {
        steps.push(git('checkout', '--quiet', ...at, patch.head), git('apply', '--', patch.file))
      } else {
        // Each further worktree gets one of its own beside the clone, as in the sandbox.
        const beside = `${directory}-${path.posix.basename(patch.worktree)}`
        steps.push(git('worktree', 'add', '--quiet', ...at, `../${beside}`, patch.head), [
          'git',
          '-C',
          beside,
          'apply',
          '--',
          patch.file,
        ])
      }
    }

    if (patches.length === 0) {
      // Something checked out: the attached branch, another saved branch, a detached HEAD, else HEAD.
      const saved = bundle?.refs ?? []
      const branches = saved
        .filter((ref) => ref.startsWith('refs/heads/'))
        .map((ref) => ref.slice('refs/heads/'.length))
      const detached = saved.find((ref) => path.posix.basename(ref).startsWith('detached-'))
      const branch = branches.includes(attachedBranch) ? attachedBranch : branches[0]
      steps.push(
        branch
          ? git('checkout', '--quiet', branch)
          : detached
            ? git('checkout', '--quiet', '--detach', detached)
            : git('reset', '--quiet', '--hard'),
      )
    }

    const kept = refs.filter((ref) => ref.slot === repo.slot && !ref.ref.startsWith('refs/heads/'))
    restores.push({
      slot: repo.slot,
      directory,
      command: steps.map(formatArgv).join(' && '),
      refs: kept.map((ref) => ({
        ref: ref.ref,
        what: ref.what,
        use: formatArgv(
          path.posix.basename(ref.ref).startsWith('stash')
            ? git('stash', 'apply', ref.ref)
            : git('switch', '--detach', ref.ref),
        ),
      })),
    })
  }

  return restores
}
