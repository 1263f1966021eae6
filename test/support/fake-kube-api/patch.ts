/**
 * The patch formats of a PATCH request, by Content-Type (Kubernetes docs, "Update API Objects in
 * Place Using kubectl patch"):
 * - `application/merge-patch+json` — RFC 7386: objects merge, null deletes, arrays replace;
 * - `application/strategic-merge-patch+json` — applied here as a merge patch: maps merge the
 *   same way; lists with a patch merge key (containers by name…) are replaced whole, not merged,
 *   and `$patch` directives are refused (a simplification: yard does not send them);
 * - `application/json-patch+json` — RFC 6902: add, remove, replace, move, copy, test.
 */

/** A patch the server cannot apply: answered with `code` and this message. */
export class PatchError extends Error {
  constructor(
    readonly code: 400 | 415 | 422,
    message: string,
  ) {
    super(message)
  }
}

export const MERGE_PATCH = 'application/merge-patch+json'
export const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json'
export const JSON_PATCH = 'application/json-patch+json'

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * Applies `patch` (already parsed JSON) of `contentType` to a copy of `target`.
 * @throws PatchError 415 for another content type (server-side apply included), 400 for a
 *   malformed patch, 422 for a failed JSON-patch `test` or a missing path.
 */
export function applyPatch(
  target: Record<string, unknown>,
  patch: unknown,
  contentType: string,
): Record<string, unknown> {
  const type = contentType.split(';', 1)[0].trim()
  if (type === MERGE_PATCH || type === STRATEGIC_MERGE_PATCH) {
    if (!isObject(patch)) throw new PatchError(400, 'a merge patch must be a JSON object')
    if (type === STRATEGIC_MERGE_PATCH && JSON.stringify(patch).includes('"$patch"'))
      throw new PatchError(400, 'the fake API server does not apply $patch directives')
    return mergePatch(target, patch) as Record<string, unknown>
  }

  if (type === JSON_PATCH) {
    if (!Array.isArray(patch)) throw new PatchError(400, 'a JSON patch must be an array of operations')
    let document: unknown = structuredClone(target)
    for (const operation of patch) document = applyOperation(document, operation)
    if (!isObject(document)) throw new PatchError(422, 'the patched document is not an object')
    return document
  }

  throw new PatchError(
    415,
    `the body of the request was in an unknown format - accepted media types include: ${JSON_PATCH}, ${MERGE_PATCH}, ${STRATEGIC_MERGE_PATCH}`,
  )
}

/** RFC 7386 MergePatch(target, patch). */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch)
  const result: Record<string, unknown> = isObject(target) ? structuredClone(target) : {}
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key]
    else result[key] = mergePatch(result[key], value)
  }

  return result
}

function pointer(path: unknown): string[] {
  if (typeof path !== 'string' || (path !== '' && !path.startsWith('/')))
    throw new PatchError(400, `invalid JSON pointer ${JSON.stringify(path)}`)
  return path === ''
    ? []
    : path
        .slice(1)
        .split('/')
        .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'))
}

function parentOf(document: unknown, tokens: string[], path: string): {parent: any; key: string} {
  let parent: any = document
  for (const token of tokens.slice(0, -1)) {
    parent = Array.isArray(parent) ? parent[Number(token)] : isObject(parent) ? parent[token] : undefined
    if (parent === undefined) throw new PatchError(422, `jsonpatch: path ${path} does not exist`)
  }

  return {parent, key: tokens.at(-1)!}
}

function read(document: unknown, path: string): unknown {
  let value: any = document
  for (const token of pointer(path)) {
    value = Array.isArray(value) ? value[Number(token)] : isObject(value) ? value[token] : undefined
    if (value === undefined) throw new PatchError(422, `jsonpatch: path ${path} does not exist`)
  }

  return value
}

function add(document: unknown, path: string, value: unknown): unknown {
  const tokens = pointer(path)
  if (tokens.length === 0) return structuredClone(value)
  const {parent, key} = parentOf(document, tokens, path)
  if (Array.isArray(parent)) {
    const index = key === '-' ? parent.length : Number(key)
    if (!Number.isInteger(index) || index < 0 || index > parent.length)
      throw new PatchError(422, `jsonpatch: index out of range at ${path}`)
    parent.splice(index, 0, structuredClone(value))
  } else if (isObject(parent)) parent[key] = structuredClone(value)
  else throw new PatchError(422, `jsonpatch: path ${path} does not exist`)
  return document
}

function remove(document: unknown, path: string): unknown {
  read(document, path)
  const {parent, key} = parentOf(document, pointer(path), path)
  if (Array.isArray(parent)) parent.splice(Number(key), 1)
  else delete parent[key]
  return document
}

function applyOperation(document: unknown, operation: unknown): unknown {
  if (!isObject(operation) || typeof operation.op !== 'string')
    throw new PatchError(400, 'a JSON patch operation needs "op" and "path"')
  const path = operation.path as string
  switch (operation.op) {
    case 'add': {
      return add(document, path, operation.value)
    }

    case 'remove': {
      return remove(document, path)
    }

    case 'replace': {
      return add(remove(document, path), path, operation.value)
    }

    case 'move': {
      const value = read(document, operation.from as string)
      return add(remove(document, operation.from as string), path, value)
    }

    case 'copy': {
      return add(document, path, read(document, operation.from as string))
    }

    case 'test': {
      if (JSON.stringify(read(document, path)) !== JSON.stringify(operation.value))
        throw new PatchError(422, `jsonpatch: test failed at ${path}`)
      return document
    }

    default: {
      throw new PatchError(400, `unknown JSON patch operation "${operation.op}"`)
    }
  }
}
