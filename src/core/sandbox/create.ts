/**
 * `yard sandbox create` and `attach` (DESIGN.md §5.2, §3.4).
 *
 * Create, in order: input checked (name, repos, branch, runtime) → the name's lock (one create of
 * a sandbox at a time; a second waits, then is refused) → no pod of that name → the image
 * (yard's default image built when missing) → every repository's cache ensured (cold clone
 * failure: fail fast, nothing made; warm fetch failure: go on, stale, with a warning; a `#REF`
 * the cache lacks: exit 2) and leased
 * → under the project's offsets lock: worktrees, pins and sandboxes read, a clashing newcomer
 * pinned, the host ports probed (busy: exit 3), the pod played → attach inside it. A failure
 * after the leases undoes what this call made (pod, pin, leases). On the kubernetes runtime the
 * local cache, leases and host-port probe are skipped: the runtime declares a Repo per cache key
 * and waits for the pod's node to hold them (kubernetes-runtime.ts), and ports are forwarded
 * with `yard sandbox forward`.
 */
import {promises as fs} from 'node:fs'
import path from 'node:path'

import type {CacheAddResult, CacheBackend} from '../../sdk/cache.js'
import type {SandboxAttachResult, SandboxRecord, SandboxRepo, SandboxSpec} from '../../sdk/sandbox.js'
import type {OffsetSource, Target} from '../../sdk/target.js'
import type {YardContext} from '../kernel/context.js'
import type {Backends} from '../registry/backends.js'

import {InputError, OperationError, RefusedError} from '../../sdk/errors.js'
import {withLock} from '../../sdk/lock.js'
import {busyPorts} from '../../sdk/port-probe.js'
import {repoIdentity} from '../../sdk/repo-identity.js'
import {checkSandboxBranch, parseRepoFlags} from '../../sdk/sandbox-repos.js'
import {staleNote} from '../../sdk/stale.js'
import {requireClusterSource} from '../cluster/source.js'
import {configCachePath, loadConfig} from '../config/config.js'
import {validateName} from '../identity/identity.js'
import {allocateOffset, notePin, type OffsetAllocation, undoPin, withOffsetsLock} from '../identity/offset-allocator.js'
import {holdingInterrupts, type Interrupt} from '../kernel/interrupt.js'
import {stateDir} from '../kernel/state.js'
import {validateImageReference} from '../machine/image-reference.js'
import {buildDefaultImage, defaultImageTag} from '../machine/image.js'
import {requireValidBranchName} from '../workspace/git.js'
import {hasPool, spawnRefill, spawnYard} from './pool-fill.js'
import {
  knownSandboxes,
  openSandboxCache,
  openSandboxes,
  requireSandbox,
  type SandboxSession,
  sandboxTarget,
} from './sandbox.js'
import {takeWarm, warmCandidate} from './warm.js'

export interface CreateOptions {
  name: string
  /** `--repo [SLOT=]URL[#REF]`, in order. */
  repos: string[]
  /** Default `wt/<name>`. */
  branch?: string
  runtime?: string
  /** Default `[cluster] image`, else yard's default image. */
  image?: string
}

export interface CreateResult extends SandboxAttachResult {
  name: string
  project: string
  runtime: string
  image: string
  offset: number
  offsetSource: OffsetSource
  ports: Record<string, number>
  /** Set when yard pinned the offset: the hash offset and the names it clashed with. */
  pinned: {hashOffset: number; clashedWith: string[]} | null
  /** Per slot whose cache could not be fetched: why, and since when it is stale. */
  stale: Record<string, string>
  /** `warm`: a ready pod of a warm pool was claimed (docs/sandboxes.md, "Warm pool"); `cold`: a pod was made. */
  start: 'warm' | 'cold'
}

/** How long one create may hold its name's lock: a cold clone of a large repository included. */
const CREATE_LOCK_BUDGET_MS = 30 * 60_000

