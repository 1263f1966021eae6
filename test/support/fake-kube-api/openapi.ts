/**
 * The part of a CustomResourceDefinition's `openAPIV3Schema` the fake API server enforces, as
 * the real one does for apiextensions.k8s.io/v1 (Kubernetes docs, "Extend the Kubernetes API
 * with CustomResourceDefinitions": "Specifying a structural schema", "Field pruning",
 * "Validation"): a structural check when a CRD is created, then validation and pruning of every
 * custom object against it.
 */

export interface OpenApiSchema {
  type?: string
  properties?: Record<string, OpenApiSchema>
  additionalProperties?: boolean | OpenApiSchema
  items?: OpenApiSchema
  required?: string[]
  enum?: unknown[]
  pattern?: string
  minLength?: number
  maxLength?: number
  minimum?: number
  maximum?: number
  minItems?: number
  maxItems?: number
  format?: string
  nullable?: boolean
  description?: string
  default?: unknown
  'x-kubernetes-preserve-unknown-fields'?: boolean
  'x-kubernetes-int-or-string'?: boolean
  'x-kubernetes-embedded-resource'?: boolean
  [keyword: string]: unknown
}

const ALLOWED_KEYWORDS = new Set([
  'type',
  'properties',
  'additionalProperties',
  'items',
  'required',
  'enum',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minProperties',
  'maxProperties',
  'multipleOf',
  'format',
  'nullable',
  'description',
  'title',
  'default',
  'example',
  'externalDocs',
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-int-or-string',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
])
const TYPES = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean'])

/**
 * Why `schema` is not structural, one line per violation with its path (empty: structural).
 * Rules: every node has a `type` (unless `x-kubernetes-int-or-string` or
 * `x-kubernetes-preserve-unknown-fields`); no `$ref`, no unknown keyword; `properties` and
 * `additionalProperties` not both; arrays have `items`; the root is an object whose `metadata`
 * may only restrict `name` and `generateName`.
 */
export function structuralViolations(schema: OpenApiSchema): string[] {
  const problems: string[] = []
  walkStructural(schema, '', problems)
  if (schema.type !== 'object') problems.push('type: Required value: must be object at the root')
  const metadata = schema.properties?.metadata
  if (metadata) {
    for (const key of Object.keys(metadata.properties ?? {})) {
      if (key !== 'name' && key !== 'generateName')
        problems.push(
          `properties[metadata].properties[${key}]: Forbidden: only name and generateName may be specified at the root`,
        )
    }
  }

  return problems
}

function walkStructural(schema: OpenApiSchema, at: string, problems: string[]): void {
  for (const key of Object.keys(schema)) {
    if (!ALLOWED_KEYWORDS.has(key))
      problems.push(`${at || '<root>'}: Forbidden: keyword ${key} is not allowed in a structural schema`)
  }

  const intOrString = schema['x-kubernetes-int-or-string'] === true
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true
  if (schema.type === undefined && !intOrString && !preserve)
    problems.push(`${at || '<root>'}.type: Required value: must not be empty for specified object fields`)
  if (schema.type !== undefined && !TYPES.has(schema.type))
    problems.push(`${at || '<root>'}.type: Unsupported value: "${schema.type}"`)
  if (schema.properties && schema.additionalProperties !== undefined && schema.additionalProperties !== false) {
    problems.push(`${at || '<root>'}: Forbidden: additionalProperties and properties are mutually exclusive`)
  }

  if (schema.type === 'array' && schema.items === undefined)
    problems.push(`${at || '<root>'}.items: Required value: must be specified for arrays`)
  for (const [name, child] of Object.entries(schema.properties ?? {}))
    walkStructural(child, `${at}.properties[${name}]`, problems)
  if (typeof schema.additionalProperties === 'object')
    walkStructural(schema.additionalProperties, `${at}.additionalProperties`, problems)
  if (schema.items) walkStructural(schema.items, `${at}.items`, problems)
}

