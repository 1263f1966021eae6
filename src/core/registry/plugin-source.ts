/**
 * Where `yard plugins install` takes a plugin from, and the question asked before installing
 * code from anything but a plain registry name (DESIGN.md §7, Appendix B). Installing a plugin
 * runs its code whenever yard runs: yard says so once, and asks before a path, a git or tarball
 * url or an `npm:` alias (a registry name is the ordinary case; `yard plugins link`, a
 * developer's own checkout, never asks).
 */
import type npa from 'npm-package-arg'

import {existsSync, statSync} from 'node:fs'
import {createRequire} from 'node:module'
import os from 'node:os'
import path from 'node:path'

import {InputError, RefusedError} from '../../sdk/errors.js'

export type PluginSourceKind = 'npm' | 'path' | 'git' | 'tarball' | 'alias'

/** One argument of `yard plugins install`, classified. */
export interface PluginSource {
  /** The argument as the user gave it. */
  given: string
  kind: PluginSourceKind
  /** What the installer gets: `[name@]file:<absolute path>` for a path, else the argument unchanged. */
  spec: string
  /** For messages: "the local path /x/y", "the git repository u", "the npm package n". */
  description: string
}

/** Schemes npm-package-arg does not take but git does (`ssh://`): still a git url, so still asked about. */
const GIT_PREFIXES = ['git://', 'git@', 'ssh://']
const PATH_PREFIXES = ['./', '../', '/', '~/', 'file:']
/** npm-package-arg's types of a plain registry spec: `name`, `name@1.2.3`, `name@^1`, `name@next`. */
const REGISTRY_TYPES = new Set(['tag', 'version', 'range'])

/**
 * npm-package-arg, required on first use: every command imports the registry, and loading the
 * parser (hosted-git-info, lru-cache, validate-npm-package-name) costs ~30 ms of each start.
 */
const parseSpec = (given: string, cwd: string): npa.Result =>
  (createRequire(import.meta.url)('npm-package-arg') as typeof npa)(given, cwd)

/**
 * Classifies one argument: a path (it starts like one, or names an existing file or directory
 * relative to `cwd`), else whatever npm's own parser, npm-package-arg, makes of it — a plain
 * registry name (`name`, `@scope/name`, with an optional version, range or tag) is `npm`; `NAME@file:PATH`
 * is a path; git urls and `owner/repo` slugs are `git`; an http(s) url of a tarball is `tarball`;
 * `npm:` aliases (another package under this name) are `alias`.
 * @throws InputError (exit 2) for a path that does not exist, or a spec npm cannot parse.
 */
export function classifyPluginSource(given: string, cwd: string): PluginSource {
  const looksLikePath = PATH_PREFIXES.some((prefix) => given.startsWith(prefix)) || given === '.' || given === '..'
  const candidate = resolvePath(given, cwd)
  const isScoped = given.startsWith('@')
  if (looksLikePath || (!isScoped && existsSync(candidate)))
    return pathSource(given, cwd, candidate, `file:${candidate}`)
  let parsed: npa.Result
  try {
    parsed = parseSpec(given, cwd)
  } catch (error) {
    if (GIT_PREFIXES.some((prefix) => given.startsWith(prefix)))
      return {given, kind: 'git', spec: given, description: `the git repository ${given}`}
    throw new InputError(
      `cannot install a plugin from "${given}": ${(error as Error).message.replaceAll('\n', String.raw`\n`)}`,
      {
        why: 'npm reads a plugin as a package name (name, name@version, name@tag), a path, a git url or a tarball url',
        fix: 'check the spelling, e.g. `yard plugins install yard-backend-lima@2`',
      },
    )
  }

  if (REGISTRY_TYPES.has(parsed.type)) return {given, kind: 'npm', spec: given, description: `the npm package ${given}`}
  if (parsed.type === 'file' || parsed.type === 'directory') {
    const where = parsed.fetchSpec ?? candidate
    // The installer gets the directory itself, as for a plain path (the name is read from its package.json).
    return pathSource(given, cwd, where, `file:${where}`)
  }

  if (parsed.type === 'git') return {given, kind: 'git', spec: given, description: `the git repository ${given}`}
  // `npm:evil` alone names no alias: the package installs under its own name.
  if (parsed.type === 'alias')
    return {
      given,
      kind: 'alias',
      spec: given,
      description: `the npm package ${(parsed as npa.AliasResult).subSpec.raw}${parsed.name ? ` under the name ${parsed.name}` : ' (an npm: alias)'}`,
    }
  return {given, kind: 'tarball', spec: given, description: `the package at ${parsed.fetchSpec ?? given}`}
}

/**
 * A path source, checked: it exists, and a directory holds a package.json.
 * @throws InputError (exit 2) naming the absolute path.
 */
function pathSource(given: string, cwd: string, candidate: string, spec: string): PluginSource {
  if (!existsSync(candidate)) {
    throw new InputError(`cannot install a plugin from ${candidate}: no such file or directory`, {
      why: `${given} is read as a path, relative to ${cwd}`,
      fix: 'give the directory of the plugin package (the one holding its package.json), or an npm name or git url',
    })
  }

  if (statSync(candidate).isDirectory() && !existsSync(path.join(candidate, 'package.json'))) {
    throw new InputError(`${candidate} is not a plugin package: it has no package.json`, {
      fix: "give the plugin package's own directory (docs/plugins.md shows its layout)",
    })
  }

  return {given, kind: 'path', spec, description: `the local path ${candidate}`}
}

function resolvePath(given: string, cwd: string): string {
  const withoutScheme = given.startsWith('file:') ? given.slice('file:'.length).replace(/^\/\/(?=\/)/, '') : given
  const expanded =
    withoutScheme === '~' || withoutScheme.startsWith('~/')
      ? path.join(os.homedir(), withoutScheme.slice(1))
      : withoutScheme
  return path.resolve(cwd, expanded)
}

/** The sentence said once per `yard plugins install`. */
export const PLUGIN_CODE_NOTE =
  'note: a plugin is code that runs with your permissions every time yard runs; install only what you trust.'

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
 * Says once that plugins run code, then, when any source is not a plain registry name (a path, a
 * git url, a tarball url, an `npm:` alias) and `--yes` was not given, asks once for all of them.
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
      why: "installing runs the plugin's code, and there is no terminal to ask on",
      fix,
    })
  }

  if (!(await consent.ask(`Install and run code from ${what}?`))) {
    throw new RefusedError(`refused: nothing installed from ${what}`, {why: 'the answer was no', fix})
  }
}
