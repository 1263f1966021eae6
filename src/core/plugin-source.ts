/**
 * Where `yard plugins install` takes a plugin from, and the question asked before installing
 * code from a path or a git url (DESIGN.md §7, Appendix B). Installing a plugin runs its code
 * whenever yard runs: yard says so once, and asks before a path or a git url (an npm name is the
 * ordinary case; `yard plugins link`, a developer's own checkout, never asks).
 */
import {existsSync, statSync} from 'node:fs'
import os from 'node:os'
import path from 'node:path'

import {InputError, RefusedError} from './errors.js'

export type PluginSourceKind = 'npm' | 'path' | 'git'

/** One argument of `yard plugins install`, classified. */
export interface PluginSource {
  /** The argument as the user gave it. */
  given: string
  kind: PluginSourceKind
  /** What the installer gets: `file:<absolute path>` for a path, else the argument unchanged. */
  spec: string
  /** For messages: "the directory /x/y", "the git repository u", "the npm package n". */
  description: string
}

const GIT_PREFIXES = ['git+', 'git://', 'git@', 'ssh://', 'github:', 'gitlab:', 'bitbucket:', 'http://', 'https://']
const PATH_PREFIXES = ['./', '../', '/', '~/', 'file:']
/** `owner/repo`: the installer reads it as a GitHub repository when no such path exists. */
const REPOSITORY_SLUG = /^[\w.-]+\/[\w.-]+$/

/**
 * Classifies one argument: a path (it starts like one, or names an existing file or directory
 * relative to `cwd`), a git url (a git scheme, `git@host:`, `.git` at the end, an http url, or an
 * `owner/repo` slug that is no path), else an npm package name (`name`, `@scope/name`, with an
 * optional `@tag`).
 * @throws InputError (exit 2) for a path that does not exist, naming the absolute path.
 */
export function classifyPluginSource(given: string, cwd: string): PluginSource {
  const looksLikePath = PATH_PREFIXES.some((prefix) => given.startsWith(prefix)) || given === '.' || given === '..'
  const candidate = resolvePath(given, cwd)
  const isScoped = given.startsWith('@')
  if (looksLikePath || (!isScoped && existsSync(candidate))) {
    if (!existsSync(candidate)) {
      throw new InputError(`cannot install a plugin from ${candidate}: no such file or directory`, {
        why: `${given} is read as a path, relative to ${cwd}`,
        fix: 'give the directory of the plugin package (the one holding its package.json), or an npm name or git url',
      })
    }
    if (statSync(candidate).isDirectory() && !existsSync(path.join(candidate, 'package.json'))) {
      throw new InputError(`${candidate} is not a plugin package: it has no package.json`, {
        fix: 'give the plugin package\'s own directory (docs/plugins.md shows its layout)',
      })
    }
    return {given, kind: 'path', spec: `file:${candidate}`, description: `the local path ${candidate}`}
  }
  if (GIT_PREFIXES.some((prefix) => given.startsWith(prefix)) || given.endsWith('.git') || (!isScoped && REPOSITORY_SLUG.test(given))) {
    return {given, kind: 'git', spec: given, description: `the git repository ${given}`}
  }
  return {given, kind: 'npm', spec: given, description: `the npm package ${given}`}
}

function resolvePath(given: string, cwd: string): string {
  const withoutScheme = given.startsWith('file:') ? given.slice('file:'.length).replace(/^\/\/(?=\/)/, '') : given
  const expanded = withoutScheme === '~' || withoutScheme.startsWith('~/') ? path.join(os.homedir(), withoutScheme.slice(1)) : withoutScheme
  return path.resolve(cwd, expanded)
}

/** The sentence said once per `yard plugins install`. */
export const PLUGIN_CODE_NOTE = 'note: a plugin is code that runs with your permissions every time yard runs; install only what you trust.'

export interface InstallConsent {
  /** `--yes`: do not ask. */
  yes: boolean
  /** A question can be asked: stdin and stderr are terminals. */
  interactive: boolean
  /** Asks a yes/no question; resolves true for yes. */
  ask: (question: string) => Promise<boolean>
  /** Where the note goes (stderr). */
  note: (text: string) => void
}

/**
 * Says once that plugins run code, then, when any source is a path or a git url and `--yes` was
 * not given, asks once for all of them.
 * @throws RefusedError (exit 3) when the answer is no, or when there is no terminal to ask on;
 *   it names the sources and the two ways on (`--yes`, `yard plugins link`). Nothing is installed.
 */
export async function consentToInstall(sources: PluginSource[], consent: InstallConsent): Promise<void> {
  consent.note(PLUGIN_CODE_NOTE)
  const unvetted = sources.filter((source) => source.kind !== 'npm')
  if (unvetted.length === 0 || consent.yes) return
  const what = unvetted.map((source) => source.description).join(', ')
  const fix = `run again with --yes if you trust ${unvetted.length === 1 ? 'it' : 'them'}; for a checkout of your own, \`yard plugins link PATH\` does not ask`
  if (!consent.interactive) {
    throw new RefusedError(`refused to install from ${what} without confirmation`, {
      why: 'installing runs the plugin\'s code, and there is no terminal to ask on',
      fix,
    })
  }
  if (!(await consent.ask(`Install and run code from ${what}?`))) {
    throw new RefusedError(`refused: nothing installed from ${what}`, {why: 'the answer was no', fix})
  }
}
