/**
 * Submodules of a new worktree (DESIGN.md §4.1), initialised from the objects main already has.
 *
 * Each submodule main has checked out (a git dir at `<main git dir>/modules/<name>`) is cloned
 * into the worktree by `git submodule update`, with `submodule.<name>.url` pointed for that one
 * command (`-c`) at main's git dir of it: the clone is local (hard links, no network), and a
 * recorded commit main has fetched but not checked out is fetched from there by id. The clone's
 * `origin` is then set back to the url git would have used (gitsubmodules(7): `submodule.<name>.url`
 * from `git submodule init`, relative urls resolved against the superproject's remote), so the
 * worktree's submodules fetch and push where main's do, and nested submodules (their relative urls
 * resolve against that url) are done the same way one level deeper. `protocol.file.allow=always`
 * is given only to these commands: git refuses local clones for submodules by default since 2.38.1.
 * When main's copy cannot give the recorded commit, the submodule's own url is tried, as
 * `git submodule update` would (that one may need the network).
 */
import {existsSync, promises as fs} from 'node:fs'
import path from 'node:path'

import type {YardContext} from '../kernel/context.js'

import {gitFailure} from './git-failure.js'

/** Deeper than this, submodules are left to `git submodule update --init --recursive`. */
const MAX_DEPTH = 8

export interface SubmoduleOutcome {
  /** Paths (relative to the worktree) of the submodules checked out, nested ones included. */
  initialised: string[]
  /** Those that failed (each was warned about, and left empty). */
  failed: string[]
}

/**
 * Initialises the submodules of `checkout` that main has checked out, recursively.
 * `sourceModules`: main's `modules` directory for this level (`<common dir>/modules` at the top).
 * Never throws for a submodule: a failure warns naming it and leaves its directory empty, as an
 * uninitialised submodule is.
 */
export async function initSubmodules(
  context: YardContext,
  checkout: string,
  sourceModules: string,
  prefix = '',
  depth = 0,
): Promise<SubmoduleOutcome> {
  const outcome: SubmoduleOutcome = {initialised: [], failed: []}
  if (depth > MAX_DEPTH || !existsSync(path.join(checkout, '.gitmodules'))) return outcome
  const git = async (args: string[], cwd = checkout) => context.runner.git(args, {cwd, allowFailure: true})
  const listed = await git([
    'config',
    '--file',
    '.gitmodules',
    '--null',
    '--get-regexp',
    String.raw`^submodule\..*\.path$`,
  ])
  for (const record of listed.stdout.split('\0')) {
    const newline = record.indexOf('\n')
    if (newline === -1) continue
    const name = record.slice('submodule.'.length, newline - '.path'.length)
    const subpath = record.slice(newline + 1)
    const source = path.join(sourceModules, name)
    // Only what main has checked out: a submodule main left uninitialised stays so here too.
    if (!existsSync(path.join(source, 'HEAD')) || subpath.startsWith('-') || path.isAbsolute(subpath)) continue
    const shown = prefix + subpath
    const fail = async (why: string) => {
      context.warn(
        `warning: submodule ${shown} was not initialised (${why}); the worktree has it empty — run \`git submodule update --init -- ${shown}\` in it`,
      )
      await emptySubmodule(context, checkout, name, subpath)
      outcome.failed.push(shown)
    }

    await git(['submodule', 'init', '--', subpath])
    const url = (await git(['config', '--get', `submodule.${name}.url`])).stdout.trim()
    let updated = await git([
      '-c',
      'protocol.file.allow=always',
      '-c',
      `submodule.${name}.url=${source}`,
      'submodule',
      'update',
      '--quiet',
      '--',
      subpath,
    ])
    if (updated.exitCode !== 0 && url !== '') {
      // main's copy lacks the recorded commit (or is broken): the submodule's own remote, as git would.
      await emptySubmodule(context, checkout, name, subpath)
      updated = await git(['submodule', 'update', '--quiet', '--', subpath])
    }

    if (updated.exitCode !== 0) {
      await fail(gitFailure(updated.stderr) || `exit code ${updated.exitCode}`)
      continue
    }

    const inside = path.join(checkout, subpath)
    if (url !== '') await git(['remote', 'set-url', 'origin', url], inside)
    outcome.initialised.push(shown)
    const nested = await initSubmodules(context, inside, path.join(source, 'modules'), `${shown}/`, depth + 1)
    outcome.initialised.push(...nested.initialised)
    outcome.failed.push(...nested.failed)
  }

  return outcome
}

/** Leaves a failed submodule as an uninitialised one is: an empty directory, no git dir of its own in the worktree. */
async function emptySubmodule(context: YardContext, checkout: string, name: string, subpath: string): Promise<void> {
  const gitDir = (
    await context.runner.git(['rev-parse', '--git-path', `modules/${name}`], {cwd: checkout, allowFailure: true})
  ).stdout.trim()
  if (gitDir !== '') await fs.rm(path.resolve(checkout, gitDir), {recursive: true, force: true})
  const inside = path.join(checkout, subpath)
  await fs.rm(inside, {recursive: true, force: true})
  await fs.mkdir(inside, {recursive: true})
}
