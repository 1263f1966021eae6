/**
 * What yard reads from a checkout's compose files (compose spec): service names, their published
 * ports as written, how each declares labels, and the top-level volumes and networks. Enough to
 * write the label override, to tell a running project from a partial one, and to find fixed
 * host ports; the provider does the real merge.
 */
import {readFileSync} from 'node:fs'
import {parse} from 'yaml'

import {InputError} from '../../core/errors.js'
import {shellQuote} from '../../core/shell.js'

export type LabelsForm = 'list' | 'map'

export interface ComposeService {
  name: string
  /** `ports` entries of every file, in file order, as written (strings, numbers or objects). */
  ports: unknown[]
  /** How the files write this service's labels (podman-compose cannot merge a list with a map). */
  labelsForm?: LabelsForm
  /** True when it has no `networks`, or lists `default`: it joins `<project>_default`. */
  usesDefaultNetwork: boolean
}

export interface ComposeResource {
  name: string
  /** Some file declares it without a body (`data:`): an override cannot add labels there under podman-compose. */
  bare: boolean
  /** `external: true`: not the project's; it gets no labels. */
  external: boolean
  labelsForm?: LabelsForm
}

export interface ComposeModel {
  services: ComposeService[]
  volumes: ComposeResource[]
  networks: ComposeResource[]
}

type Mapping = Record<string, unknown>

const isMapping = (value: unknown): value is Mapping => value !== null && typeof value === 'object' && !Array.isArray(value)
const labelsForm = (value: unknown): LabelsForm | undefined => (Array.isArray(value) ? 'list' : isMapping(value) ? 'map' : undefined)

function readCompose(file: string): Mapping {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    throw new InputError(`cannot read compose file ${file}: ${(error as Error).message}`, {fix: 'check the path in [stack] files and the file\'s permissions'})
  }
  let parsed: unknown
  try {
    parsed = parse(text)
  } catch (error) {
    throw new InputError(`${file} is not valid YAML: ${(error as Error).message.split('\n')[0]}`, {
      why: 'yard reads the compose files to label everything the stack creates',
      fix: `correct ${file} (\`podman-compose -f ${shellQuote(file)} config\` shows what a provider makes of it)`,
    })
  }
  if (!isMapping(parsed)) {
    throw new InputError(`${file} is not a compose file: its top level is not a mapping`, {fix: `give ${file} a top-level \`services:\` mapping`})
  }
  return parsed
}

function mergeResources(into: Map<string, ComposeResource>, section: unknown): void {
  if (!isMapping(section)) return
  for (const [name, body] of Object.entries(section)) {
    const known = into.get(name) ?? {name, bare: false, external: false}
    if (body === null || body === undefined) known.bare = true
    else if (isMapping(body)) {
      if (body.external !== undefined && body.external !== false) known.external = true
      const form = labelsForm(body.labels)
      if (form) known.labelsForm ??= form
    }
    into.set(name, known)
  }
}

/**
 * Reads and combines compose files (in `-f` order).
 * @throws InputError (exit 2) for an unreadable file, invalid YAML or a top level that is not a mapping.
 */
export function loadComposeModel(files: readonly string[]): ComposeModel {
  const services = new Map<string, ComposeService>()
  const volumes = new Map<string, ComposeResource>()
  const networks = new Map<string, ComposeResource>()
  for (const file of files) {
    const compose = readCompose(file)
    if (isMapping(compose.services)) {
      for (const [name, body] of Object.entries(compose.services)) {
        const service = services.get(name) ?? {name, ports: [], usesDefaultNetwork: true}
        if (isMapping(body)) {
          if (Array.isArray(body.ports)) service.ports.push(...body.ports)
          const form = labelsForm(body.labels)
          if (form) service.labelsForm ??= form
          if (body.networks !== undefined) {
            const names = Array.isArray(body.networks) ? body.networks.map(String) : isMapping(body.networks) ? Object.keys(body.networks) : []
            service.usesDefaultNetwork = names.includes('default')
          }
        }
        services.set(name, service)
      }
    }
    mergeResources(volumes, compose.volumes)
    mergeResources(networks, compose.networks)
  }
  return {services: [...services.values()], volumes: [...volumes.values()], networks: [...networks.values()]}
}
