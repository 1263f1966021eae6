/**
 * `include:` (compose specification, "Include"; compose-go `loader/include.go`): each entry —
 * a path, or `{path: string | string[], project_directory, env_file: string | string[]}` — is
 * loaded as a project of its own: its files merged, its relative paths against its project
 * directory (default: the directory of its first file), interpolated with the including
 * project's environment plus its env files (default: `.env` of its project directory) for what
 * that leaves unset. Paths in an entry are relative to the including project's directory. Its
 * services, networks, volumes, secrets, configs and models are then copied into the including
 * model; a name both define is merged, the includer's definition on top (as compose-go does;
 * its `!reset`/`!override` apply to the included one), with a warning unless the two are equal
 * (a file included along two paths). Includes nest, up to MAX_INCLUDE_DEPTH; a cycle is an
 * error. An included project is loaded once per resolution for its files, project directory and
 * environment, however many files include it.
 */
import {existsSync, realpathSync, statSync} from 'node:fs'
import path from 'node:path'
import {isDeepStrictEqual} from 'node:util'

import type {LoadContext} from './loader.js'

import {InputError} from '../../../sdk/errors.js'
import {readEnvFile} from './env-file.js'
import {addEnvFileValues} from './env.js'
import {applyResets, mergeValue} from './merge.js'
import {absolutePath} from './paths.js'
import {checkConfined} from './read.js'
import {deepClone, isMapping, type Mapping} from './types.js'

type Load = (files: readonly string[], context: LoadContext) => Mapping

interface IncludeEntry {
  paths: string[]
  projectDirectory: string
  envFiles: string[]
}

const RESOURCES = ['services', 'volumes', 'networks', 'secrets', 'configs', 'models'] as const

/** The deepest nesting of includes yard follows: real projects include one or two levels. */
export const MAX_INCLUDE_DEPTH = 32

/**
 * Loads the `include:` entries of one document's model and imports their resources into it, in
 * place (`include` is removed).
 * @throws InputError for a malformed entry, a missing env file, an include cycle, or any error of
 *   the included files.
 */
