/**
 * `yard init` (DESIGN.md §4.1): writes a commented `yard.toml` in the main checkout and adds
 * `yard.local.toml` and `.yard/` to its `.gitignore`.
 */
import {constants, promises as fs} from 'node:fs'
import path from 'node:path'

import type {YardContext} from '../kernel/context.js'

import {InputError, OperationError, RefusedError} from '../../sdk/errors.js'
import {prefixFromDirectory, validatePrefix} from '../identity/identity.js'
import {atomicWrite} from '../kernel/atomic-write.js'
import {repositoryRoot} from '../workspace/bare-layout.js'
import {findMainCheckout} from '../workspace/workspace.js'
import {composePortExamples, type PortExample} from './init-ports.js'

export const YARD_TOML = 'yard.toml'
/** What `yard init` adds to the main checkout's `.gitignore`: personal config, per-checkout state. */
export const GITIGNORE_ENTRIES: readonly string[] = ['yard.local.toml', '.yard/']

export interface InitOptions {
  /** `[project] prefix`; validated (DESIGN.md §3.1). Absent: the default stays commented out. */
  prefix?: string
  /** Replace an existing yard.toml. */
  force?: boolean
}

export interface InitResult {
  /** The yard.toml written (absolute). */
  path: string
  mainPath: string
  gitignore: {path: string; added: string[]}
}

/** A TOML basic string for a comment's example value (control characters dropped). */
const quote = (text: string) => JSON.stringify(text.replaceAll(/[\u0000-\u001F\u007F]/g, ''))

/**
 * The commented `yard.toml`: every table of DESIGN.md §3.2 that belongs in a shared file, keys
 * kebab-case, defaults commented out. `prefix` given → written as a value.
 */
export function yardTomlTemplate(options: {
  mainDirectoryName: string
  prefix?: string
  portExamples?: readonly PortExample[]
}): string {
  const defaultPrefix = prefixFromDirectory(options.mainDirectoryName)
  const examples = options.portExamples ?? []
  const portLines =
    examples.length > 0
      ? `# Not needed: yard moves the host ports the compose file publishes itself (docs/stacks.md).
# To choose a worktree's port yourself, set the file's own variables here; main gets the base,
# a worktree base + its offset (1..89), so keep bases at least 90 apart.
${examples.map((example) => `# ${example.key} = ${example.base}`).join('\n')}`
      : `# Environment variable = base port. Main gets the base, a worktree base + its offset (1..89),
# so keep bases at least 90 apart. Compose files use them as \${APP_PORT}. Not needed for
# literal ports: yard moves those per worktree itself (docs/stacks.md).
# APP_PORT = 3000
# DB_PORT = 5432`
  const prefixLine =
    options.prefix === undefined ? `# prefix = ${quote(defaultPrefix)}` : `prefix = ${quote(options.prefix)}`
  return `# yard.toml: yard's settings for this repository, shared through git.
# Personal overrides go in yard.local.toml (gitignored, main checkout only); environment
# variables override both. \`yard config\` shows every value and where it comes from.
# Commented-out keys show the default or an example. Keys are kebab-case.

[project]
# Short name of the project: compose projects and sandboxes are <prefix>-<name>.
# a-z, 0-9 and inner '-', at most 22 characters. Default: the main checkout's directory name
# as a slug. Env: YARD_PREFIX.
${prefixLine}

[worktrees]
# Where worktrees go, relative to the main checkout. Default: <main checkout>-worktrees.
# Env: YARD_WORKTREES_ROOT.
# root = ${quote(`../${options.mainDirectoryName}-worktrees`)}
# What new branches start from. Default: origin/HEAD, then origin/main, main, origin/master,
# master. Env: YARD_WORKTREE_BASE.
# base = "origin/main"
# Where \`yard worktree remove\` archives agent transcripts (.yard/transcripts/): each
# worktree's go to <this>/<prefix>/<name>/. Default: <state dir>/transcripts.
# Env: YARD_TRANSCRIPTS_ARCHIVE.
# transcripts-archive = "/srv/yard/transcripts"

[ports]
${portLines}

[stack]
# Compose files, relative to the checkout. Default: the first that exists of compose.yaml,
# compose.yml, docker-compose.yaml, docker-compose.yml (none: the checkout has no stack).
# files = ["compose.yaml"]
# "auto" (the first that answers), "podman compose", "podman-compose", "docker compose" or
# "docker-compose". Env: YARD_STACK_PROVIDER.
# provider = "auto"
# Compose profiles to enable besides COMPOSE_PROFILES.
# profiles = ["debug"]
# A worktree's external: true volumes and networks: "refuse", "per-checkout" (its own, empty)
# or "shared" (every checkout uses the same).
# external = "refuse"
# Services that may keep network_mode: host in a worktree (shared by every checkout).
# allow-shared = ["agent"]

[box]
# Image of the dev container (\`yard box up\`, \`yard exec\`). Default: yard's own local image
# (sh, git and core utilities), built on first use.
# image = "localhost/my-dev-image:latest"

[cache]
# Bare git caches that sandboxes share read-only. Default: <state dir>/caches.
# Env: YARD_CACHE_ROOT.
# root = "/var/cache/yard"

[cluster]
# Where sandboxes run: "podman" (\`podman kube play\` on this machine) or "kubernetes".
# runtime = "podman"
# kubectl context and namespace for the kubernetes runtime. Default context: the current one.
# Env: YARD_KUBE_CONTEXT, YARD_NAMESPACE.
# context = "my-cluster"
# namespace = "yard"
# Image of the sandbox pods. Default: yard's own local image.
# image = "registry.example.com/team/dev:latest"
`
}