/**
 * Runs `work` holding the lock of sandbox `target` (`<state dir>/locks/sandbox-<project>.lock`):
 * one create of a project at a time on this host; a lock whose holder died is taken over.
 */
async function withSandboxLock<T>(
  context: YardContext,
  target: Target,
  purpose: string,
  work: () => Promise<T>,
): Promise<T> {
  const lockPath = path.join(stateDir(context.env), 'locks', `sandbox-${target.project}.lock`)
  await fs.mkdir(path.dirname(lockPath), {recursive: true})
  return withLock(lockPath, {budgetMs: CREATE_LOCK_BUDGET_MS, purpose, warn: context.warn}, work)
}

/** The borrower a sandbox is in its caches' leases: `sandbox <project name>`. */
const borrower = (target: Target) => ({kind: 'sandbox', name: target.project})

/**
 * Creates and attaches the sandbox NAME (see the module comment).
 * @throws InputError (exit 2) for invalid input, an existing sandbox or an unavailable runtime,
 *   before anything is made; RefusedError (exit 3) for a busy host port; OperationError (exit 1)
 *   when a cold clone, the runtime or git in the pod fails.
 */
export async function createSandbox(
  context: YardContext,
  backends: Backends,
  options: CreateOptions,
): Promise<CreateResult> {
  const name = validateName(options.name, 'sandbox name')
  const repos = parseRepoFlags(options.repos)
  const branch = checkSandboxBranch(options.branch ?? `wt/${name}`)
  if (options.image !== undefined) validateImageReference(options.image, '--image')
  const session = await openSandboxes(context, backends, options.runtime)
  const {workspace, runtime} = session
  // Refused before the cluster is asked anything: the node would fail only after the Repo exists.
  if (runtime === 'kubernetes') for (const repo of repos) requireClusterSource(repoIdentity(repo.url), repo.url)
  requireValidBranchName(branch)
  const probe = sandboxTarget(workspace, context, name)
  // One create of a name at a time: a second one waits, then finds the first's sandbox and is
  // refused, instead of both making a pod of one name (a failed play removes the pod by name,
  // the winner's included) and the loser releasing the winner's leases (the same borrower).
  // A Ctrl-C or `kill` once the name's lock is held undoes the create (kernel/interrupt.ts): the
  // pod, pin and leases go, and the lock is released, as the handlers stay until then.
  return holdingInterrupts(`yard sandbox create ${name}`, context.warn, async (interrupt) =>
    withSandboxLock(context, probe, `sandbox create ${name}`, async () => {
      interrupt.arm()
      return createNamed(context, backends, {options, name, repos, branch, session, probe, interrupt})
    }),
  )
}

