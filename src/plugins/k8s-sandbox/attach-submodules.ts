/**
 * Submodules in a sandbox pod (DESIGN.md §5.2), from their read-only caches, with no remote
 * reachable. A checkout's origin is its cache path, so git itself would resolve a relative url
 * (`../lib.git`) against `/repos/<key>` and find nothing: attach records in
 * `submodule.<name>.url` the url resolved against the superproject's upstream url (what the cache
 * keyed it by) and clones from the cache. The pod's global config rewrites each submodule url to
 * its cache (`url./repos/<key>.insteadOf`, pushes staying on the url itself through
 * `pushInsteadOf`), so later fetches in a submodule need no remote either.
 * `protocol.file.allow=always` (git refuses local submodule clones by default since 2.38.1) is
 * given only to the `git submodule update` attach runs.
 */
import type {SandboxRepo} from '../../sdk/sandbox.js'
import type {SandboxRuntime} from './runtime.js'

import {OperationError} from '../../sdk/errors.js'
import {withoutCredentials} from '../../sdk/repo-url.js'
import {resolveSubmoduleUrl} from '../../sdk/submodule-url.js'
import {repoMountPath} from './manifest.js'

/** What attach did with one checkout's submodules. */
export interface PodSubmodules {
  /** Paths initialised at their recorded commits, nested ones as `lib/nested`. */
  initialised: string[]
  /** Top-level paths that could not be (no cache, or git failed): left uninitialised, with why. */
  failed: Array<{path: string; why: string}>
}

/**
 * Writes the pod's global url rewrites for every submodule cache of the spec, once per attach
 * (`--fixed-value --replace-all`: a second attach writes nothing twice).
 */
export async function rewriteSubmoduleUrls(
  runtime: SandboxRuntime,
  pod: string,
  repos: readonly SandboxRepo[],
): Promise<void> {
  const seen = new Set<string>()
  for (const submodule of repos.flatMap((repo) => repo.submodules ?? [])) {
    if (seen.has(submodule.url)) continue
    seen.add(submodule.url)
    for (const [key, value] of [
      [`url.${repoMountPath(submodule.key)}.insteadOf`, submodule.url],
      [`url.${submodule.url}.pushInsteadOf`, submodule.url],
    ]) {
      await podRun(runtime, pod, ['git', 'config', '--global', '--fixed-value', '--replace-all', key, value, value])
    }
  }
}

/** Deeper than this, nested submodules are left uninitialised (as worktree-submodules.ts does). */
const MAX_DEPTH = 8

/**
 * Initialises the submodules of a checkout just made in the pod, level by level, at the commits
 * each tree records. Each one is cloned with `submodule.<name>.url` pointed, for that one
 * command, at its cache (git's clone takes a url without `:` for a path, which no rewrite
 * reaches); its `origin` is then set to its own url, so its nested submodules resolve against
 * that and its fetches reach the cache through the rewrites. One submodule without a cache
 * leaves the others whole. Never throws for a submodule.
 */
export async function initPodSubmodules(
  runtime: SandboxRuntime,
  pod: string,
  checkout: string,
  repo: SandboxRepo,
): Promise<PodSubmodules> {
  const caches = new Map((repo.submodules ?? []).map((submodule) => [submodule.url, submodule.key]))
  const outcome: PodSubmodules = {initialised: [], failed: []}
  await initLevel(
    runtime,
    pod,
    {checkout, superUrl: withoutCredentials(repo.url), caches, prefix: '', depth: 0},
    outcome,
  )
  return outcome
}

async function initLevel(
  runtime: SandboxRuntime,
  pod: string,
  level: {checkout: string; superUrl: string; caches: Map<string, string>; prefix: string; depth: number},
  outcome: PodSubmodules,
): Promise<void> {
  const {checkout, caches, prefix} = level
  if (level.depth >= MAX_DEPTH) return
  const listed = await runtime.run(pod, [
    'git',
    '-C',
    checkout,
    'config',
    '--file',
    '.gitmodules',
    '--null',
    '--get-regexp',
    String.raw`^submodule\..*\.(path|url)$`,
  ])
  if (listed.exitCode !== 0) return
  const byName = new Map<string, {path?: string; url?: string}>()
  for (const record of listed.stdout.split('\0')) {
    const newline = record.indexOf('\n')
    if (newline === -1) continue
    const field = record.slice(0, newline).endsWith('.path') ? 'path' : 'url'
    const name = record.slice('submodule.'.length, newline - field.length - 1)
    byName.set(name, {...byName.get(name), [field]: record.slice(newline + 1)})
  }

  for (const [name, {path, url}] of byName) {
    if (path === undefined || url === undefined || [name, path, url].some((value) => value.startsWith('-'))) continue
    const shown = prefix + path
    const resolved = resolveSubmoduleUrl(level.superUrl, url)
    const key = caches.get(resolved)
    if (key === undefined) {
      outcome.failed.push({
        path: shown,
        why: `no cache of ${resolved} (yard caches the submodules of the default branch when the sandbox is created)`,
      })
      continue
    }

    // What `git submodule init` would record had the superproject's origin been its upstream.
    await podRun(runtime, pod, ['git', '-C', checkout, 'config', `submodule.${name}.url`, resolved])
    const updated = await runtime.run(pod, [
      'git',
      '-c',
      'protocol.file.allow=always',
      '-c',
      `submodule.${name}.url=${repoMountPath(key)}`,
      '-C',
      checkout,
      'submodule',
      'update',
      '--init',
      '--quiet',
      '--',
      path,
    ])
    if (updated.exitCode !== 0) {
      outcome.failed.push({
        path: shown,
        why:
          updated.stderr
            .trim()
            .split('\n')
            .filter((line) => /^(fatal|error):/.test(line))
            .join('; ') || `exit code ${updated.exitCode}`,
      })
      continue
    }

    const inside = `${checkout}/${path}`
    await podRun(runtime, pod, ['git', '-C', inside, 'remote', 'set-url', 'origin', resolved])
    outcome.initialised.push(shown)
    await initLevel(
      runtime,
      pod,
      {...level, checkout: inside, superUrl: resolved, prefix: `${shown}/`, depth: level.depth + 1},
      outcome,
    )
  }
}

/** @throws OperationError (exit 1) with git's words when the command fails. */
async function podRun(runtime: SandboxRuntime, pod: string, argv: string[]): Promise<void> {
  const result = await runtime.run(pod, argv)
  if (result.exitCode !== 0)
    throw new OperationError(`${argv.join(' ')} failed in the sandbox pod ${pod} (exit ${result.exitCode})`, {
      why: result.stderr.trim() || undefined,
      fix: 'fix what git reports, then run yard sandbox attach again',
    })
}
