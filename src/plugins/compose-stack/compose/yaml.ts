/**
 * YAML as Compose reads it (compose specification, "Fragments" and "Merge and override"):
 * anchors and aliases, merge keys (`<<: *defaults`, `<<: [*a, *b]`, YAML 1.1 style), several
 * documents in one file (merged in order, as compose-go's loader does), and the `!reset` /
 * `!override` tags, whose key paths are returned so the merge can apply them.
 */
import {type Alias, type Document, isAlias, isMap, isScalar, isSeq, type Node, parseAllDocuments, type YAMLMap} from 'yaml'

import {InputError} from '../../../core/errors.js'
import {isMapping, keyPath, type Mapping} from './types.js'

/** One YAML document of a compose file, as plain data. */
export interface ComposeDocument {
  value: Mapping
  /** Key paths tagged `!reset`: removed from what this document is merged onto. */
  resets: string[][]
  /** Key paths tagged `!override`: replace, instead of merge with, what they are merged onto. */
  overrides: string[][]
}

/** compose-go caps alias expansion the same way, against "billion laughs" documents. */
const MAX_NODE_VISITS = 100_000

/**
 * Parses a compose file's text into its documents (empty documents are skipped).
 * @throws InputError naming the file, line and column of a YAML error, or of a top level that
 *   is not a mapping.
 */
export function parseComposeYaml(text: string, file: string): ComposeDocument[] {
  const documents = parseAllDocuments(text, {merge: true, prettyErrors: true})
  if (!Array.isArray(documents)) return []
  const result: ComposeDocument[] = []
  for (const document of documents) {
    const error = document.errors[0]
    if (error) {
      const at = error.linePos ? `:${error.linePos[0].line}:${error.linePos[0].col}` : ''
      throw new InputError(`${file}${at}: ${error.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')}`, {
        why: 'the compose file is not valid YAML',
        fix: `correct ${file}`,
      })
    }
    if (document.contents === null) continue
    const converter = new Converter(document, file)
    const value = converter.convert(document.contents, [])
    if (value === null || value === undefined) continue
    if (!isMapping(value)) {
      throw new InputError(`${file}: the top level is not a mapping`, {
        why: 'a compose file is a mapping of services, networks, volumes, …',
        fix: `correct ${file}`,
      })
    }
    result.push({value, resets: converter.resets, overrides: converter.overrides})
  }
  return result
}

const RESET = Symbol('reset')

class Converter {
  readonly resets: string[][] = []
  readonly overrides: string[][] = []
  private visits = 0
  private readonly aliasStack = new Set<Node>()
  /** Each alias's anchored node, found in one pass (the library's Alias.resolve walks the whole document per alias). */
  private readonly targets = new Map<Alias, Node>()

  constructor(document: Document, private readonly file: string) {
    const anchors = new Map<string, Node>()
    // Document order: an alias refers to the closest anchor of its name before it (YAML 1.2 §3.2.2.2).
    const walk = (node: unknown): void => {
      if (isAlias(node)) {
        const target = anchors.get(node.source)
        if (target) this.targets.set(node, target)
        return
      }
      if (!isScalar(node) && !isMap(node) && !isSeq(node)) return
      if (node.anchor) anchors.set(node.anchor, node)
      if (isSeq(node)) for (const item of node.items) walk(item)
      if (isMap(node)) {
        for (const pair of node.items) {
          walk(pair.key)
          walk(pair.value)
        }
      }
    }
    walk(document.contents)
  }

  convert(node: unknown, path: string[]): unknown {
    if (++this.visits > MAX_NODE_VISITS) {
      throw new InputError(`${this.file}: too many nodes after alias expansion (over ${MAX_NODE_VISITS})`, {
        why: 'aliases expand into a document too large to be a compose file',
        fix: `simplify the anchors of ${this.file}`,
      })
    }
    if (isAlias(node)) return this.convertAlias(node, path)
    if (!isScalar(node) && !isMap(node) && !isSeq(node)) return null
    if (node.tag === '!reset') {
      this.resets.push(path)
      return RESET
    }
    if (node.tag === '!override') this.overrides.push(path)
    if (isScalar(node)) {
      // Compose's Go YAML reads a plain 0755 as octal (strconv base 0), as file modes are written; YAML 1.2 core says decimal.
      if (node.type === 'PLAIN' && typeof node.source === 'string' && /^[-+]?0[0-7]+$/.test(node.source)) return Number.parseInt(node.source, 8)
      return node.value ?? null
    }
    if (isSeq(node)) {
      const items: unknown[] = []
      node.items.forEach((item, index) => {
        const value = this.convert(item, [...path, String(index)])
        if (value !== RESET) items.push(value)
      })
      return items
    }
    return this.convertMap(node, path)
  }

  private convertAlias(node: Alias, path: string[]): unknown {
    const target = this.targets.get(node)
    if (!target) throw this.error(path, `unknown alias *${node.source}`)
    if (this.aliasStack.has(target)) throw this.error(path, `alias *${node.source} refers to itself`)
    this.aliasStack.add(target)
    try {
      return this.convert(target, path)
    } finally {
      this.aliasStack.delete(target)
    }
  }

  /** Merge keys: explicit keys win over merged ones, earlier merge sources over later ones (YAML 1.1 merge). */
  private convertMap(node: YAMLMap, path: string[]): Mapping {
    const explicit: Mapping = {}
    const merged: Mapping = {}
    for (const pair of node.items) {
      if (isMergeKey(pair.key)) {
        const sources = isSeq(pair.value) ? pair.value.items : [pair.value]
        for (const source of sources) {
          const value = this.convert(source, path)
          if (value === RESET || value === null) continue
          if (!isMapping(value)) throw this.error(path, 'a merge key (<<) must refer to a mapping')
          for (const [name, item] of Object.entries(value)) if (!(name in merged)) merged[name] = item
        }
        continue
      }
      const key = this.keyOf(pair.key, path)
      const value = this.convert(pair.value, [...path, key])
      if (value !== RESET) explicit[key] = value
    }
    return Object.assign(merged, explicit)
  }

  private keyOf(key: unknown, path: string[]): string {
    if (isAlias(key)) return this.keyOf(this.targets.get(key), path)
    if (key === null || key === undefined) return ''
    if (isScalar(key)) return key.value === null ? '' : String(key.value)
    throw this.error(path, 'a mapping key must be a scalar')
  }

  private error(path: string[], message: string): InputError {
    return new InputError(`${this.file}: ${path.length > 0 ? `${keyPath(path)}: ` : ''}${message}`, {
      why: 'Compose cannot read this YAML',
      fix: `correct ${this.file}`,
    })
  }
}

/** With `merge: true` the parser marks `<<` with a symbol; a quoted '<<' is an ordinary key. */
function isMergeKey(key: unknown): boolean {
  return isScalar(key) && (typeof key.value === 'symbol' || (key.value === '<<' && key.type === 'PLAIN'))
}
