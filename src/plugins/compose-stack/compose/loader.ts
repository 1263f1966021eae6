/**
 * Loads compose files into one model the way compose-go's loader does (`loader/loader.go`,
 * loadYamlFile): each document of each file is interpolated and validated (`validate.ts`), then
 * its `include:` entries are loaded and imported, then its `!reset`/`!override` paths are
 * applied to what it overrides, then its services' `extends:` are resolved, then it is merged
 * onto the files before it; once
 * all are merged, relative paths and bare `environment` entries are resolved in the set's own
 * directory and environment. Every file is read and parsed once per resolution.
 */

import {applyExtends} from './extends.js'
import {applyIncludes} from './include.js'
import {interpolateDocument} from './interpolate-document.js'
import {applyResets, mergeValue} from './merge.js'
import {resolveBareEnvironment} from './normalize.js'
import {defaultBuildContexts, resolvePaths} from './paths.js'
import {readProjectFile} from './read.js'
import {deepClone, type Env, type Mapping, type ResolveWarning} from './types.js'
import {validateDocument} from './validate.js'
import {type ComposeDocument, parseComposeYaml} from './yaml.js'

/** State of one resolution: the files read (in order), their parsed documents, the warnings. */
export class ResolveSession {
  readonly files: string[] = []
  readonly warnings: ResolveWarning[] = []
  /** Included projects already loaded, by their files, project directory and environment (`include.ts`). */
  readonly included = new Map<string, Mapping>()
  private readonly parsed = new Map<string, ComposeDocument[]>()
  private readonly unset = new Set<string>()
  private readonly said = new Set<string>()

  constructor(
    readonly yardEnv: Env,
    readonly home: string,
  ) {}

  /** Records a warning once: a file reached by several paths (an include diamond) says it once. */
  warn(warning: ResolveWarning): void {
    const key = JSON.stringify([warning.kind, warning.file, warning.key, warning.message])
    if (this.said.has(key)) return
    this.said.add(key)
    this.warnings.push(warning)
  }

  /** compose-go warns once per variable that is unset and has no default. */
  unsetVariable(file: string, key: string, name: string): void {
    if (this.unset.has(name)) return
    this.unset.add(name)
    this.warn({
      kind: 'unset-variable',
      file,
      key,
      message: `the ${name} variable is not set; it is interpolated as an empty string (${file}: ${key})`,
    })
  }

  /**
   * The parsed documents of a compose file (not interpolated; callers get their own copy).
   * @throws InputError when the file cannot be read or is not valid YAML.
   */
  documents(file: string): ComposeDocument[] {
    let documents = this.parsed.get(file)
    if (documents === undefined) {
      const text = readProjectFile(file, 'compose file', `make ${file} a regular file, or correct the reference to it`)
      this.files.push(file)
      documents = parseComposeYaml(text, file)
      this.parsed.set(file, documents)
    }

    return documents.map((document) => ({...document, value: deepClone(document.value)}))
  }
}

/** Where a set of files is loaded: relative paths (and `include`/`extends` files) resolve against `workingDir`. */
export interface LoadContext {
  session: ResolveSession
  workingDir: string
  /** The interpolation environment. */
  env: Record<string, string>
  /** The files whose `include:` led here, for cycles. */
  included: string[]
}

/**
 * Loads and merges `files` (absolute) as one project whose relative paths are against
 * `context.workingDir` (compose specification, "Merge and override": paths of every file are
 * relative to the first file's directory).
 * @throws InputError for unreadable or invalid files, failed interpolation, merge conflicts,
 *   include cycles and broken `extends`.
 */
export function loadProjectFiles(files: readonly string[], context: LoadContext): Mapping {
  let model: Mapping = {}
  for (const file of files) {
    for (const document of context.session.documents(file)) {
      const value = interpolateDocument(document, file, context)
      validateDocument(value, file, (warning) => context.session.warn(warning))
      const resets = [...document.resets, ...document.overrides]
      applyIncludes(value, file, context, loadProjectFiles, resets)
      applyResets(model, resets)
      applyExtends(value, file, context, resets)
      delete value.version
      model = mergeValue(model, value, [], file) as Mapping
    }
  }

  defaultBuildContexts(model)
  resolvePaths(model, context.workingDir, context.session.home)
  resolveBareEnvironment(model, context.env)
  return model
}