/** One rejected field: its path as the API server writes it (`spec.url`) and why. */
export interface FieldProblem {
  field: string
  reason: 'FieldValueRequired' | 'FieldValueInvalid' | 'FieldValueNotSupported' | 'FieldValueTypeInvalid'
  message: string
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/

/**
 * Validates `value` against `schema` and prunes unknown fields in place (the server's default
 * for CRDs without `x-kubernetes-preserve-unknown-fields`). Returns the problems (empty: valid)
 * and the pruned paths.
 */
export function validateAndPrune(
  value: unknown,
  schema: OpenApiSchema,
  at = '',
): {problems: FieldProblem[]; pruned: string[]} {
  const problems: FieldProblem[] = []
  const pruned: string[] = []
  check(value, schema, at, problems, pruned)
  return {problems, pruned}
}

function describe(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value))
}

function typeOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number'
  return typeof value
}

function check(value: unknown, schema: OpenApiSchema, at: string, problems: FieldProblem[], pruned: string[]): void {
  const field = at || '<root>'
  if (value === null) {
    if (!schema.nullable)
      problems.push({
        field,
        reason: 'FieldValueTypeInvalid',
        message: `Invalid value: "null": ${field} in body must be of type ${schema.type ?? 'object'}: "null"`,
      })
    return
  }

  if (schema['x-kubernetes-int-or-string']) {
    if (typeof value !== 'string' && !Number.isInteger(value))
      problems.push({
        field,
        reason: 'FieldValueTypeInvalid',
        message: `Invalid value: ${describe(value)}: ${field} in body must be of type integer or string`,
      })
    return
  }

  const actual = typeOf(value)
  if (schema.type !== undefined && actual !== schema.type && !(schema.type === 'number' && actual === 'integer')) {
    problems.push({
      field,
      reason: 'FieldValueTypeInvalid',
      message: `Invalid value: "${actual}": ${field} in body must be of type ${schema.type}: "${actual}"`,
    })
    return
  }

  if (schema.enum && schema.enum.every((allowed) => !(JSON.stringify(allowed) === JSON.stringify(value)))) {
    problems.push({
      field,
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${describe(value)}: supported values: ${schema.enum.map(describe).join(', ')}`,
    })
  }

  if (typeof value === 'string') {
    if (schema.minLength !== undefined && value.length < schema.minLength)
      problems.push({
        field,
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${describe(value)}: ${field} in body should be at least ${schema.minLength} chars long`,
      })
    if (schema.maxLength !== undefined && value.length > schema.maxLength)
      problems.push({
        field,
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${describe(value)}: ${field} in body may not be longer than ${schema.maxLength}`,
      })
    if (schema.pattern !== undefined && !new RegExp(schema.pattern).test(value))
      problems.push({
        field,
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${describe(value)}: ${field} in body should match '${schema.pattern}'`,
      })
    if (schema.format === 'date-time' && !RFC3339.test(value))
      problems.push({
        field,
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${describe(value)}: ${field} in body must be of type date-time: ${describe(value)}`,
      })
  }

  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum)
      problems.push({
        field,
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${value}: ${field} in body should be greater than or equal to ${schema.minimum}`,
      })
    if (schema.maximum !== undefined && value > schema.maximum)
      problems.push({
        field,
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${value}: ${field} in body should be less than or equal to ${schema.maximum}`,
      })
  }

  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems)
      problems.push({
        field,
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${value.length}: ${field} in body should have at least ${schema.minItems} items`,
      })
    if (schema.maxItems !== undefined && value.length > schema.maxItems)
      problems.push({
        field,
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${value.length}: ${field} in body should have at most ${schema.maxItems} items`,
      })
    if (schema.items)
      for (const [index, item] of value.entries()) check(item, schema.items, `${at}[${index}]`, problems, pruned)
  }

  if (actual === 'object') {
    const object = value as Record<string, unknown>
    for (const key of schema.required ?? []) {
      if (!(key in object))
        problems.push({field: at ? `${at}.${key}` : key, reason: 'FieldValueRequired', message: 'Required value'})
    }

    for (const [key, child] of Object.entries(object)) {
      const path = at ? `${at}.${key}` : key
      const known =
        schema.properties?.[key] ??
        (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined)
      if (known) check(child, known, path, problems, pruned)
      else if (!schema['x-kubernetes-preserve-unknown-fields'] && schema.additionalProperties !== true) {
        delete object[key]
        pruned.push(path)
      }
    }
  }
}
