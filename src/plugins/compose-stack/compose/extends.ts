/**
 * `extends:` (compose specification, "services" → "extends"; compose-go `loader/extends.go`):
 * a service is its base service — from the same file, or from `file:` (relative to the
 * directory the extending file's paths resolve against) — with itself merged on top by the
 * merge rules (`merge.ts`). Chains are followed to the end; a cycle is an error. The base from
 * another file has its relative paths resolved against that file's directory first, and is
 * interpolated with the same environment. `!reset`/`!override` in the extending service apply
 * to what it inherits.
 */
import path from 'node:path'

import type {LoadContext} from './loader.js'

import {InputError, RefusedError} from '../../../sdk/errors.js'
import {interpolateDocument} from './interpolate-document.js'
import {applyResets, mergeValue} from './merge.js'
import {absolutePath, resolvePaths} from './paths.js'
import {deepClone, isMapping, type Mapping} from './types.js'
import {validateDocument} from './validate.js'

/**
 * The longest `extends` chain yard follows: real projects chain two or three services; a
 * longer chain is a generated or broken file, and following it would exhaust the stack.
 */
export const MAX_EXTENDS_DEPTH = 64

interface Origin {
  file: string
  /** What the file's relative paths (and `extends.file`) resolve against. */
  workingDir: string
}

interface LoadedBase {
  services: Mapping
  resets: string[][]
}

/**
 * Resolves the `extends` of every service of one document's model, in place.
 * @throws InputError for a missing base service or file, a cycle, or a malformed `extends`.
 */
export function applyExtends(model: Mapping, file: string, context: LoadContext, resets: string[][]): void {
  if (model.services === undefined || model.services === null) return
  if (!isMapping(model.services)) throw new InputError(`${file}: services must be a mapping`, {fix: `correct ${file}`})
  const resolver = new ExtendsResolver(context)
  const origin = {file, workingDir: context.workingDir}
  for (const name of Object.keys(model.services))
    model.services[name] = resolver.extend(name, model.services, origin, [], resets)
}

class ExtendsResolver {
  private readonly bases = new Map<string, LoadedBase>()

  constructor(private readonly context: LoadContext) {}

  extend(name: string, services: Mapping, origin: Origin, chain: string[], resets: string[][]): unknown {
    const service = services[name]
    if (!isMapping(service) || service.extends === undefined || service.extends === null) return service
    const {ref, file} = parseExtends(service.extends, name, origin.file)
    let base: LoadedBase = {services, resets}
    let baseOrigin = origin
    if (file !== undefined) {
      const absolute = absolutePath(file, origin.workingDir, this.context.session.home)
      base = this.load(absolute, name, origin.file)
      baseOrigin = {file: absolute, workingDir: path.dirname(absolute)}
    }

    if (!(ref in base.services)) {
      throw new InputError(
        `${origin.file}: cannot extend service "${name}": service "${ref}" not found${file === undefined ? '' : ` in ${baseOrigin.file}`}`,
        {
          fix: `correct services.${name}.extends in ${origin.file}`,
        },
      )
    }

    const here = `${origin.file}#${name}`
    const link = `${baseOrigin.file}#${ref}`
    if (link === here || chain.includes(link)) {
      const cycle = [...chain, here, link].map((entry) => entry.replace('#', ': ')).join(' → ')
      throw new InputError(`extends cycle: ${cycle}`, {
        why: 'a service cannot extend itself, directly or through other services',
        fix: `remove one extends of the cycle in ${origin.file}`,
      })
    }

    if (chain.length >= MAX_EXTENDS_DEPTH) {
      throw new InputError(
        `${origin.file}: services.${name}.extends: the extends chain is longer than ${MAX_EXTENDS_DEPTH} services`,
        {
          why: `yard follows extends chains of at most ${MAX_EXTENDS_DEPTH} links; it starts at ${chain[0].replace('#', ': ')}`,
          fix: `let the services extend a common base directly instead of each other, in ${origin.file}`,
        },
      )
    }

    const resolvedBase = this.extend(ref, base.services, baseOrigin, [...chain, here], base.resets)
    if (!isMapping(resolvedBase))
      throw new InputError(`${baseOrigin.file}: services.${ref} must be a mapping to be extended`, {
        fix: `correct ${baseOrigin.file}`,
      })
    const source = deepClone(resolvedBase)
    const own = resets.filter((reset) => reset[0] === 'services' && reset[1] === name)
    applyResets({services: {[name]: source}}, own)
    const merged = mergeValue(source, service, ['services', name], origin.file) as Mapping
    delete merged.extends
    services[name] = merged
    return merged
  }

  /** The services of an extended file: interpolated, merged over its documents, paths against its directory. */
  private load(file: string, name: string, from: string): LoadedBase {
    const cached = this.bases.get(file)
    if (cached) return cached
    let model: Mapping = {}
    const resets: string[][] = []
    let documents
    try {
      documents = this.context.session.documents(file)
    } catch (error) {
      if (error instanceof RefusedError) throw error
      throw new InputError(`${from}: cannot extend service "${name}": ${(error as Error).message}`, {
        fix: `correct services.${name}.extends.file in ${from}`,
        cause: error,
      })
    }

    for (const document of documents) {
      const value = interpolateDocument(document, file, this.context)
      validateDocument(value, file, (warning) => this.context.session.warn(warning))
      applyResets(model, [...document.resets, ...document.overrides])
      resets.push(...document.resets, ...document.overrides)
      model = mergeValue(model, value, [], file) as Mapping
    }

    resolvePaths(model, path.dirname(file), this.context.session.home)
    if (!isMapping(model.services))
      throw new InputError(`${from}: cannot extend service "${name}": ${file} has no services section`, {
        fix: `correct services.${name}.extends in ${from}`,
      })
    const loaded = {services: model.services, resets}
    this.bases.set(file, loaded)
    return loaded
  }
}

function parseExtends(value: unknown, name: string, file: string): {ref: string; file?: string} {
  if (typeof value === 'string') return {ref: value}
  if (
    isMapping(value) &&
    typeof value.service === 'string' &&
    (value.file === undefined || typeof value.file === 'string')
  ) {
    return {ref: value.service, file: value.file}
  }

  throw new InputError(`${file}: services.${name}.extends must be a service name or {service, file}`, {
    fix: `correct services.${name}.extends in ${file}`,
  })
}
