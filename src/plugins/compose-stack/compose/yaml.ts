/**
 * YAML as Compose reads it (compose specification, "Fragments" and "Merge and override"):
 * anchors and aliases, merge keys (`<<: *defaults`, `<<: [*a, *b]`, YAML 1.1 style), several
 * documents in one file (merged in order, as compose-go's loader does), and the `!reset` /
 * `!override` tags, whose key paths are returned so the merge can apply them.
 */
import {
  type Alias,
  type Document,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  type Node,
  parseAllDocuments,
  type YAMLMap,
} from 'yaml'

import {InputError} from '../../../sdk/errors.js'
import {isMapping, keyPath, type Mapping} from './types.js'

/** One YAML document of a compose file, as plain data. */
export interface ComposeDocument {
  value: Mapping
  /** Key paths tagged `!reset`: removed from what this document is merged onto. */
  resets: string[][]
  /** Key paths tagged `!override`: replace, instead of merge with, what they are merged onto. */
  overrides: string[][]
}

/**
 * Caps on a document after alias expansion, against "billion laughs" files (a few kilobytes
 * whose aliases expand to gigabytes): go-yaml, which Compose uses, refuses "excessive aliasing"
 * by a ratio of aliased to decoded nodes; yard counts what the expansion produces — nodes, and
 * characters of scalars (a 5 KB string aliased 100 000 times is 500 MB of rendered file with
 * few nodes). The largest public compose files expand to a few thousand nodes and well under a
 * megabyte, so these leave them two orders of magnitude of room. (The `yaml` package's own
 * `maxAliasCount` guards only its `toJS`, which this converter does not use.)
 */
export const MAX_NODE_VISITS = 100_000
export const MAX_EXPANDED_CHARACTERS = 16 * 1024 * 1024
/**
 * The deepest nesting of mappings and sequences yard reads: a compose file nests a handful of
 * levels (`services.web.deploy.resources.limits.cpus` is 6); recursion over deeper data would
 * exhaust the stack.
 */
export const MAX_NESTING = 64

/**
 * Parses a compose file's text into its documents (empty documents are skipped).
 * @throws InputError naming the file, line and column of a YAML error, or of a top level that
 *   is not a mapping.
 */
export function parseComposeYaml(text: string, file: string): ComposeDocument[] {
  let documents: ReturnType<typeof parseAllDocuments>
  try {
    // The parser's own duplicate-key check is quadratic in a mapping's size; convertMap checks in linear time.
    documents = parseAllDocuments(text, {merge: true, prettyErrors: true, uniqueKeys: false})
  } catch (error) {
    if (error instanceof RangeError) throw tooDeep(file)
    throw error
  }

  if (!Array.isArray(documents)) return []
  const result: ComposeDocument[] = []
  for (const document of documents) {
    const error = document.errors[0]
    if (error) {
      // The parser reports its own stack overflow on deeply nested flow collections as a YAML error.
      if (error.message.includes('Maximum call stack size exceeded')) throw tooDeep(file)
      const at = error.linePos ? `:${error.linePos[0].line}:${error.linePos[0].col}` : ''
      throw new InputError(
        `${file}${at}: ${error.message.split('\n', 1)[0].replace(/ at line \d+, column \d+:?$/, '')}`,
        {
          why: 'the compose file is not valid YAML',
          fix: `correct ${file}`,
        },
      )
    }

    if (document.contents === null) continue
    const converter = new Converter(document, file, text)
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
  private characters = 0
  private readonly aliasStack = new Set<Node>()
  /** Each alias's anchored node, found in one pass (the library's Alias.resolve walks the whole document per alias). */
  private readonly targets = new Map<Alias, Node>()

  constructor(
    document: Document,
    private readonly file: string,
    private readonly text: string,
  ) {
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
    if (++this.visits > MAX_NODE_VISITS) throw this.tooLarge(`more than ${MAX_NODE_VISITS} nodes`)
    if (path.length > MAX_NESTING) throw tooDeep(this.file, path)
    if (isAlias(node)) return this.convertAlias(node, path)
    if (!isScalar(node) && !isMap(node) && !isSeq(node)) return null
    if (node.tag === '!reset') {
      this.resets.push(path)
      return RESET
    }

    if (node.tag === '!override') this.overrides.push(path)
    if (isScalar(node)) {
      // Compose's Go YAML reads a plain 0755 as octal (strconv base 0), as file modes are written;
      // YAML 1.2 core says decimal.
      if (node.type === 'PLAIN' && typeof node.source === 'string' && /^[-+]?0[0-7]+$/.test(node.source))
        return Number.parseInt(node.source, 8)
      if (typeof node.value === 'string') {
        this.characters += node.value.length
        if (this.characters > MAX_EXPANDED_CHARACTERS)
          throw this.tooLarge(`more than ${MAX_EXPANDED_CHARACTERS} characters of text`)
      }

      return node.value ?? null
    }

    if (isSeq(node)) {
      const items: unknown[] = []
      for (const [index, item] of node.items.entries()) {
        const value = this.convert(item, [...path, String(index)])
        if (value !== RESET) items.push(value)
      }

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
      if (Object.hasOwn(explicit, key)) throw this.duplicate(pair.key, key, path)
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

  /**
   * A key given twice in one mapping (YAML 1.2 §3.2.1.1; go-yaml: "mapping key already defined"),
   * with its line and column.
   */
  private duplicate(node: unknown, key: string, path: string[]): InputError {
    const offset = isScalar(node) && node.range ? node.range[0] : undefined
    const before = offset === undefined ? undefined : this.text.slice(0, offset).split('\n')
    const at = before === undefined ? '' : `:${before.length}:${before.at(-1)!.length + 1}`
    return new InputError(
      `${this.file}${at}: ${path.length > 0 ? `${keyPath(path)}: ` : ''}the key ${JSON.stringify(key)} is defined twice`,
      {
        why: 'the keys of a YAML mapping must be unique; Compose refuses the file',
        fix: `keep one ${JSON.stringify(key)} in ${this.file}`,
      },
    )
  }

  private tooLarge(what: string): InputError {
    return new InputError(`${this.file}: its aliases expand to ${what}`, {
      why: 'aliases (*name) that repeat anchors which repeat aliases grow exponentially ("billion laughs"); no compose file needs this much, and rendering it would exhaust the memory',
      fix: `simplify the anchors and aliases of ${this.file}`,
    })
  }

  private error(path: string[], message: string): InputError {
    return new InputError(`${this.file}: ${path.length > 0 ? `${keyPath(path)}: ` : ''}${message}`, {
      why: 'Compose cannot read this YAML',
      fix: `correct ${this.file}`,
    })
  }
}

function tooDeep(file: string, path: readonly string[] = []): InputError {
  return new InputError(
    `${file}: ${path.length > 0 ? `${keyPath(path.slice(0, 8))}…: ` : ''}nested more than ${MAX_NESTING} levels deep`,
    {
      why: 'a compose file nests a handful of mappings and lists; data this deep cannot be a compose model',
      fix: `flatten the nesting in ${file}`,
    },
  )
}

/** With `merge: true` the parser marks `<<` with a symbol; a quoted '<<' is an ordinary key. */
function isMergeKey(key: unknown): boolean {
  return isScalar(key) && (typeof key.value === 'symbol' || (key.value === '<<' && key.type === 'PLAIN'))
}