/** createSandbox once it holds the name's lock: everything from the existence check on. */
async function createNamed(
  context: YardContext,
  backends: Backends,
  request: {
    options: CreateOptions
    name: string
    repos: SandboxRepo[]
    branch: string
    session: SandboxSession
    probe: Target
    interrupt: Interrupt
  },
): Promise<CreateResult> {
  const {options, name, repos, branch, session, probe, interrupt} = request
  const {workspace, backend, runtime} = session
  const pooled = await hasPool(context, session, repos)
  const defaultImage = options.image === undefined && workspace.config.cluster.image === undefined
  // The pool's pods are listed while the probe and the caches are read (warm.ts): nothing is taken yet.
  const candidate = pooled
    ? await warmCandidate(context, session, {
        runtime,
        image: options.image ?? workspace.config.cluster.image ?? defaultImageTag(),
        repos,
        portBases: workspace.config.ports,
      })
    : undefined
  // Read meanwhile too: attach needs it, nothing before it does.
  const identity = hostGitIdentity(context, workspace.mainPath)
  identity.catch(() => undefined)
  // On a cluster the nodes' cache agents hold the caches (a Repo per key, which the runtime
  // declares) and nothing is published on this host: no local cache, lease or host-port probe.
  const local = runtime !== 'kubernetes'
  const {cache, root} = await openSandboxCache(context, backends, workspace)
  const readCaches = async () =>
    local ? ensureCaches(context, {cache, root, lfs: workspace.config.cache.lfs}, repos, {name, branch}) : {}
  // A pool's pods hold leases on its caches, so they are present and ensureCaches only reads and
  // fetches them (a fetch the sandbox would do anyway): it runs while the runtime is asked
  // whether the name exists. Without a pool it may clone, which waits for that answer.
  const cachesRead = candidate ? readCaches() : undefined
  cachesRead?.catch(() => undefined)
  if (await backend.get(probe, runtime)) {
    await cachesRead?.catch(() => undefined)
    throw new InputError(`the sandbox ${name} exists (pod ${probe.project})`, {
      fix: `attach a branch with \`yard sandbox attach ${name} --branch BRANCH\`, or remove it first (yard sandbox rm ${name})`,
    })
  }

  // With a pool of this set, its pods prove the default image exists: it is checked only for a cold create.
  let image =
    options.image ??
    workspace.config.cluster.image ??
    (pooled ? defaultImageTag() : (await buildDefaultImage(context)).image)

  const stale = await (cachesRead ?? readCaches())
  // What the pod is made from, for the image finally chosen (a pool's, or a cold create's).
  const specFor = (chosen: string): SandboxSpec => ({
    runtime,
    image: chosen,
    cacheRoot: local ? root : workspace.config.cluster['cache-root'],
    repos,
    branch,
    portBases: workspace.config.ports,
  })
  const leased: string[] = []
  let allocation: OffsetAllocation | undefined
  let made: SandboxRecord | undefined
  // A ready pod of a matching pool, taken before the lock (warm.ts); it gets its identity under it.
  const warm = candidate ? await takeWarm(context, session, candidate, specFor(image), probe.project) : undefined
  if (pooled && !warm && defaultImage) image = (await buildDefaultImage(context)).image
  // Without host ports to probe, nothing under the lock refuses a warm create: the branch is
  // attached in the taken pod while the identity is decided (where the runtime can: attachTaken).
  let early: Promise<SandboxAttachResult | undefined> | undefined
  if (warm && !(local && Object.keys(workspace.config.ports).length > 0)) {
    context.progress?.step(`attaching ${branch} in ${repos.map((repo) => repo.slot).join(', ')}`)
    const spec = specFor(image)
    early = identity.then(async (gitIdentity) => backend.pool!.attachTaken?.(warm.pod, spec, {branch, gitIdentity}))
    // Awaited after the lock, or in the catch below: a failure meanwhile is no unhandled rejection.
    early.catch(() => undefined)
  }

  try {
    // Checkpoints (a signal came: the catch below undoes what was made): before the leases, after
    // the pod is made or claimed, and once attached.
    interrupt.check()
    for (const repo of local ? repos : []) {
      for (const url of [repo.url, ...(repo.submodules ?? []).map((submodule) => submodule.url)]) {
        await cache.lease(root, url, borrower(probe))
        leased.push(url)
      }
    }

    const target = await withOffsetsLock(context, workspace, `sandbox create ${name}`, async () => {
      // Read under the lock: another create or add may have pinned meanwhile.
      const fresh = {
        ...workspace,
        config: await loadConfig({
          mainPath: workspace.mainPath,
          env: context.env,
          cache: configCachePath(context.env, workspace.commonDir),
        }),
      }
      allocation = await allocateOffset(context, fresh, {
        name,
        kind: 'sandbox',
        sandboxes: async () => knownSandboxes(context, {...session, workspace: fresh}),
      })
      const target = sandboxTarget(workspace, context, name, {
        offset: allocation.offset,
        offsetSource: allocation.offsetSource,
      })
      const busy = local ? await busyPorts(target.ports, new Set()) : []
      if (busy.length > 0) {
        throw new RefusedError(
          `host port${busy.length === 1 ? '' : 's'} ${busy.map(({key, port}) => `${port} (${key})`).join(', ')} of sandbox ${name} ${busy.length === 1 ? 'is' : 'are'} busy`,
          {
            why: `the podman runtime publishes each [ports] key as base + offset ${target.offset}, and something already listens there (a stack of the same identity, or another program)`,
            fix: `stop what holds the port (yard down --worktree ${name}, if its stack is up), or pin ${name} to another offset in ${workspace.config.files.local} [worktree-offsets]`,
          },
        )
      }

      const spec = specFor(image)
      if (warm) {
        made = await backend.pool!.claim(warm.pod, warm.pool.id, target, spec)
        return target
      }

      context.progress?.step(`starting pod ${target.project}`)
      await backend.create(target, spec)
      made = {
        name,
        project: target.project,
        runtime,
        phase: 'Running',
        offset: target.offset,
        owner: target.owner,
        spec,
      }
      return target
    })
    interrupt.check()
    if (!early) context.progress?.step(`attaching ${branch} in ${repos.map((repo) => repo.slot).join(', ')}`)
    const attachedEarly = await early
    // A claimed pod publishes nothing: its host ports are a relay's, started now, awaited after attach.
    // On a cluster nothing is published here: `yard sandbox forward` reaches a claimed pod as a cold one.
    const relayed = warm !== undefined && local && Object.keys(target.ports).length > 0
    if (relayed) spawnYard(context, workspace.mainPath, ['sandbox', 'pool', 'relay', name])
    const gitIdentity = await identity
    const attached = warnSubmodules(
      context,
      name,
      attachedEarly ??
        (warm
          ? await backend.pool!.attachClaimed(made!, {branch, gitIdentity})
          : await backend.attach(made!, {
              branch,
              gitIdentity,
              fetchThroughSeconds: workspace.config.cache['fetch-through-seconds'],
            })),
    )
    // A cluster's nodes were asked for a fetch by attach; what they could not fetch is told here.
    for (const note of Object.values(attached.stale ?? {}))
      context.warn(`warning: ${note}; the sandbox uses the cached objects`)
    if (relayed) await backend.pool!.awaitRelay(made!)
    interrupt.check()
    warnUnpushable(context, name, repos, branch)
    await notePin(context, workspace, allocation!)
    if (warm) spawnRefill(context, warm.pool)
    return {
      ...attached,
      name,
      project: target.project,
      runtime,
      image,
      offset: target.offset,
      offsetSource: target.offsetSource,
      ports: target.ports,
      stale: {...stale, ...attached.stale},
      start: warm ? 'warm' : 'cold',
      pinned:
        allocation!.pin === undefined
          ? null
          : {hashOffset: allocation!.hashOffset, clashedWith: allocation!.clashedWith},
    }
  } catch (error) {
    // An attach still running in the taken pod is waited for: the pod is removed after it, not under it.
    const attachedIn =
      early !== undefined &&
      (await early.then(
        (attached) => attached !== undefined,
        () => true,
      ))
    if (made) await backend.remove(made).catch(() => undefined)
    // A pod the attach changed is no pool pod any more: it goes, rather than back to the pool.
    else if (warm && attachedIn) await backend.pool!.remove(warm.pod, runtime).catch(() => undefined)
    else if (warm) await backend.pool!.untake(warm.pod, runtime).catch(() => undefined)
    // The claimed pod went with the failure: the pool is one short.
    if (warm && (made || attachedIn)) spawnRefill(context, warm.pool)
    await undoPin(workspace, allocation).catch(() => undefined)
    for (const url of leased) await cache.release(root, url, borrower(probe)).catch(() => undefined)
    throw error
  }
}

