/**
 * Label and field selectors as the API server reads them from `?labelSelector=` and
 * `?fieldSelector=` (Kubernetes docs, "Labels and Selectors", "Field Selectors").
 */

type Requirement = {key: string; op: 'in' | 'notin'; values: string[]} | {key: string; op: 'exists' | '!exists'}

/** A bad selector: the server answers 400 BadRequest with this message. */
export class SelectorError extends Error {}

/**
 * Parses a label selector: comma-separated `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`,
 * `k`, `!k`. Returns a predicate over an object's labels.
 * @throws SelectorError for anything else.
 */
export function parseLabelSelector(text: string): (labels: Record<string, string>) => boolean {
  const requirements: Requirement[] = []
  for (const part of splitTopLevel(text)) {
    const term = part.trim()
    if (term === '') continue
    let match: RegExpExecArray | null
    if ((match = /^([^\s!=,()]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(term))) {
      requirements.push({
        key: match[1],
        op: match[2] as 'in' | 'notin',
        values: match[3].split(',').map((value) => value.trim()),
      })
    } else if ((match = /^([^\s!=,()]+)\s*(==|=|!=)\s*([^\s!=,()]*)$/.exec(term))) {
      requirements.push({key: match[1], op: match[2] === '!=' ? 'notin' : 'in', values: [match[3]]})
    } else if ((match = /^!\s*([^\s!=,()]+)$/.exec(term))) {
      requirements.push({key: match[1], op: '!exists'})
    } else if ((match = /^([^\s!=,()]+)$/.exec(term))) {
      requirements.push({key: match[1], op: 'exists'})
    } else {
      throw new SelectorError(`unable to parse requirement: found '${term}', expected: in, notin, =, ==, !=, gt, lt`)
    }
  }

  return (labels) =>
    // eslint-disable-next-line array-callback-return -- the switch returns for every operator
    requirements.every((requirement) => {
      const has = Object.hasOwn(labels, requirement.key)
      switch (requirement.op) {
        case 'exists': {
          return has
        }

        case '!exists': {
          return !has
        }

        case 'in': {
          return has && requirement.values.includes(labels[requirement.key])
        }

        case 'notin': {
          return !has || !requirement.values.includes(labels[requirement.key])
        }
      }
    })
}

/** Fields every resource supports, plus the few per-kind ones yard's code may use. */
const FIELDS: Record<string, (object: Record<string, any>) => string | undefined> = {
  'metadata.name': (object) => object.metadata?.name,
  'metadata.namespace': (object) => object.metadata?.namespace,
  'spec.nodeName': (object) => object.spec?.nodeName ?? '',
  'status.phase': (object) => object.status?.phase ?? '',
  'involvedObject.name': (object) => object.involvedObject?.name,
  'involvedObject.kind': (object) => object.involvedObject?.kind,
  'involvedObject.uid': (object) => object.involvedObject?.uid,
  'involvedObject.namespace': (object) => object.involvedObject?.namespace,
}

/** Which fields a kind supports beyond `metadata.name` and `metadata.namespace`. */
const KIND_FIELDS: Record<string, string[]> = {
  Pod: ['spec.nodeName', 'status.phase'],
  Event: ['involvedObject.name', 'involvedObject.kind', 'involvedObject.uid', 'involvedObject.namespace'],
}

/**
 * Parses a field selector for objects of `kind`: comma-separated `field=value`, `field==value`,
 * `field!=value`.
 * @throws SelectorError for a field the kind does not support ("field label not supported").
 */
export function parseFieldSelector(text: string, kind: string): (object: Record<string, unknown>) => boolean {
  const terms: Array<{field: string; value: string; negate: boolean}> = []
  for (const part of text.split(',')) {
    const term = part.trim()
    if (term === '') continue
    const match = /^([^=!]+?)\s*(==|=|!=)\s*(.*)$/.exec(term)
    if (!match) throw new SelectorError(`invalid selector: '${text}'; can't understand '${term}'`)
    const field = match[1].trim()
    if (field !== 'metadata.name' && field !== 'metadata.namespace' && !(KIND_FIELDS[kind] ?? []).includes(field)) {
      throw new SelectorError(`field label not supported: ${field}`)
    }

    terms.push({field, value: match[3], negate: match[2] === '!='})
  }

  return (object) => terms.every((term) => (FIELDS[term.field](object) === term.value) !== term.negate)
}

function splitTopLevel(text: string): string[] {
  const parts: string[] = []
  let depth = 0
  let current = ''
  for (const char of text) {
    if (char === '(') depth++
    if (char === ')') depth--
    if (char === ',' && depth === 0) {
      parts.push(current)
      current = ''
    } else current += char
  }

  parts.push(current)
  return parts
}