export function applyIncludes(
  model: Mapping,
  file: string,
  context: LoadContext,
  load: Load,
  resets: string[][] = [],
): void {
  const {include} = model
  delete model.include
  if (include === undefined || include === null) return
  if (!Array.isArray(include)) throw malformed(file, '`include` must be a list')
  for (const raw of include) {
    const entry = parseEntry(raw, file, context)
    const chain = [...context.included, file]
    const real = chain.map(realPath)
    const again = entry.paths.find((included) => real.includes(realPath(included)))
    if (again !== undefined) {
      const start = real.indexOf(realPath(again))
      throw new InputError(`include cycle: ${[...chain.slice(start), again].join(' → ')}`, {
        why: 'a compose file cannot include itself, directly or through other files',
        fix: `remove one include of the cycle in ${file}`,
      })
    }

    if (chain.length > MAX_INCLUDE_DEPTH) {
      throw new InputError(`${file}: includes nest more than ${MAX_INCLUDE_DEPTH} levels deep`, {
        why: `yard follows at most ${MAX_INCLUDE_DEPTH} levels of include; the chain starts at ${chain[0]}`,
        fix: `include the files from fewer levels, e.g. list them in one include of ${chain[0]}`,
      })
    }

    const env = {...context.env}
    for (const envFile of entry.envFiles) {
      addEnvFileValues(env, readEnvFile(envFile, env), envFile, context.session.yardEnv, (warning) =>
        context.session.warn(warning),
      )
    }

    const key = JSON.stringify([
      entry.paths.map(realPath),
      entry.projectDirectory,
      Object.entries(env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    ])
    let loaded = context.session.included.get(key)
    if (loaded === undefined) {
      loaded = load(entry.paths, {session: context.session, workingDir: entry.projectDirectory, env, included: chain})
      context.session.included.set(key, loaded)
    }

    // importResources merges into and resets what it imports: each includer gets its own copy.
    importResources(deepClone(loaded), model, file, context, resets)
  }
}

/** An include of a remote resource (docker compose's remote includes: `oci://…`, a git url `https://…`, `git@…:`). */
const REMOTE_INCLUDE = /^(?:[a-z][a-z0-9+.-]*:\/\/|git@[^:/]+:)/i

function parseEntry(raw: unknown, file: string, context: LoadContext): IncludeEntry {
  const {workingDir, session} = context
  const entry = typeof raw === 'string' ? {path: raw} : raw
  if (!isMapping(entry)) throw malformed(file, 'an include entry is a path or a mapping with `path`')
  const list = (value: unknown, key: string): string[] => {
    if (value === undefined || value === null) return []
    const items = Array.isArray(value) ? value : [value]
    if (items.some((item) => !(typeof item === 'string')))
      throw malformed(file, `include ${key} must be a path or a list of paths`)
    return items
  }

  const remote = list(entry.path, 'path').find((item) => REMOTE_INCLUDE.test(item))
  if (remote !== undefined)
    throw new InputError(`${file}: include ${remote} is a remote resource, which yard does not fetch`, {
      why: 'docker compose can include from an OCI registry (oci://) or a git repository; yard renders only files on this host, so that every checkout renders the same bytes',
      fix: `fetch it yourself into the repository (or a path beside it) and include that path in ${file}`,
    })
  const paths = list(entry.path, 'path').map((item) => absolutePath(item, workingDir, session.home))
  if (paths.length === 0) throw malformed(file, 'an include entry needs `path`')
  for (const included of paths) {
    if (!existsSync(included)) {
      throw new InputError(`${file}: included compose file ${included} does not exist`, {
        fix: `create it, or correct include in ${file}`,
      })
    }
  }

  if (entry.project_directory !== undefined && typeof entry.project_directory !== 'string')
    throw malformed(file, 'include project_directory must be a path')
  const projectDirectory =
    typeof entry.project_directory === 'string'
      ? absolutePath(entry.project_directory, workingDir, session.home)
      : path.dirname(paths[0])
  let envFiles: string[]
  if (entry.env_file === undefined || entry.env_file === null) {
    const dotenv = path.join(projectDirectory, '.env')
    envFiles = existsSync(dotenv) && statSync(dotenv).isFile() ? [dotenv] : []
  } else {
    envFiles = list(entry.env_file, 'env_file')
      .filter((item) => item !== '/dev/null')
      .map((item) => absolutePath(item, workingDir, session.home))
    for (const envFile of envFiles) {
      checkConfined(envFile, 'env file')
      if (!existsSync(envFile) || !statSync(envFile).isFile()) {
        throw new InputError(`${file}: include env_file ${envFile} does not exist`, {
          fix: `create it, or correct include env_file in ${file}`,
        })
      }
    }
  }

  return {paths, projectDirectory, envFiles}
}

/** `resets`: the including document's `!reset`/`!override` paths, which apply to a definition it redefines. */
function importResources(
  imported: Mapping,
  model: Mapping,
  file: string,
  context: LoadContext,
  resets: string[][],
): void {
  for (const section of RESOURCES) {
    const from = imported[section]
    if (!isMapping(from)) continue
    const existing = model[section]
    const into: Mapping = isMapping(existing) ? existing : {}
    for (const [name, definition] of Object.entries(from)) {
      if (!(name in into)) {
        into[name] = definition
        continue
      }

      if (isDeepStrictEqual(into[name], definition)) continue
      context.session.warn({
        kind: 'include-conflict',
        file,
        key: `${section}.${name}`,
        message: `${section}.${name} of ${file} (or of an earlier include) is defined again by an included file; the definitions are merged, the including file's on top`,
      })
      applyResets(
        imported,
        resets.filter((reset) => reset[0] === section && reset[1] === name),
      )
      into[name] = mergeValue(from[name], into[name], [section, name], file)
    }

    model[section] = into
  }
}

/** The file's real path (symbolic links resolved), for cycles and the cache; the path itself when it has none. */
function realPath(file: string): string {
  try {
    return realpathSync(file)
  } catch {
    return file
  }
}

function malformed(file: string, message: string): InputError {
  return new InputError(`${file}: ${message}`, {
    why: 'compose specification, "Include"',
    fix: `correct include in ${file}`,
  })
}