/**
 * Ensures every repository's cache: cloned when missing (a failure throws: cold), else fetched
 * (a failure warns naming the cache and its last fetch: stale, and the sandbox goes on). Then
 * each `#REF` must name something the cache holds, so a typo is refused before any pod exists.
 * @returns per slot, why its cache is stale.
 * @throws OperationError (exit 1) when a clone fails, saying to run this create again;
 *   InputError (exit 2) for a ref the cache does not have, listing its branches.
 */
async function ensureCaches(
  context: YardContext,
  caches: {cache: CacheBackend; root: string; lfs?: 'all' | 'off'},
  repos: SandboxRepo[],
  sandbox: {name: string; branch: string},
): Promise<Record<string, string>> {
  const {name} = sandbox
  const {cache, root} = caches
  const lfs = caches.lfs ? {lfs: caches.lfs} : {}
  const stale: Record<string, string> = {}
  for (const repo of repos) {
    let added: CacheAddResult
    try {
      added = await cache.add(root, repo.url, lfs)
    } catch (error) {
      if (!(error instanceof OperationError)) throw error
      // The cache backend's own fix names `yard cache add`; here the sandbox is what to retry.
      throw new OperationError(error.message, {
        why: error.why,
        fix: `check the url and your access to it (git ls-remote -- ${repo.url}), then run yard sandbox create ${name} again`,
        cause: error,
      })
    }

    let cachePath = added.path
    let {submodules} = added
    if (added.action !== 'cloned') {
      const fetched = await cache.fetch(root, repo.url, {onDemand: true, ...lfs})
      cachePath = fetched.path
      submodules = fetched.submodules ?? submodules
      if (fetched.stale) {
        stale[repo.slot] = staleNote(fetched.key, fetched.staleSince, fetched.error)
        context.warn(`warning: ${stale[repo.slot]}; the sandbox uses the cached objects`)
      }
    }

    // The spec the pod is made from carries them (mounts, attach). Those without a cache were
    // warned about by the cache backend; attach leaves them uninitialised.
    const usable = (submodules ?? []).filter((submodule) => submodule.present)
    if (usable.length > 0) repo.submodules = usable.map(({url, key}) => ({url, key}))
    if (repo.ref === null) {
      await requireDefaultBranch(context, cachePath, repo)
    } else {
      await requireRef(context, cachePath, repo, stale[repo.slot])
    }

    await refuseDefaultBranch(context, cachePath, repo, sandbox)
  }

  return stale
}