const normalise = (line: string) => line.trim().replace(/^\//, '').replace(/\/$/, '')

/**
 * Appends each of `entries` that `.gitignore` does not already list (also as `/entry` or without
 * the trailing `/`); keeps the existing content and line endings, adds a missing final newline
 * first. Atomic (temp file + rename), keeping the file's mode.
 * @returns the entries added, in order.
 */
export async function addToGitignore(file: string, entries: readonly string[]): Promise<string[]> {
  const existing = await fs.readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return ''
    throw error
  })
  const present = new Set(existing.split(/\r?\n/).map(normalise))
  const added = entries.filter((entry) => !present.has(normalise(entry)))
  if (added.length === 0) return []
  const eol = existing.includes('\r\n') ? '\r\n' : '\n'
  const separator = existing === '' || existing.endsWith('\n') ? '' : eol
  await atomicWrite(file, `${existing}${separator}${added.join(eol)}${eol}`)
  return added
}

/**
 * Writes the main checkout's yard.toml and updates its .gitignore (DESIGN.md §4.1).
 * @throws InputError (exit 2) for an invalid prefix (before anything else) or outside a git
 *   repository; RefusedError (exit 3) when yard.toml exists and `force` is not set.
 */
export async function initProject(context: YardContext, options: InitOptions = {}): Promise<InitResult> {
  if (options.prefix !== undefined) validatePrefix(options.prefix, '--prefix')
  const {mainPath} = await findMainCheckout(context)
  const file = path.join(mainPath, YARD_TOML)
  const gitignore = path.join(mainPath, '.gitignore')
  // Every refusal before the first write, so a failure leaves nothing half-done.
  await expectRegularFileOrNothing(file)
  await expectRegularFileOrNothing(gitignore)
  await expectWritable(mainPath)
  const text = yardTomlTemplate({
    mainDirectoryName: path.basename(repositoryRoot(mainPath)),
    prefix: options.prefix,
    portExamples: composePortExamples(mainPath),
  })
  try {
    await atomicWrite(file, text, {replace: options.force === true})
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw writeFailure(file, error)
    throw new RefusedError(`${file} already exists`, {
      why: "yard init does not overwrite a project's settings",
      fix: 'edit it (`yard config` shows the effective values), or run `yard init --force` to replace it with the commented template',
    })
  }

  const added = await addToGitignore(gitignore, GITIGNORE_ENTRIES).catch((error: unknown) => {
    throw writeFailure(gitignore, error)
  })
  return {path: file, mainPath, gitignore: {path: gitignore, added}}
}

async function expectRegularFileOrNothing(file: string): Promise<void> {
  const stat = await fs.stat(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined
    throw writeFailure(file, error)
  })
  if (stat !== undefined && !stat.isFile()) {
    throw new InputError(`${file} is not a regular file`, {
      why: 'yard init writes yard.toml and appends to .gitignore, which must be files',
      fix: `move ${file} out of the way, then run yard init again`,
    })
  }
}

async function expectWritable(directory: string): Promise<void> {
  await fs.access(directory, constants.W_OK).catch((error: unknown) => {
    throw writeFailure(directory, error)
  })
}

function writeFailure(file: string, error: unknown): OperationError {
  const {code} = error as NodeJS.ErrnoException
  return new OperationError(`cannot write ${file}${code ? ` (${code})` : ''}`, {
    why: error instanceof Error ? error.message : String(error),
    fix: 'check that the directory is writable and the path is a regular file, then run yard init again',
  })
}
