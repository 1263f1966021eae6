/**
 * The input rules of sandboxes (DESIGN.md §5.2): `--repo [SLOT=]URL[#REF]`, the branch and its
 * directory. Pure: no git, no fs; everything here is refused (exit 2) before anything is made.
 */
import type {SandboxRepo} from './sandbox.js'

import {InputError} from './errors.js'
import {NAME_PATTERN} from './names.js'
import {identitySlug, repoIdentity} from './repo-identity.js'

/**
 * Parses one `--repo [SLOT=]URL[#REF]`: a leading `SLOT=` only when SLOT matches the name rule
 * (so `https://host/a=b` stays a url); the ref after the last `#`; default slot = slug of the
 * identity's last segment.
 * @throws InputError (exit 2) for an invalid url (repo-identity.ts) or an empty or option-like ref.
 */
export function parseRepoFlag(value: string): SandboxRepo {
  const equals = value.indexOf('=')
  const named = equals > 0 && NAME_PATTERN.test(value.slice(0, equals))
  const slotText = named ? value.slice(0, equals) : undefined
  const rest = named ? value.slice(equals + 1) : value
  const hash = rest.lastIndexOf('#')
  const urlText = hash === -1 ? rest : rest.slice(0, hash)
  const ref = hash === -1 ? null : rest.slice(hash + 1)
  if (ref !== null && (ref === '' || ref.startsWith('-'))) {
    throw new InputError(
      `invalid ref in --repo ${JSON.stringify(value)}: ${ref === '' ? 'nothing follows "#"' : 'it starts with "-"'}`,
      {
        why: 'the part after the last "#" names the base of the branch worktree, a branch, tag or commit',
        fix: 'write --repo URL#BRANCH (e.g. --repo https://host/org/app.git#develop), or leave out "#"',
      },
    )
  }

  const repo = repoIdentity(urlText)
  return {slot: slotText ?? identitySlug(repo.identity), url: repo.url, ref, identity: repo.identity, key: repo.key}
}

/**
 * Parses every `--repo`; the first is the first slot.
 * @throws InputError (exit 2) for none given, or two repositories in one slot.
 */
export function parseRepoFlags(values: readonly string[]): SandboxRepo[] {
  if (values.length === 0)
    throw new InputError('a sandbox needs at least one --repo', {
      fix: 'yard sandbox create NAME --repo URL [--repo SLOT=URL#REF …]',
    })
  const repos = values.map(parseRepoFlag)
  for (const [index, repo] of repos.entries()) {
    const first = repos.findIndex((other) => other.slot === repo.slot)
    if (first !== index) {
      throw new InputError(`two repositories in the slot ${repo.slot}: ${repos[first].url} and ${repo.url}`, {
        why: `each repository gets its own directory /work/<slot>/, and both would be /work/${repo.slot}`,
        fix: `name one slot yourself: --repo OTHER=${repo.url}`,
      })
    }
  }

  return repos
}

/** The directory of a branch worktree: the branch with `/` → `-` (DESIGN.md §5.2). */
export function branchDirectory(branch: string): string {
  return branch.replaceAll('/', '-')
}

/**
 * Checks a branch directory before it becomes a path `/work/<slot>/<dir>` (DESIGN.md §5.2): one
 * path component, so `.`, `..`, an empty name and anything holding `/` are refused — `yard exec
 * NAME/..` would otherwise run in `/work`.
 * @throws InputError (exit 2) naming what was given.
 */
export function checkBranchDirectory(directory: string, given = directory): string {
  if (
    directory === '' ||
    directory === '.' ||
    directory === '..' ||
    directory.includes('/') ||
    directory.includes('\0')
  ) {
    throw new InputError(`${JSON.stringify(given)} names no branch directory`, {
      why: 'a branch worktree is the directory /work/<slot>/<branch with "/" → "-">: one name, never empty, "." or ".."',
      fix: 'name the branch or its directory as yard sandbox list shows it, e.g. yard exec NAME/feat/login -- CMD (or NAME/feat-login)',
    })
  }

  return directory
}

/**
 * The branch rules checked before any pod exists (DESIGN.md §5.2): `default` is the default
 * checkout's directory, and `git worktree add` takes no `--`, so a leading `-` is refused.
 * (`git check-ref-format --branch` runs in core, on the host.)
 * @throws InputError (exit 2).
 */
export function checkSandboxBranch(branch: string): string {
  if (branch === 'default' || branchDirectory(branch) === 'default') {
    throw new InputError('the branch "default" is refused', {
      why: "/work/<slot>/default is every slot's checkout of the default branch, so a branch worktree cannot have that directory",
      fix: 'choose another branch name, e.g. --branch wt/NAME',
    })
  }

  if (branch.startsWith('-'))
    throw new InputError(`invalid branch "${branch}": it starts with "-"`, {
      why: 'git would read it as an option',
      fix: 'choose a branch name that does not start with "-"',
    })
  return branch
}