/**
 * `/work/<slot>/default` is a clone of the cache, on the branch the cache's `HEAD` names; git
 * keeps a branch checked out in one worktree only, so `--branch` of that name would fail in the
 * pod (git worktree add: "already checked out"), after the pod was taken or played: refused here.
 * @throws InputError (exit 2) naming the sandbox, the slot and the branch.
 */
async function refuseDefaultBranch(
  context: YardContext,
  cachePath: string,
  repo: SandboxRepo,
  sandbox: {name: string; branch: string},
): Promise<void> {
  const head = await context.runner.git(['symbolic-ref', '--quiet', '--short', 'HEAD'], {
    cwd: cachePath,
    allowFailure: true,
  })
  if (head.exitCode !== 0 || head.stdout.trim() !== sandbox.branch) return
  throw new InputError(
    `the branch ${sandbox.branch} cannot be the branch worktree of sandbox ${sandbox.name}: it is the default branch of ${repo.url}`,
    {
      why: `/work/${repo.slot}/default of every sandbox is checked out on ${sandbox.branch}, and git checks a branch out in one worktree only`,
      fix: `choose another branch (e.g. --branch wt/${sandbox.name}; --repo ${repo.url}#${sandbox.branch} bases it on ${sandbox.branch}), then run yard sandbox create ${sandbox.name} again`,
    },
  )
}

/** The cache's branches for messages: at most ten named, then how many more. */
async function branchList(context: YardContext, cachePath: string): Promise<{branches: string[]; shown: string}> {
  const listed = await context.runner.git(['for-each-ref', '--format=%(refname:short)', 'refs/heads'], {
    cwd: cachePath,
    allowFailure: true,
  })
  const branches = listed.stdout.split('\n').filter(Boolean)
  return {
    branches,
    shown:
      branches.length > 10
        ? `${branches.slice(0, 10).join(', ')} and ${branches.length - 10} more`
        : branches.join(', '),
  }
}

/**
 * Without `#REF` the worktrees are cut from the default branch (`origin/HEAD` in the pod, the
 * bare cache's `HEAD`): an origin whose HEAD names a branch that does not exist would fail only
 * after the pod started, so it is refused here.
 * @throws InputError (exit 2) naming the missing branch and suggesting `URL#BRANCH` with the branches there are.
 */
async function requireDefaultBranch(context: YardContext, cachePath: string, repo: SandboxRepo): Promise<void> {
  if (
    (
      await context.runner.git(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], {
        cwd: cachePath,
        allowFailure: true,
      })
    ).exitCode === 0
  )
    return
  const head = (
    await context.runner.git(['symbolic-ref', '--quiet', 'HEAD'], {cwd: cachePath, allowFailure: true})
  ).stdout.trim()
  const {branches, shown} = await branchList(context, cachePath)
  throw new InputError(
    `${repo.url} has no default branch: its HEAD names ${head === '' ? 'nothing' : head.replace(/^refs\/heads\//, '')}, which does not exist`,
    {
      why: `a sandbox cuts its worktrees from the default branch when --repo has no #BRANCH, and the origin's HEAD (cached in ${cachePath}) points to a branch it does not have${branches.length > 0 ? `; its branches are ${shown}` : ', and it has no branches'}`,
      fix:
        branches.length > 0
          ? `name the branch: --repo ${repo.url}#${branches.includes('main') ? 'main' : branches[0]} (or fix the origin's HEAD), then run yard sandbox create again`
          : 'push a branch to the repository first, then run yard sandbox create again',
    },
  )
}

/**
 * Checks that `repo.ref` is a branch, tag or commit of the bare cache at `cachePath` (what attach
 * cuts the worktree from: `origin/<ref>`, else the ref as given).
 * @throws InputError (exit 2) naming the ref and the branches the cache has.
 */
async function requireRef(
  context: YardContext,
  cachePath: string,
  repo: SandboxRepo,
  staleWhy: string | undefined,
): Promise<void> {
  const ref = repo.ref!
  const candidates = [
    `${ref}^{commit}`,
    ...(ref.startsWith('origin/') ? [`refs/heads/${ref.slice('origin/'.length)}^{commit}`] : []),
  ]
  for (const candidate of candidates) {
    if (
      (await context.runner.git(['rev-parse', '--verify', '--quiet', candidate], {cwd: cachePath, allowFailure: true}))
        .exitCode === 0
    )
      return
  }

  const {branches, shown} = await branchList(context, cachePath)
  throw new InputError(`the ref "${ref}" of --repo ${repo.url}#${ref} is not in ${repo.url}`, {
    why: `it is no branch, tag or commit of the cache ${cachePath}${branches.length > 0 ? `, whose branches are ${shown}` : ', which has no branches'}${staleWhy ? ` (${staleWhy})` : ''}`,
    fix: `name one of them after "#" (or drop "#${ref}" for the default branch), then run yard sandbox create again`,
  })
}

/** The host user's git `user.name` / `user.email`, as git reads them in the main checkout. */
async function hostGitIdentity(context: YardContext, mainPath: string): Promise<{name?: string; email?: string}> {
  // One git call for both keys; the last value of a key wins, as `git config KEY` answers.
  const result = await context.runner.git(['config', '--null', '--get-regexp', String.raw`^user\.(name|email)$`], {
    cwd: mainPath,
    allowFailure: true,
  })
  const found: {name?: string; email?: string} = {}
  if (result.exitCode !== 0) return found
  for (const entry of result.stdout.split('\0')) {
    const newline = entry.indexOf('\n')
    if (newline === -1) continue
    const value = entry.slice(newline + 1).trim() || undefined
    if (entry.slice(0, newline) === 'user.name') found.name = value
    else found.email = value
  }

  return found
}

/**
 * `yard sandbox attach NAME [--branch BRANCH]` (DESIGN.md §5.2): idempotent; default branch
 * `wt/<name>`. Every attach starts from the remote's now (the design's fetch "on demand before
 * every attach"): on podman each local cache is fetched first; on a cluster the backend asks the
 * pod's node for a fetch and waits (bounded). A failed fetch goes on with what the cache holds,
 * warning that it is stale and since when (`stale` per slot). Then `default/` fetches from the
 * cache inside the pod, so the branch's base is the new one.
 * @throws InputError (exit 2) for an invalid branch, an unknown sandbox or a directory clash.
 */
export async function attachSandbox(
  context: YardContext,
  backends: Backends,
  options: {name: string; branch?: string; runtime?: string},
): Promise<SandboxAttachResult & {name: string; stale: Record<string, string>}> {
  const branch = checkSandboxBranch(options.branch ?? `wt/${validateName(options.name, 'sandbox name')}`)
  const session = await openSandboxes(context, backends, options.runtime)
  requireValidBranchName(branch)
  const {sandbox} = await requireSandbox(context, session, options.name)
  const stale =
    sandbox.runtime === 'kubernetes' ? {} : await fetchLocalCaches(context, backends, session, sandbox.spec.repos)
  const attached = warnSubmodules(
    context,
    sandbox.name,
    await session.backend.attach(sandbox, {
      branch,
      gitIdentity: await hostGitIdentity(context, session.workspace.mainPath),
      fetchThroughSeconds: session.workspace.config.cache['fetch-through-seconds'],
    }),
  )
  for (const note of Object.values(attached.stale ?? {}))
    context.warn(`warning: ${note}; the sandbox uses the cached objects`)
  return {name: sandbox.name, ...attached, stale: {...stale, ...attached.stale}}
}

/**
 * An on-demand fetch of each repository's local cache (podman: the pod mounts this machine's
 * caches); a failure warns and is returned per slot, the cache staying as it is.
 */
async function fetchLocalCaches(
  context: YardContext,
  backends: Backends,
  session: SandboxSession,
  repos: SandboxRepo[],
): Promise<Record<string, string>> {
  const {cache, root} = await openSandboxCache(context, backends, session.workspace)
  const stale: Record<string, string> = {}
  const byKey = new Map<string, string>()
  for (const repo of repos) {
    if (!byKey.has(repo.key)) {
      const fetched = await cache.fetch(root, repo.url, {onDemand: true})
      byKey.set(repo.key, fetched.stale ? staleNote(fetched.key, fetched.staleSince, fetched.error) : '')
      if (fetched.stale) context.warn(`warning: ${byKey.get(repo.key)}; the sandbox uses the cached objects`)
    }

    if (byKey.get(repo.key)) stale[repo.slot] = byKey.get(repo.key)!
  }

  return stale
}

/**
 * A push url that is a path on this host names nothing inside the pod, so `git push` there fails:
 * said at create, with what works instead (DESIGN.md §5.2).
 */
function warnUnpushable(context: YardContext, name: string, repos: readonly SandboxRepo[], branch: string): void {
  for (const [index, repo] of repos.entries()) {
    if (repoIdentity(repo.url).scheme !== 'local') continue
    const slot = index === 0 ? '' : ` --slot ${repo.slot}`
    context.warn(
      `warning: ${repo.url} is a path on this host, which the sandbox pod cannot push to; bring its commits here with \`yard sandbox pull ${name}/${branch}${slot}\` (or mount a remote the pod can reach)`,
    )
  }
}

/** Warns once per submodule attach left uninitialised (the rest of the sandbox is whole). */
function warnSubmodules(context: YardContext, name: string, attached: SandboxAttachResult): SandboxAttachResult {
  for (const failure of attached.slots.flatMap((slot) => slot.submodules?.failed ?? [])) {
    context.warn(`warning: the submodule ${failure.path} of sandbox ${name} was left uninitialised: ${failure.why}`)
  }

  return attached
}
